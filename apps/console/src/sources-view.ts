import type {
  AdminUpstreamsAnswer,
  ToolBundlesAnswer,
  UpstreamRecord,
  UpstreamsAnswer,
} from './api.js';
import type { AdminAccess } from './access.js';
import { h, patchKeyed, replace, when } from './dom.js';
import { bundleCard, upstreamCard, type CardActions } from './source-cards.js';

/**
 * The body of POST /admin/upstreams: the fields of a configured upstream
 * (docs/operations.md §15 "Routes").
 */
export interface Registration {
  readonly id: string;
  readonly url: string;
  readonly namePrefix?: string;
  readonly protocol: string;
  readonly enabled: boolean;
  readonly authorization: { readonly mode: string; readonly valueEnv?: string };
}

export interface SourcesActions extends CardActions {
  /** Resolves with the PENDING record, or rejects with the server's message (e.g. the 409). */
  register(registration: Registration): Promise<UpstreamRecord>;
}

export interface SourcesData {
  readonly bundles?: ToolBundlesAnswer;
  readonly upstreams?: UpstreamsAnswer;
  readonly admin?: AdminUpstreamsAnswer;
  readonly access: AdminAccess;
}

function redisText(data: SourcesData): string {
  const redis = data.bundles?.redis;
  if (redis === undefined) return 'unknown';
  if (!redis.configured) return 'not configured (each replica keeps its own copies)';
  if (redis.available === null) return 'configured, not used yet';
  return redis.available
    ? 'configured, available'
    : `configured, unavailable (${redis.lastFailureReason ?? 'unknown error'})`;
}

/**
 * The Sources view (docs/console.md "Sources"): a card per bundle and upstream, and the
 * registration form.
 */
export class SourcesView {
  private readonly summary = h('dl', { class: 'summary' });
  private readonly cards = h('div', { class: 'cards', id: 'source-cards' });
  private readonly formArea = h('section', {
    'aria-labelledby': 'register-title',
    class: 'register',
  });
  private readonly status = h('p', {
    id: 'register-status',
    role: 'status',
    'aria-live': 'polite',
  });
  private readonly form: HTMLFormElement;
  /** The id just registered: its state is announced until it leaves PENDING. */
  private watching?: string;
  private lastState?: string;

  constructor(
    root: HTMLElement,
    private readonly actions: SourcesActions,
  ) {
    this.form = this.buildForm();
    root.append(h('h2', {}, 'Sources'), this.summary, this.cards, this.formArea);
  }

  render(data: SourcesData): void {
    const catalog = data.bundles?.catalog;
    replace(
      this.summary,
      h('dt', {}, 'Catalog'),
      h(
        'dd',
        { 'data-field': 'catalog' },
        catalog === undefined
          ? 'unknown'
          : catalog.published
            ? `${catalog.toolCount} tools, published ${when(catalog.publishedAt)}`
            : 'not published yet',
        catalog?.lastRejectionReason
          ? ` — last merge rejected: ${catalog.lastRejectionReason}`
          : '',
      ),
      h('dt', {}, 'Redis'),
      h('dd', { 'data-field': 'redis' }, redisText(data)),
      h('dt', {}, 'Registered upstreams'),
      h(
        'dd',
        { 'data-field': 'storage' },
        data.admin === undefined
          ? 'unknown: /admin/upstreams did not answer (enter the admin token, or it is not enabled)'
          : data.admin.storage === 'redis'
            ? 'kept in Redis (shared by every replica, kept across restarts)'
            : 'kept in memory only (this replica; lost at restart)',
      ),
    );

    const writable = data.access.kind === 'writable';
    const cardActions = writable ? this.actions : undefined;
    const records = new Map((data.admin?.upstreams ?? []).map((r) => [r.id, r]));
    const pulls = new Map((data.upstreams?.upstreams ?? []).map((u) => [u.id, u]));
    const upstreamIds = [...new Set([...pulls.keys(), ...records.keys()])];
    patchKeyed(
      this.cards,
      [
        ...(data.bundles?.bundles ?? []).map((b) => bundleCard(b, cardActions)),
        ...upstreamIds.map((id) => upstreamCard(id, pulls.get(id), records.get(id), cardActions)),
      ],
      'data-source',
    );
    this.cards.setAttribute('aria-busy', 'false');

    if (writable) {
      if (!this.formArea.contains(this.form))
        replace(
          this.formArea,
          h('h2', { id: 'register-title' }, 'Register an upstream MCP server'),
          this.form,
          this.status,
        );
    } else {
      replace(
        this.formArea,
        h('h2', { id: 'register-title' }, 'Register an upstream MCP server'),
        h('p', { class: 'read-only', 'data-field': 'read-only' }, data.access.reason),
      );
    }
    this.announce(records);
  }

