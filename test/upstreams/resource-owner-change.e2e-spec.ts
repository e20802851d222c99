import { GatewayProcess, waitFor } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { openLegacySession, rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';
import { SseReader } from '../support/sse-reader';

/**
 * docs/security.md "Routing of resource URIs"; docs/operations.md §10 "Routing", "Resource
 * subscriptions": resources/read, resources/subscribe and the updates relayed for a URI follow
 * its owner, the first source that lists it. Here the owner changes: the earlier upstream `a`
 * stops listing the URI (list_changed), so the later `b`'s listing is published and
 * resources/read goes to `b`. The 2025 subscription made while `a` owned it moves with the URI:
 * `a` is told resources/unsubscribe, `b` resources/subscribe; `b`'s updates reach the
 * subscriber, `a`'s no longer do, and the client's resources/unsubscribe goes to `b`.
 */
const URI = 'shared://x';

function scripted(id: string): Promise<ScriptedUpstream> {
  return ScriptedUpstream.start({
    tools: [upTool(`t-${id}`)],
    resources: [{ uri: URI, name: 'x' }],
    capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
    sessionId: `${id}-session`,
    getStream: true,
  }).then((up) =>
    up
      .on('resources/subscribe', () => ({ result: {} }))
      .on('resources/unsubscribe', () => ({ result: {} }))
      .on('resources/read', () => ({
        result: { contents: [{ uri: URI, mimeType: 'text/plain', text: `from-${id}` }] },
      })),
  );
}

describe('a 2025 subscription when the URI changes owner', () => {
  let a: ScriptedUpstream;
  let b: ScriptedUpstream;
  let gateway: GatewayProcess;
  let stream: SseReader | undefined;
  let session: Record<string, string> = {};

  beforeAll(async () => {
    [a, b] = await Promise.all([scripted('a'), scripted('b')]);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('a', a.url), upstream('b', b.url)] }),
      waitReady: true,
    });
    await waitFor(() => a.openStreams > 0 && b.openStreams > 0, 15_000);
  }, 60_000);

  afterAll(async () => {
    stream?.close();
    await gateway?.stop();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("after the owner changed, the owner's updates reach the subscriber and the old owner's do not", async () => {
    session = await openLegacySession(gateway.mcpUrl);
    stream = await SseReader.open(gateway.mcpUrl, 'GET', {
      ...session,
      accept: 'text/event-stream',
    });
    expect(stream.status).toBe(200);
    const read = async (): Promise<string | undefined> =>
      (await rpc(gateway.mcpUrl, 'resources/read', { uri: URI }, session)).json?.result
        ?.contents?.[0]?.text;
    expect(await read()).toBe('from-a');
    const sub = await rpc(gateway.mcpUrl, 'resources/subscribe', { uri: URI }, session);
    expect(sub.json?.result).toEqual({});
    expect(a.rpcs('resources/subscribe')).toHaveLength(1);

    // `a` stops listing the URI: `b` (later in config) lists it and now serves it
    a.resources = [];
    a.push({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
    await waitFor(
      async () => (await read()) === 'from-b',
      15_000,
      () => 'b never took the URI',
    );

    const updates = (): string[] =>
      stream!.messages
        .filter((m) => m.method === 'notifications/resources/updated')
        .map((m) => String(m.params?._meta?.from));
    b.push({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: URI, _meta: { from: 'b' } },
    });
    await new Promise((r) => setTimeout(r, 1500));
    a.push({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: URI, _meta: { from: 'a' } },
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect({
      updates: updates(),
      subscribedAt: {
        a: a.rpcs('resources/subscribe').length,
        b: b.rpcs('resources/subscribe').length,
      },
    }).toEqual({ updates: ['b'], subscribedAt: { a: 1, b: 1 } });
  }, 60_000);

  it('after the owner changed, resources/unsubscribe ends the subscription: no update reaches the session any more', async () => {
    // `a` was told when the subscription moved to `b`; the client's unsubscribe goes to `b`
    expect(a.rpcs('resources/unsubscribe')).toHaveLength(1);
    const unsub = await rpc(gateway.mcpUrl, 'resources/unsubscribe', { uri: URI }, session);
    expect(unsub.json?.result).toEqual({});
    await new Promise((r) => setTimeout(r, 700));
    for (const [up, from] of [
      [a, 'a-after-unsubscribe'],
      [b, 'b-after-unsubscribe'],
    ] as const)
      up.push({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: URI, _meta: { from } },
      });
    await new Promise((r) => setTimeout(r, 1500));
    expect({
      afterUnsubscribe: stream!.messages
        .filter((m) => m.method === 'notifications/resources/updated')
        .map((m) => String(m.params?._meta?.from))
        .filter((f) => f.endsWith('after-unsubscribe')),
      unsubscribeSentTo: {
        a: a.rpcs('resources/unsubscribe').length,
        b: b.rpcs('resources/unsubscribe').length,
      },
    }).toEqual({ afterUnsubscribe: [], unsubscribeSentTo: { a: 1, b: 1 } });
  }, 30_000);
});
