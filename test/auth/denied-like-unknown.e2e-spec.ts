import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { GatewayProcess } from '../support/gateway-process';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { postRaw, rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';

const RESOURCE = 'https://gateway.test/mcp';
/** How long the `pub` Tool Service takes to serve its manifest (each refresh round pulls it). */
const PULL_DELAY_MS = 900;

/**
 * docs/operations.md §13 "Access", docs/security.md "Access rules": a tool that exists outside the
 * caller's grant is answered exactly like a name no source publishes, in both eras — the same
 * body, and after the same wait for a refresh of the sources (the one an unknown name gets), so
 * that neither the answer nor its time tells the caller which tools exist outside its grant.
 * Measured by what the gateway does (a pull of the sources per miss) and by a lower bound on the
 * time (it cannot answer before the pull it waits for), never by an upper bound.
 */
describe('a tool outside the grant is answered like an unknown one, in words and in time', () => {
  let as: TestAuthorizationServer;
  let pub: TestToolService;
  let secret: TestToolService;
  let gateway: GatewayProcess;
  let bob: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: { [RESOURCE]: { scope: 'mcp' } },
      defaultResource: RESOURCE,
    });
    pub = await TestToolService.start(manifest('pub', [tool({ name: 'pub.echo' })]));
    secret = await TestToolService.start(
      manifest('secret', [tool({ name: 'secret.drop_tables' })]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('pub', pub, 'pub.'), bundle('secret', secret, 'secret.')], {
          discovery: { readTimeoutMillis: 5000 },
        }),
        http: { modernEra: true },
        auth: jwtAuthConfig(as, RESOURCE),
        access: {
          rules: [
            { match: { claim: 'groups', value: 'dev' }, sources: ['pub'] },
            { match: { claim: 'groups', value: 'admin' }, sources: ['pub', 'secret'] },
          ],
        },
      },
      waitReady: true,
    });
    bob = (await as.mint({ subject: 'bob', claims: { groups: ['dev'] } })).access_token;
    // from now on a refresh round takes PULL_DELAY_MS (a slow source, or simply a big catalog)
    const body = manifest('pub', [tool({ name: 'pub.echo' })]);
    pub.manifest = () => ({ body, delayMs: PULL_DELAY_MS });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), pub?.stop(), secret?.stop()]);
  });

  async function timed(call: () => Promise<unknown>): Promise<number> {
    const started = performance.now();
    await call();
    return performance.now() - started;
  }

  const legacy = (name: string) =>
    rpc(gateway.mcpUrl, 'tools/call', { name, arguments: {} }, { authorization: `Bearer ${bob}` });

  const modern = (name: string) =>
    postRaw(
      gateway.mcpUrl,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name,
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' },
          },
        },
      }),
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
        authorization: `Bearer ${bob}`,
      },
    );

  it.each([
    ['2025-11-25', legacy],
    ['2026-07-28', modern],
  ])(
    '%s: the same body, after the same refresh of the sources',
    async (_era, send) => {
      const denied = await send('secret.drop_tables');
      const unknown = await send('secret.does_not_exist');
      // the bodies are alike (only the name differs)
      expect(denied.text.replace('secret.drop_tables', 'X')).toBe(
        unknown.text.replace('secret.does_not_exist', 'X'),
      );
      const pulls = (): number => pub.manifestRequests().length;
      for (const name of ['secret.does_not_exist', 'secret.drop_tables']) {
        const before = pulls();
        const took = await timed(() => send(name));
        // each miss waits for a refresh round, which pulls every source
        expect([name, pulls() - before]).toEqual([name, 1]);
        expect(took).toBeGreaterThanOrEqual(PULL_DELAY_MS * 0.8);
      }
    },
    60_000,
  );
});