  private announce(records: ReadonlyMap<string, UpstreamRecord>): void {
    if (this.watching === undefined) return;
    const record = records.get(this.watching);
    if (record === undefined || record.state === this.lastState) return;
    this.lastState = record.state;
    this.status.textContent =
      record.state === 'FAILED'
        ? `${record.id} is FAILED: ${record.reason ?? 'no reason given'}`
        : record.state === 'ACTIVE'
          ? `${record.id} is ACTIVE${record.toolCount !== undefined ? ` (${record.toolCount} tools)` : ''}`
          : `${record.id} is ${record.state}`;
    if (record.state !== 'PENDING') this.watching = undefined;
  }

  private buildForm(): HTMLFormElement {
    const input = (
      id: string,
      label: string,
      attrs: Record<string, string | boolean>,
      hint?: string,
    ) =>
      h(
        'div',
        { class: 'arg' },
        h('label', { for: id }, label),
        h('input', { id, name: id, ...attrs, 'aria-describedby': hint ? `${id}-hint` : undefined }),
        hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null,
      );
    const select = (id: string, label: string, options: readonly string[]) =>
      h(
        'div',
        { class: 'arg' },
        h('label', { for: id }, label),
        h('select', { id, name: id }, ...options.map((o) => h('option', { value: o }, o))),
      );
    const form = h(
      'form',
      { id: 'register-form', novalidate: true },
      input(
        'reg-id',
        'Id',
        { required: true, autocomplete: 'off', pattern: '[A-Za-z0-9._-]{1,64}' },
        'Letters, digits, . _ -; at most 64.',
      ),
      input('reg-url', 'URL', {
        required: true,
        type: 'url',
        autocomplete: 'off',
        placeholder: 'https://mcp.example.com/mcp',
      }),
      input(
        'reg-prefix',
        'Name prefix',
        { autocomplete: 'off' },
        'Optional; the default is <id>__.',
      ),
      select('reg-protocol', 'Protocol', ['auto', '2025-11-25', '2026-07-28']),
      // passthrough is never accepted for a registration (docs/security.md): it would send every
      // caller's gateway token to the registered server
      select('reg-auth', 'Authorization', ['none', 'static']),
      input(
        'reg-env',
        'Secret env name (static)',
        { autocomplete: 'off' },
        'The name of the env variable that holds the credential, never the value.',
      ),
      h(
        'p',
        { class: 'toggle' },
        h('input', { type: 'checkbox', id: 'reg-enabled', checked: true }),
        h('label', { for: 'reg-enabled' }, ' Enabled'),
      ),
      h('button', { type: 'submit' }, 'Register'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit(form);
    });
    return form;
  }

  private async submit(form: HTMLFormElement): Promise<void> {
    const value = (id: string): string =>
      (form.querySelector(`#${id}`) as HTMLInputElement | HTMLSelectElement).value.trim();
    const id = value('reg-id');
    const url = value('reg-url');
    if (id === '' || url === '') {
      this.status.textContent = 'Id and URL are required.';
      return;
    }
    const mode = value('reg-auth');
    const registration: Registration = {
      id,
      url,
      ...(value('reg-prefix') !== '' ? { namePrefix: value('reg-prefix') } : {}),
      protocol: value('reg-protocol'),
      enabled: (form.querySelector('#reg-enabled') as HTMLInputElement).checked,
      authorization: mode === 'static' ? { mode, valueEnv: value('reg-env') } : { mode },
    };
    this.status.textContent = `Registering ${id}…`;
    try {
      const record = await this.actions.register(registration);
      this.watching = record.id;
      this.lastState = undefined;
      this.announce(new Map([[record.id, record]]));
      form.reset();
    } catch (err) {
      this.status.textContent = `Not registered: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
}
