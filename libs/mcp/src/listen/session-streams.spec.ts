import type { GatewayConfig } from '@app/config';
import { CallCancellation } from '@app/execution';
import { AccessPolicy, type CallerIdentity, type ResourceServer } from '@app/identity';
import type { CatalogSnapshot, RegistryService } from '@app/registry';
import type { ServerCapabilities } from '../servers/server-capabilities';
import type { SseFrame } from '../answers/sse-frame';
import type { SessionTokenService } from '../session/session-token.service';
import { NotificationHub } from './notification-hub.service';
import { SessionStreams } from './session-streams.service';

type Published = (previous: CatalogSnapshot | undefined, next: CatalogSnapshot) => void;

/** The members of a catalog snapshot that the list_changed filters read: tools only. */
function catalog(tools: { source: string; name: string }[]): CatalogSnapshot {
  const json = (t: { name: string }): string => JSON.stringify({ name: t.name });
  const listed = { prompts: [], resources: [], resourceTemplates: [] };
  return {
    tools: tools.map((t) => ({ sourceId: t.source, name: t.name, publishedJson: json(t) })),
    toolsJsonBytes: Buffer.from(`[${tools.map(json).join(',')}]`),
    extras: {
      listed: () => listed,
      promptsJson: '[]',
      resourcesJson: '[]',
      resourceTemplatesJson: '[]',
    },
  } as unknown as CatalogSnapshot;
}

const caller = (subject: string, groups: string[]): CallerIdentity => ({
  subject,
  scopes: [],
  claims: { sub: subject, groups },
  token: `token-${subject}`,
});

async function framesOf(stream: AsyncIterable<SseFrame>): Promise<string[]> {
  const frames: string[] = [];
  for await (const frame of stream) if (typeof frame === 'string') frames.push(frame);
  return frames;
}

/**
 * The 2025 session GET stream tells a caller under `mcp.access` of a list change only when its
 * own view changed (docs/security.md "Listen filters and list changes"): the same rule as the
 * 2026 listen, through the same NotificationHub.
 */
describe('the 2025 GET stream follows the caller’s grant', () => {
  let publish: Published = () => undefined;
  const registry = {
    onPublished: (listener: Published) => {
      publish = listener;
      return () => undefined;
    },
    onUpstreamAnnounced: () => () => undefined,
  } as unknown as RegistryService;
  const config = {
    mcp: {
      listen: {
        maxStreams: 10,
        maxStreamsPerCaller: 10,
        maxQueuedBytes: 1 << 20,
        keepAliveMillis: 60_000,
      },
      auth: { clockSkewSeconds: 0 },
    },
  } as unknown as GatewayConfig;
  const claims = {
    protocolVersion: '2025-11-25',
    clientCapabilities: {},
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
  };
  const sessions = {
    sealed: true,
    open: () => claims,
    openFor: () => claims,
  } as unknown as SessionTokenService;
  const capabilities = {
    current: () => ({ tools: { listChanged: true } }),
  } as unknown as ServerCapabilities;
  const policy = new AccessPolicy({
    rules: [
      { match: { claim: 'groups', value: 'dev' }, sources: ['ub', 'sec'], tools: [] },
      { match: { claim: 'groups', value: 'ops' }, sources: ['ub'], tools: [] },
    ],
  });
  const resourceServer = { policy } as unknown as ResourceServer;

  it('a change of sec reaches the caller granted sec, not the one granted only ub', async () => {
    const hub = new NotificationHub(config, registry);
    const streams = new SessionStreams(sessions, hub, capabilities, resourceServer);
    // each caller on a session of its own (a sealed session opens for its caller only)
    const open = async (who: CallerIdentity) => {
      const signal = new CallCancellation();
      const headers = { 'mcp-session-id': `sealed-${who.subject}`, accept: 'text/event-stream' };
      const answer = await streams.open(headers, signal, who);
      if (answer.stream === undefined) throw new Error(`no stream: ${answer.status}`);
      return { frames: framesOf(answer.stream), close: () => signal.abort('client-closed') };
    };
    const dev = await open(caller('alice', ['dev']));
    const ops = await open(caller('bob', ['ops']));
    const ubA = { source: 'ub', name: 'ub__a' };
    const before = catalog([ubA]);
    publish(before, catalog([ubA, { source: 'sec', name: 'sec__late' }]));
    publish(before, catalog([{ source: 'ub', name: 'ub__b' }]));
    dev.close();
    ops.close();
    const changed = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
    expect(await dev.frames).toEqual([changed, changed]);
    expect(await ops.frames).toEqual([changed]);
    hub.onApplicationShutdown();
  });
});
