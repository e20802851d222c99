import { READ_ONLY_NO_TOKEN, type AdminAccess } from './access.js';
import {
  ApiError,
  call,
  type AdminUpstreamsAnswer,
  type CatalogToolsAnswer,
  type ConsoleSettings,
  type HistoryAnswer,
  type ServersAnswer,
  type ToolBundlesAnswer,
  type UpstreamRecord,
  type UpstreamsAnswer,
} from './api.js';
import { callerTokenForm } from './caller-token-view.js';
import { byId } from './dom.js';
import { HistoryView } from './history-view.js';
import { McpClient } from './mcp-client.js';
import { SourcesView, type Registration } from './sources-view.js';
import { SAME_AS_CALLER, adminToken, callerToken } from './tokens.js';
import { ToolsView } from './tools-view.js';

/**
 * How often the console asks for fresh state, in ms: the page updates without reloading
 * (docs/console.md).
 */
const POLL_MS = 3000;
const VIEWS = ['sources', 'tools', 'history'] as const;
type ViewName = (typeof VIEWS)[number];

let settings: ConsoleSettings | undefined;
let client: McpClient | undefined;
let timer: number | undefined;

const actionStatus = byId('action-status');
const updated = byId('updated');
const problem = byId('problem');

function mcpUrl(s: ConsoleSettings): string | undefined {
  if (s.mcpUrl !== null) return s.mcpUrl;
  if (s.mcpPort === null) return undefined;
  return `${location.protocol}//${location.hostname}:${s.mcpPort}/mcp`;
}

/**
 * A new /mcp client (a new session) for "Run": it sends the caller token, never the admin
 * token (tokens.ts). Called again whenever the caller token changes.
 */
/** The virtual server picked under Tools: Run goes through its path (docs/operations.md §16). */
let server: string | undefined;

function newClient(): void {
  const base = settings === undefined ? undefined : mcpUrl(settings);
  const url =
    base === undefined || server === undefined
      ? base
      : `${base.replace(/\/+$/, '')}/servers/${encodeURIComponent(server)}`;
  client =
    url === undefined
      ? undefined
      : new McpClient(url, () => callerToken.get(), settings?.version ?? '0');
  byId('mcp-url').textContent = url ?? 'not known';
}

async function adminAction<T>(what: string, run: () => Promise<T>): Promise<T> {
  actionStatus.textContent = `${what}…`;
  try {
    const result = await run();
    actionStatus.textContent = `${what}: done.`;
    return result;
  } catch (err) {
    actionStatus.textContent = `${what} failed: ${err instanceof Error ? err.message : String(err)}`;
    throw err;
  } finally {
    void refresh();
  }
}

const sources = new SourcesView(byId('view-sources'), {
  register: (registration: Registration) =>
    call<UpstreamRecord>('/admin/upstreams', {
      method: 'POST',
      body: registration,
      token: adminToken.get(),
    }),
  setEnabled: (id, enabled) =>
    void adminAction(`${enabled ? 'Enabling' : 'Disabling'} ${id}`, () =>
      call(`/admin/upstreams/${encodeURIComponent(id)}`, {
        method: 'PATCH',
        body: { enabled },
        token: adminToken.get(),
      }),
    ).catch(() => undefined),
  approve: (sourceId, name, digest) =>
    void adminAction(`Approving ${name}`, () =>
      call(`/admin/reviews/${encodeURIComponent(sourceId)}/approve`, {
        method: 'POST',
        body: { tools: [{ name, digest }] },
        token: adminToken.get(),
      }),
    ).catch(() => undefined),
  remove: (id) => {
    if (!confirm(`Delete the registered upstream ${id}? Its tools leave the catalog.`)) return;
    void adminAction(`Deleting ${id}`, () =>
      call(`/admin/upstreams/${encodeURIComponent(id)}`, {
        method: 'DELETE',
        token: adminToken.get(),
      }),
    ).catch(() => undefined);
  },
});
const tools = new ToolsView(
  byId('view-tools'),
  () => client,
  callerTokenForm(() => newClient()),
  (picked) => {
    server = picked;
    newClient();
  },
);
const history = new HistoryView(byId('view-history'));

const NO_ADMIN_CONFIGURED: AdminAccess = {
  kind: 'read-only',
  reason:
    'Read-only: this gateway has no admin credential (set MCP_ADMIN_TOKEN, or use mcp.auth.mode jwt with the admin scope).',
};

/** Whether /admin answered without a token, asked once per admin token entered. */
let openProbe: { readonly token: string; readonly open: Promise<boolean> } | undefined;
/**
 * /admin refused the console without a token (401/403): it is not asked again without one (each
 * poll would be a 401 in the browser's console) until a token is entered or forgotten.
 */
let needsToken = false;
/**
 * /admin answered this page's token-less ask with 401/403: an admin check is configured, so a
 * token it accepts proves admin and the token-less probe below would only add a 401 to the
 * browser's console. Kept when a token is entered; a token-less answer sets it anew.
 */
