import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { V2Upstream } from '../support/mcp-upstreams';
import { CLIENT_KINDS, ERA_OF, connectClient } from '../support/sdk-clients';

/**
 * Each client in its own era toward an `auto` upstream (docs/operations.md §10 "Dual-era
 * upstreams"): a dual-era server (the v2 SDK with `legacy: 'stateless'`, as the official
 * conformance reference server serves both eras on one URL) gets a 2025 client's requests as
 * 2025 ones and a 2026 client's as 2026 ones; a 2026-only server is asked once whether it
 * speaks 2025, refuses, and its 2025 clients are bridged as before. The official SDK clients
 * of both eras; real v2 SDK servers.
 */
describe('an auto upstream and clients of both eras', () => {
  let dual: V2Upstream;
  let only2026: V2Upstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    dual = await V2Upstream.start({ legacy: 'stateless' });
    only2026 = await V2Upstream.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('dual', dual.url), upstream('new', only2026.url)],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await dual?.stop();
    await only2026?.stop();
  });

  it.each(CLIENT_KINDS)(
    'the %s client is served by the dual-era upstream in its own era, by the 2026-only one in 2026',
    async (kind) => {
      const dualBefore = dual.requestsFor('tools/call').length;
      const newBefore = only2026.requestsFor('tools/call').length;
      const client = await connectClient(kind, gateway.mcpUrl);
      try {
        for (const name of ['dual__add', 'new__add']) {
          const result = await client.callTool({ name, arguments: { a: 20, b: 22 } });
          expect(result.isError).toBeFalsy();
          expect(result.structuredContent).toEqual({ sum: 42 });
        }
      } finally {
        await client.close();
      }
      const [toDual] = dual.requestsFor('tools/call').slice(dualBefore);
      const [toNew] = only2026.requestsFor('tools/call').slice(newBefore);
      const era = ERA_OF[kind];
      expect(toDual?.headers['mcp-protocol-version']).toBe(
        era === '2025' ? '2025-11-25' : '2026-07-28',
      );
      const meta = (toDual?.body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
      if (era === '2025')
        expect(meta ?? {}).not.toHaveProperty(['io.modelcontextprotocol/protocolVersion']);
      else expect(meta?.['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
      expect(toNew?.headers['mcp-protocol-version']).toBe('2026-07-28');
    },
  );

  it('the dual-era upstream got one 2025 session; the 2026-only one was asked once and refused', () => {
    expect(dual.requestsFor('initialize')).toHaveLength(1);
    const asked = only2026.requestsFor('initialize');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.status).toBeGreaterThanOrEqual(400);
  });
});
