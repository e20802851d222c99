import { randomBytes } from 'node:crypto';
import { GatewayProcess } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { rawHttp } from '../support/raw-http';
import { callTool } from '../support/rpc';
import { TestToolService } from '../support/tool-service';
import { stablePort } from '../support/ports';

/**
 * docs/operations.md §10: `upstreams[].url` is "never shown to clients, in status or in logs of
 * errors (only /admin/upstreams shows it)"; `authorization.static`: "the whole Authorization
 * value from env valueEnv (never in config, logs or status)"; §15: audit "detail (the URL
 * without credentials or query ...) Secrets never appear"; docs/security.md "What is logged":
 * token values are never logged.
 *
 * Markers are planted in every secret-ish place (static credentials of a bundle and two
 * upstreams, the query of upstream URLs and of a manifest URL, the admin token and wrong admin
 * tokens) and every management view and the whole log (LOG_LEVEL=debug) are searched.
 */

const tag = randomBytes(4).toString('hex');
const M = {
  admin: `ADMINTOKEN${tag}abcdefghijklmnopqrstuvwxyz0123`,
  wrongAdmin: `WRONGADMIN${tag}`,
  bundleSecret: `BUNDLESECRET${tag}`,
  upSecret: `UPSECRET${tag}`,
  deadSecret: `DEADSECRET${tag}`,
  upQuery: `UPQUERY${tag}`,
  deadQuery: `DEADQUERY${tag}`,
  manifestQuery: `MANIFESTQ${tag}`,
  regQuery: `REGQUERY${tag}`,
};

const VIEWS = [
  '/',
  '/actuator/toolBundles',
  '/actuator/upstreams',
  '/actuator/prometheus',
  '/actuator/catalog/tools',
  '/actuator/catalog/history',
  '/actuator/servers',
  '/actuator/health/readiness',
  '/actuator/health/liveness',
  '/console',
  '/console/settings',
  '/admin/reviews',
  '/admin/servers',
];
const ADMIN_VIEWS = ['/admin/upstreams', '/admin/upstreams/repo', '/admin/upstreams/dead'];

