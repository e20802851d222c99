import { stopAfterEach } from '../support/cleanup';
import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { openLegacySession, rpc } from '../support/rpc';
import { ScriptedUpstream } from '../support/scripted-upstream';

/**
 * With `mcp.auth` on, one caller holds at most a tenth of a replica's 2025 resource
 * subscriptions (1,000 of 10,000) over all its sessions, so it cannot lock the others out
 * (docs/security.md, "Streams and subscriptions"; docs/operations.md §10 "Resource
 * subscriptions"). Before, alice's 100 sessions of 100 subscriptions each filled the replica
 * for as long as her session ids lived (24 h), and bob's first subscribe was refused.
 */
const RESOURCE = 'https://gateway.test/mcp';
const URIS = Array.from({ length: 100 }, (_, i) => `res://r/${i}`);

describe('resource subscriptions are bounded per caller', () => {
  const track = stopAfterEach();

  it("a caller's 1,001st subscription is refused with -32602, and another caller still subscribes", async () => {
    const as = track(
      await TestAuthorizationServer.start({
        resources: { [RESOURCE]: { scope: 'mcp' } },
        defaultResource: RESOURCE,
      }),
    );
    const up = track(
      await ScriptedUpstream.start({
        resources: URIS.map((uri) => ({ uri, name: uri })),
        capabilities: { tools: {}, resources: { subscribe: true } },
      }),
    );
    up.on('resources/subscribe', () => ({ result: {} }));
    const gateway = track(
      await GatewayProcess.start({
        waitReady: true,
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        mcp: {
          ...gatewayConfig([], { upstreams: [upstream('u', up.url)] }),
          auth: jwtAuthConfig(as, RESOURCE),
        },
      }),
    );
    const alice = (await as.mint({ subject: 'alice' })).access_token;
    const bob = (await as.mint({ subject: 'bob' })).access_token;
    const session = (token: string): Promise<Record<string, string>> =>
      openLegacySession(gateway.mcpUrl, { authorization: `Bearer ${token}` });
    let accepted = 0;
    for (let s = 0; s < 10; s++) {
      const headers = await session(alice);
      const answers = await Promise.all(
        URIS.map((uri, i) => rpc(gateway.mcpUrl, 'resources/subscribe', { uri }, headers, i + 1)),
      );
      accepted += answers.filter((a) => a.json?.result !== undefined).length;
    }
    expect(accepted).toBe(1000);
    const more = await rpc(
      gateway.mcpUrl,
      'resources/subscribe',
      { uri: URIS[0] },
      await session(alice),
      7,
    );
    expect(more.json.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('a caller may hold 1000'),
    });
    const other = await rpc(
      gateway.mcpUrl,
      'resources/subscribe',
      { uri: URIS[0] },
      await session(bob),
      8,
    );
    expect(other.json.result).toEqual({});
    // the refused one never reached the upstream
    expect(up.rpcs('resources/subscribe')).toHaveLength(1001);
  });

  it('a URI longer than 8,192 characters is refused with -32602 before it reaches the upstream (subscriptions are counted, not weighed)', async () => {
    const up = track(
      await ScriptedUpstream.start({
        resourceTemplates: [{ uriTemplate: 'res://files/{path}', name: 'files' }],
        capabilities: { tools: {}, resources: { subscribe: true } },
      }),
    );
    up.on('resources/subscribe', () => ({ result: {} }));
    const gateway = track(
      await GatewayProcess.start({
        waitReady: true,
        env: { MCP_SESSION_KEYS: TEST_SESSION_KEYS },
        mcp: gatewayConfig([], { upstreams: [upstream('u', up.url)] }),
      }),
    );
    const headers = await openLegacySession(gateway.mcpUrl);
    const fits = `res://files/${'a'.repeat(8192 - 'res://files/'.length)}`;
    const long = `${fits}b`;
    const refused = await rpc(gateway.mcpUrl, 'resources/subscribe', { uri: long }, headers, 1);
    expect(refused.json.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('at most 8192 characters'),
    });
    const accepted = await rpc(gateway.mcpUrl, 'resources/subscribe', { uri: fits }, headers, 2);
    expect(accepted.json.result).toEqual({});
    expect(up.rpcs('resources/subscribe')).toHaveLength(1);
  });
});
