import type { Stoppable } from '../support/cleanup';
import { GatewayProcess, waitFor, type GatewayOptions } from '../support/gateway-process';
import { rpc } from '../support/rpc';
import { stablePort } from '../support/ports';

/** The static admin token the suites run with (MCP_ADMIN_TOKEN). */
export const ADMIN_TOKEN = 'admin-e2e-9f2c41d7b0';

export interface AdminAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** One request to the registration API of a gateway's management port. */
export async function admin(
  gateway: GatewayProcess,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  token: string | null = ADMIN_TOKEN,
  extraHeaders: Record<string, string> = {},
): Promise<AdminAnswer> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${gateway.managementUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}

/** Waits until the registration record reaches `state`, and returns it. */
export async function waitForState(
  gateway: GatewayProcess,
  id: string,
  state: string,
  timeoutMs = 20_000,
): Promise<any> {
  let last: any;
  await waitFor(
    async () => {
      last = (await admin(gateway, 'GET', `/admin/upstreams/${id}`)).body;
      return last?.state === state;
    },
    timeoutMs,
    () => `upstream ${id} never reached ${state}; last: ${JSON.stringify(last)}\n${gateway.output}`,
  );
  return last;
}

/** The tool names /mcp publishes now. */
export async function toolNames(gateway: GatewayProcess): Promise<string[]> {
  const list = await rpc(gateway.mcpUrl, 'tools/list');
  return (list.json?.result?.tools ?? []).map((t: { name: string }) => t.name);
}

/** Waits until /mcp publishes (or, with `present` false, no longer publishes) the name. */
export async function waitForTool(
  gateway: GatewayProcess,
  name: string,
  present = true,
  timeoutMs = 20_000,
): Promise<void> {
  await waitFor(
    async () => (await toolNames(gateway)).includes(name) === present,
    timeoutMs,
    () => `tool ${name} never ${present ? 'appeared' : 'went away'}:\n${gateway.output}`,
  );
}

/** A port on 127.0.0.1 that nothing listens on, and no other process is handed meanwhile (support/ports.ts). */
export const closedPort = stablePort;

/** The audit lines a gateway printed so far. */
export function auditLines(gateway: GatewayProcess): any[] {
  return gateway.stdout
    .split('\n')
    .filter((l) => l.includes('"admin_audit"'))
    .map((l) => JSON.parse(l));
}

/**
 * Waits for the first audit line written after the `from`th one that matches, and returns it.
 * Lines reach the test through the child's stdout, so an earlier request's line can arrive after
 * its HTTP answer: a test names the line it waits for instead of taking the last one.
 */
export async function awaitAuditLine(
  gateway: GatewayProcess,
  from: number,
  matches: (line: any) => boolean,
): Promise<any> {
  await waitFor(() => auditLines(gateway).slice(from).some(matches), 5000);
  return auditLines(gateway).slice(from).find(matches);
}

/**
 * Spawns a gateway, hands it to `track` at once (so a slow start on a loaded machine never
 * leaves a process behind), and waits generously for its listeners and readiness.
 */
export async function startGateway(
  options: GatewayOptions,
  track: <T extends Stoppable>(s: T) => T,
): Promise<GatewayProcess> {
  const gateway = track(GatewayProcess.spawn(options));
  await gateway.waitForListening(60_000);
  if (options.waitReady) await gateway.waitForReady(60_000);
  return gateway;
}