describe('no secret in any management view or log line', () => {
  let service: TestToolService;
  let repo: V1Upstream;
  let gateway: GatewayProcess;
  let deadPort: number;

  beforeAll(async () => {
    service = new TestToolService(
      manifest('shop', [tool({ name: 'shop.ping' })]),
      `/tool-manifest?sig=${M.manifestQuery}`,
    );
    await service.listen();
    repo = await V1Upstream.start();
    deadPort = await stablePort();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig(
        [
          bundle('shop', service, 'shop.', {
            authorization: { mode: 'static', valueEnv: 'SHOP_AUTH' },
          }),
        ],
        {
          upstreams: [
            upstream('repo', `${repo.url}?key=${M.upQuery}`, {
              authorization: { mode: 'static', valueEnv: 'REPO_AUTH' },
            }),
            upstream('dead', `http://127.0.0.1:${deadPort}/mcp?key=${M.deadQuery}`, {
              authorization: { mode: 'static', valueEnv: 'DEAD_AUTH' },
            }),
          ],
        },
      ),
      env: {
        MCP_ADMIN_TOKEN: M.admin,
        LOG_LEVEL: 'debug',
        SHOP_AUTH: `Bearer ${M.bundleSecret}`,
        REPO_AUTH: `Bearer ${M.upSecret}`,
        DEAD_AUTH: `Bearer ${M.deadSecret}`,
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await repo?.stop();
    await service?.stop();
  });

  async function get(path: string, token?: string): Promise<string> {
    const answer = await rawHttp(gateway.managementPort, 'GET', path, {
      host: `127.0.0.1:${gateway.managementPort}`,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    });
    return `${JSON.stringify(answer.headers)}\n${answer.text}`;
  }

  it('the sources work with their secrets (the markers do travel)', async () => {
    const shop = await callTool(gateway.mcpUrl, 'shop.ping', {});
    expect(shop.result).toBeDefined();
    const up = await callTool(gateway.mcpUrl, 'repo__repo_search', { query: 'x' });
    expect(up.result).toBeDefined();
    expect(repo.requests.some((r) => r.headers.authorization === `Bearer ${M.upSecret}`)).toBe(
      true,
    );
    expect(
      service.requests.some((r) => r.headers.authorization === `Bearer ${M.bundleSecret}`),
    ).toBe(true);
    // a call to the dead upstream: an error path
    await callTool(gateway.mcpUrl, 'dead__anything', {});
    // wrong admin tokens, and the right one
    for (const token of [M.wrongAdmin, `${M.admin}x`]) {
      await get('/admin/upstreams', token);
      await rawHttp(
        gateway.managementPort,
        'POST',
        '/admin/upstreams',
        {
          host: `127.0.0.1:${gateway.managementPort}`,
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        '{"id":"x","url":"http://127.0.0.1:9/mcp"}',
      );
    }
    await get('/admin/upstreams', M.admin);
  });

  it('no management view (but /admin/upstreams) shows a static credential, the admin token or an upstream URL query', async () => {
    const leaks: string[] = [];
    for (const path of VIEWS) {
      const text = await get(path);
      for (const [name, marker] of Object.entries(M))
        if (text.includes(marker)) leaks.push(`${path}: ${name}`);
    }
    for (const path of ADMIN_VIEWS) {
      const text = await get(path, M.admin);
      for (const [name, marker] of Object.entries(M)) {
        // the URL (query included) is what /admin/upstreams is for
        if (name === 'upQuery' || name === 'deadQuery') continue;
        if (text.includes(marker)) leaks.push(`${path}: ${name}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('a registration refused for its URL does not write the URL query into the audit line', async () => {
    // an unparsable URL (the scheme left out, as when pasted) carrying a credential in its query
    const answer = await rawHttp(
      gateway.managementPort,
      'POST',
      '/admin/upstreams',
      {
        host: `127.0.0.1:${gateway.managementPort}`,
        authorization: `Bearer ${M.admin}`,
        'content-type': 'application/json',
      },
      JSON.stringify({ id: 'reg', url: `mcp.example.com/mcp?api_key=${M.regQuery}` }),
    );
    expect(answer.status).toBe(400);
    // the answer names the field and quotes the URL without its query
    expect(answer.text).toContain('mcp.example.com/mcp?…');
    expect(answer.text).not.toContain(M.regQuery);
    await new Promise((r) => setTimeout(r, 500));
    const audit = gateway.stdout.split('\n').filter((l) => l.includes('"admin_audit"'));
    const line = audit.find((l) => l.includes('"upstreamId":"reg"'));
    expect(line).toBeDefined();
    expect(line).not.toContain(M.regQuery);
  });

  it('the log (debug) holds no static credential, admin token, wrong admin token or URL query', async () => {
    await new Promise((r) => setTimeout(r, 500));
    const leaks = Object.entries(M)
      .filter(([, marker]) => gateway.output.includes(marker))
      .map(([name, marker]) => {
        const line = gateway.output.split('\n').find((l) => l.includes(marker)) ?? '';
        return `${name}: ${line.slice(0, 400)}`;
      });
    expect(leaks).toEqual([]);
  });
});

/**
 * The same rule at boot: docs/operations.md §10 `upstreams[].url` is "never shown ... in logs of
 * errors". A configured URL that does not parse (the scheme left out) stops the boot with a line
 * that quotes it without its query (an API key travels there).
 */
describe('boot refusal of an unparsable upstream URL', () => {
  it('does not print the URL query', async () => {
    const secret = `BOOTQUERY${tag}`;
    const gateway = GatewayProcess.spawn({
      mcp: gatewayConfig([], {
        upstreams: [upstream('repo', `mcp.example.com/mcp?api_key=${secret}`)],
      }),
    });
    expect(await gateway.waitForExit()).toBe(1);
    expect(gateway.stderr).toContain('upstreams[0].url');
    expect(gateway.output).not.toContain(secret);
  });
});
