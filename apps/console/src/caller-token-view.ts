import { h } from './dom.js';
import { SAME_AS_ADMIN, adminToken, callerToken } from './tokens.js';

/**
 * The Tools view's "Caller token for Run" field (docs/console.md "Tools"): the token "Run"
 * sends to /mcp as `Authorization: Bearer …`, entered apart from the admin token of the page
 * header and never the same value. `changed` runs when the token Run sends changes (the
 * console then opens a new /mcp session: a session belongs to one caller).
 */
export function callerTokenForm(changed: () => void): HTMLElement {
  const input = h('input', {
    id: 'caller-token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'caller-token-hint caller-token-status',
  });
  const status = h('p', { id: 'caller-token-status', role: 'status', 'aria-live': 'polite' });
  const describe = (): void => {
    status.textContent =
      callerToken.get() === ''
        ? 'Run sends no token.'
        : 'Run sends the caller token you entered (not the admin token).';
  };
  const forget = h('button', { type: 'button', id: 'forget-caller-token' }, 'Forget caller token');
  const form = h(
    'form',
    { id: 'caller-token-form', class: 'token caller', autocomplete: 'off' },
    h('label', { for: 'caller-token' }, 'Caller token for Run'),
    input,
    h('button', { type: 'submit' }, 'Use for Run'),
    forget,
    h(
      'p',
      { class: 'hint', id: 'caller-token-hint' },
      'Sent to /mcp as "Authorization: Bearer …" when a tool runs, and passed on to upstreams ' +
        'with authorization passthrough. Use a token of the caller to test as; the admin ' +
        'token authorizes /admin only and is never sent here.',
    ),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    input.value = '';
    if (value !== '' && value === adminToken.get()) {
      status.textContent = SAME_AS_ADMIN;
      return;
    }
    callerToken.set(value);
    describe();
    changed();
  });
  forget.addEventListener('click', () => {
    callerToken.set('');
    describe();
    changed();
  });
  describe();
  return form;
}
