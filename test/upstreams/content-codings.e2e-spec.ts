import { CodingProxy } from '../support/coding-proxy';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { V1Upstream, V2Upstream } from '../support/mcp-upstreams';
import { CLIENT_KINDS, connectClient } from '../support/sdk-clients';

/**
 * Upstreams behind something that compresses every answer (a CDN), although the gateway sends
 * no Accept-Encoding (RFC 9110 §12.5.3: any coding is then acceptable). The gateway decodes
 * gzip, deflate and br on upstream answers, JSON and SSE alike, as it does bundle manifests
 * (docs/operations.md §10 "Checks"), and an upstream that answers in a coding it does not know
 * is unreachable with that coding named. Before, every coded answer made the upstream
 * `unreachable` (UpstreamBadAnswerError). Real SDK servers behind test/support/coding-proxy.ts.
 */
describe('upstream answers with a content coding', () => {
  let v1: V1Upstream;
  let v2: V2Upstream;
  const proxies: CodingProxy[] = [];
  let gateway: GatewayProcess;

  beforeAll(async () => {
    v1 = await V1Upstream.start();
    v2 = await V2Upstream.start();
    const gz = await CodingProxy.start(v1.url, 'gzip');
    const br = await CodingProxy.start(v2.url, 'br');
    const df = await CodingProxy.start(v1.url, 'deflate');
    const zs = await CodingProxy.start(v2.url, 'zstd');
    proxies.push(gz, br, df, zs);
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [
          upstream('gz', gz.url),
          upstream('br', br.url),
          upstream('df', df.url, { protocol: '2025-11-25' }),
          upstream('zs', zs.url),
        ],
      }),
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(proxies.map((p) => p.stop()));
    await v1?.stop();
    await v2?.stop();
  });

  it.each(CLIENT_KINDS)(
    'the %s client lists and calls the tools of the gzip (2025, SSE), br (2026) and deflate upstreams',
    async (kind) => {
      const client = await connectClient(kind, gateway.mcpUrl);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toEqual(
          expect.arrayContaining([
            'gz__repo_search',
            'gz__long-task',
            'br__add',
            'df__repo_search',
          ]),
        );
        expect(names.some((n) => n.startsWith('zs__'))).toBe(false);

        const add = await client.callTool({ name: 'br__add', arguments: { a: 2, b: 40 } });
        expect(add.isError).toBeFalsy();
        expect(add.structuredContent).toEqual({ sum: 42 });

        const progress: number[] = [];
        const onprogress = (p: { progress: number }): number => progress.push(p.progress);
        const params = { name: 'gz__long-task', arguments: { steps: 3 } };
        // the v1 client takes request options third, the v2 client second
        const long =
          kind === 'v1'
            ? await (client as any).callTool(params, undefined, { onprogress })
            : await (client as any).callTool(params, { onprogress });
        expect(long.isError).toBeFalsy();
        expect(long.content).toEqual([{ type: 'text', text: 'done after 3 steps' }]);
        expect(progress).toEqual([1, 2, 3]);

        const search = await client.callTool({
          name: 'df__repo_search',
          arguments: { query: 'coded' },
        });
        expect(search.isError).toBeFalsy();
        expect(JSON.stringify(search.content)).toContain('coded');
      } finally {
        await client.close();
      }
    },
  );

  it('an upstream answering in a coding the gateway does not decode is unreachable, the coding named in the log', async () => {
    const view = (await (await fetch(`${gateway.managementUrl}/actuator/upstreams`)).json()) as {
      upstreams: { id: string; status: string; lastErrorType: string | null }[];
    };
    const byId = new Map(view.upstreams.map((u) => [u.id, u]));
    expect(byId.get('zs')).toMatchObject({
      status: 'unreachable',
      lastErrorType: 'UpstreamBadAnswerError',
    });
    for (const id of ['gz', 'br', 'df']) expect(byId.get(id)?.status).toBe('healthy');
    await gateway.waitForOutput('unsupported content-encoding \\"zstd\\"');
  });
});
