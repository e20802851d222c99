import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import type { UpstreamConnections, UpstreamRequestOptions } from '@app/upstream';
import type { CallerRequestHeaders } from './caller-request-headers';
import { LiveListFetcher } from './live-list-fetcher';

/**
 * A live list's pages go with the caller's headers: what the connection may send again for a
 * page on its own (its resume GET, its repeat after a renewed session) knows when the caller's
 * token expires, so that it is never sent after it (docs/security.md "Answers to relayed
 * requests").
 */
describe('LiveListFetcher', () => {
  function setup() {
    const sent: UpstreamRequestOptions[] = [];
    const connection = {
      era: '2026',
      serverCapabilities: { tools: {} },
      maxAnswerBytes: 1_000_000,
      connect: () => Promise.resolve(),
      request: (_method: string, _params: unknown, options: UpstreamRequestOptions) => {
        sent.push(options);
        return Promise.resolve({ kind: 'result', result: { tools: [] } });
      },
    };
    const connections = { get: () => connection } as unknown as UpstreamConnections;
    const callerHeaders = {
      for: (_u: unknown, headers: Record<string, string>) => Promise.resolve(headers),
    } as unknown as CallerRequestHeaders;
    const config = {
      mcp: {
        registry: { maxPagesPerList: 10 },
        discovery: { maxToolsPerBundle: 100, maxToolsTotal: 1000, maxListItemsPerUpstream: 100 },
      },
    } as unknown as GatewayConfig;
    return { fetcher: new LiveListFetcher(connections, callerHeaders, config), sent };
  }
  const upstream = {
    id: 'live',
    url: 'http://127.0.0.1:1/mcp',
    listMillis: 5_000,
  } as UpstreamDefinition;
  const tools = { method: 'tools/list', capability: 'tools', key: 'tools' };

  it("gives each page the caller's token expiry", async () => {
    const { fetcher, sent } = setup();
    const caller = { subject: 'alice', expiresAt: 1_900_000_000 } as CallerIdentity;
    const outcome = await fetcher.fetch(upstream, tools, { authorization: 'Bearer t' }, caller);
    expect(outcome.kind).toBe('items');
    expect(sent.map((o) => o.credentialExpiresAtMs)).toEqual([1_900_000_000_000]);
  });

  it('gives none for a caller without exp (auth off)', async () => {
    const { fetcher, sent } = setup();
    await fetcher.fetch(upstream, tools, {});
    expect(sent.map((o) => o.credentialExpiresAtMs)).toEqual([undefined]);
  });
});