let adminCheckConfigured = false;
/**
 * An admin token /admin refused, with what the console showed for it: not sent again at every
 * poll (each a 401 in the browser's console) until another token is entered.
 */
let refused: { readonly token: string; readonly access: AdminAccess } | undefined;

/**
 * GET /admin/upstreams decides what the operator may do (docs/console.md "Access"). With an admin
 * check configured it answers 401 without a token; with none it answers everyone and refuses every
 * write, so a token that "works" there proves nothing: the console asks once without it, when
 * the token is entered (not at every poll: each would be a 401 in the browser's console).
 */
async function adminState(): Promise<{ access: AdminAccess; admin?: AdminUpstreamsAnswer }> {
  const token = adminToken.get();
  if (token === '' && needsToken) return { access: READ_ONLY_NO_TOKEN };
  if (token !== '' && refused?.token === token) return { access: refused.access };
  try {
    const admin = await call<AdminUpstreamsAnswer>('/admin/upstreams', { token });
    if (token === '') {
      adminCheckConfigured = false;
      return { access: NO_ADMIN_CONFIGURED, admin };
    }
    if (openProbe?.token !== token)
      openProbe = {
        token,
        open: adminCheckConfigured
          ? Promise.resolve(false)
          : call('/admin/upstreams').then(
              () => true,
              () => false,
            ),
      };
    const open = await openProbe.open;
    return { access: open ? NO_ADMIN_CONFIGURED : { kind: 'writable' }, admin };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.status === 401 || err.status === 403) {
      if (token === '') {
        needsToken = true;
        adminCheckConfigured = true;
        return { access: READ_ONLY_NO_TOKEN };
      }
      const access: AdminAccess = {
        kind: 'read-only',
        reason: `Read-only: the admin token was refused (HTTP ${err.status}: ${err.message}). Enter another one to try again.`,
      };
      refused = { token, access };
      return { access };
    }
    if (err.status === 404)
      return {
        access: {
          kind: 'read-only',
          reason: 'Read-only: this gateway has no /admin registration API.',
        },
      };
    return {
      access: {
        kind: 'read-only',
        reason: `Read-only: /admin answered HTTP ${err.status}: ${err.message}`,
      },
    };
  }
}

async function refresh(): Promise<void> {
  window.clearTimeout(timer);
  try {
    const [bundles, upstreams, admin, catalog, changes, servers] = await Promise.all([
      call<ToolBundlesAnswer>('/actuator/toolBundles'),
      call<UpstreamsAnswer>('/actuator/upstreams'),
      adminState(),
      call<CatalogToolsAnswer>('/actuator/catalog/tools'),
      call<HistoryAnswer>('/actuator/catalog/history'),
      call<ServersAnswer>('/actuator/servers'),
    ]);
    sources.render({ bundles, upstreams, admin: admin.admin, access: admin.access });
    document.body.dataset.access = admin.access.kind;
    byId('access').textContent =
      admin.access.kind === 'writable' ? 'Admin: changes allowed.' : admin.access.reason;
    tools.render(catalog);
    tools.renderServers(servers.servers);
    history.render(changes);
    problem.hidden = true;
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every ${POLL_MS / 1000} s.`;
  } catch (err) {
    problem.hidden = false;
    problem.textContent = `Cannot read the gateway's state: ${err instanceof Error ? err.message : String(err)}. Retrying.`;
  } finally {
    timer = window.setTimeout(() => void refresh(), POLL_MS);
  }
}

function show(view: ViewName): void {
  for (const name of VIEWS) {
    byId(`view-${name}`).hidden = name !== view;
    const link = byId(`tab-${name}`);
    if (name === view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function route(): void {
  const wanted = location.hash.replace(/^#/, '');
  show((VIEWS as readonly string[]).includes(wanted) ? (wanted as ViewName) : 'sources');
}

function setUpToken(): void {
  const form = byId<HTMLFormElement>('token-form');
  const input = byId<HTMLInputElement>('admin-token');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    input.value = '';
    // the two credentials stay apart: the caller token goes to /mcp, this one to /admin only
    if (value !== '' && value === callerToken.get()) {
      actionStatus.textContent = SAME_AS_CALLER;
      return;
    }
    adminToken.set(value);
    needsToken = false;
    refused = undefined;
    void refresh();
  });
  byId('forget-token').addEventListener('click', () => {
    adminToken.set('');
    needsToken = false;
    void refresh();
  });
}

async function start(): Promise<void> {
  window.addEventListener('hashchange', route);
  route();
  setUpToken();
  try {
    settings = await call<ConsoleSettings>('/console/settings');
    byId('identity').textContent =
      `${settings.identity} · ${settings.version} · profile ${settings.profile}`;
  } catch (err) {
    problem.hidden = false;
    problem.textContent = `Cannot read the console settings: ${err instanceof Error ? err.message : String(err)}`;
  }
  newClient();
  await refresh();
}

void start();
