import { GatewayProcess } from '../support/gateway-process';
import { gatewayConfig, upstream } from '../support/fixtures';
import { openLegacySession, rpc } from '../support/rpc';
import { ScriptedUpstream, upTool } from '../support/scripted-upstream';

/**
 * docs/operations.md §10 "Routing": "`tools/call`, `prompts/get`, `resources/read`,
 * `completion/complete`, `resources/subscribe` and `resources/unsubscribe` go to the owning
 * upstream … A name or URI that the replica's catalog lacks (a tool, a prompt, a resource, …)
 * gets one refresh of the sources … before it is answered unknown: … an upstream may have added
 * it without `list_changed`." An upstream adds a resource without list_changed: resources/read
 * of it refreshes and is served; resources/subscribe of the same URI is refused at once.
 */
const NEW_URI = 'b://new';

function scripted(id: string): Promise<ScriptedUpstream> {
  return ScriptedUpstream.start({
    tools: [upTool(`t-${id}`)],
    resources: [{ uri: `${id}://old`, name: 'old' }],
    capabilities: { tools: {}, resources: { subscribe: true } },
    sessionId: `${id}-session`,
  }).then((up) =>
    up
      .on('resources/subscribe', () => ({ result: {} }))
      .on('resources/read', (req) => ({
        result: {
          contents: [{ uri: req.params?.uri, mimeType: 'text/plain', text: `from-${id}` }],
        },
      })),
  );
}

describe.each(['subscribe first', 'read first'])(
  'a resource the upstream added without list_changed (%s)',
  (order) => {
    let a: ScriptedUpstream;
    let b: ScriptedUpstream;
    let gateway: GatewayProcess;

    beforeAll(async () => {
      [a, b] = await Promise.all([scripted('a'), scripted('b')]);
      gateway = await GatewayProcess.start({
        mcp: gatewayConfig([], { upstreams: [upstream('a', a.url), upstream('b', b.url)] }),
        waitReady: true,
      });
    }, 60_000);

    afterAll(async () => {
      await gateway?.stop();
      await Promise.all([a?.stop(), b?.stop()]);
    });

    it('resources/subscribe finds it as resources/read does', async () => {
      const session = await openLegacySession(gateway.mcpUrl);
      b.resources.push({ uri: NEW_URI, name: 'new' });
      const subscribe = () => rpc(gateway.mcpUrl, 'resources/subscribe', { uri: NEW_URI }, session);
      const read = () => rpc(gateway.mcpUrl, 'resources/read', { uri: NEW_URI }, session);
      if (order === 'read first') {
        expect((await read()).json?.result?.contents?.[0]?.text).toBe('from-b');
        expect((await subscribe()).json).toMatchObject({ result: {} });
      } else {
        const sub = await subscribe();
        expect({
          subscribe: sub.json?.result ?? sub.json?.error,
          sentToB: b.rpcs('resources/subscribe').length,
        }).toEqual({
          subscribe: {},
          sentToB: 1,
        });
      }
    });
  },
);
