import { connect } from 'node:net';
import type Redis from 'ioredis';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { deleteKeys, redisClient, SHARED_REDIS_URL, uniqueKeyPrefix } from '../support/redis';
import { jwtAuthConfig, TestAuthorizationServer } from '../support/oidc-provider';
import { rpc } from '../support/rpc';
import { TestToolService } from '../support/tool-service';
import { ADMIN_TOKEN, admin, auditLines, awaitAuditLine } from './admin-support';

const TEAM = { id: 'team', title: 'Claims team', tools: ['claims.open*'] };

/**
 * docs/operations.md §16 "Registered at runtime": a virtual server registered through
 * /admin/servers is checked with the boot rules, served on its path at once on the replica that
 * took it and on the others through Redis, replaced and deleted with If-Match, never takes a
 * configured server's id, and is written back when Redis loses its data.
 */
describe('virtual servers registered at runtime, across two replicas', () => {
  let claims: TestToolService;
  let redis: Redis;
  let a: GatewayProcess;
  let b: GatewayProcess;
  const keyPrefix = uniqueKeyPrefix();

  const replica = (): Promise<GatewayProcess> =>
    GatewayProcess.startPatiently({
      mcp: {
        ...gatewayConfig([bundle('claims', claims, 'claims.')], { redis: { keyPrefix } }),
        virtualServers: [{ id: 'configured', tools: ['claims.close_claim'] }],
      },
      env: { MCP_ADMIN_TOKEN: ADMIN_TOKEN, REDIS_URL: SHARED_REDIS_URL },
    });

  beforeAll(async () => {
    redis = redisClient();
    claims = await TestToolService.start(
      manifest('claims', [
        tool({ name: 'claims.open_claim' }),
        tool({ name: 'claims.open_case' }),
        tool({ name: 'claims.close_claim' }),
      ]),
    );
    [a, b] = await Promise.all([replica(), replica()]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await claims?.stop();
    await deleteKeys(redis, keyPrefix);
    redis.disconnect();
  });

  const at = (gateway: GatewayProcess, id: string): string =>
    gateway.mcpUrl.replace(/\/mcp$/, `/mcp/servers/${id}`);
  const listedOn = async (gateway: GatewayProcess, id: string): Promise<string[] | number> => {
    const answer = await rpc(at(gateway, id), 'tools/list', {});
    if (answer.status !== 200) return answer.status;
    return (answer.json.result.tools as { name: string }[]).map((t) => t.name).sort();
  };

  it('registers a server: 201 with its view and ETag, served at once here and soon on the other replica', async () => {
    expect(await listedOn(a, 'team')).toBe(404);
    const unknown = await rpc(at(a, 'team'), 'tools/list', {});
    expect(unknown.json.error.message).toMatch(/^Not Found: no virtual server "team"/);
    const created = await admin(a, 'POST', '/admin/servers', TEAM);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'team',
      title: 'Claims team',
      path: '/mcp/servers/team',
      origin: 'admin',
      toolNames: ['claims.open_case', 'claims.open_claim'],
      registeredBy: 'admin-token',
    });
    expect(created.headers.get('etag')).toBe(`"${created.body.version}"`);
    expect(await listedOn(a, 'team')).toEqual(['claims.open_case', 'claims.open_claim']);
    await waitFor(async () => Array.isArray(await listedOn(b, 'team')), 10_000);
    expect(await listedOn(b, 'team')).toEqual(['claims.open_case', 'claims.open_claim']);
    // its serverInfo is its own, in both eras' discovery
    const init = await rpc(at(b, 'team'), 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'e2e', version: '1' },
    });
    expect(init.json.result.serverInfo).toMatchObject({
      name: 'mcp-gateway-test/team',
      title: 'Claims team',
    });
    const status = (await (await fetch(`${b.managementUrl}/actuator/servers`)).json()) as {
      servers: { id: string; origin: string }[];
    };
    expect(status.servers.map((s) => [s.id, s.origin])).toEqual([
      ['configured', 'config'],
      ['team', 'admin'],
    ]);
    // the same API under the config key's name
    const alias = await admin(b, 'GET', '/admin/virtual-servers/team');
    expect(alias).toMatchObject({ status: 200, body: { id: 'team', origin: 'admin' } });
  });

  it('refuses a body the boot would refuse, naming each field, and ids that are taken', async () => {
    const bad = await admin(a, 'POST', '/admin/servers', {
      id: 'Bad Id',
      toolSelect: true,
      colour: 'red',
    });
    expect(bad.status).toBe(400);
    const problems = (bad.body.problems as string[]).join('\n');
    expect(problems).toMatch(/^id: must match/m);
    expect(problems).toMatch(/^colour: unknown key/m);
    const empty = await admin(a, 'POST', '/admin/servers', { id: 'empty', toolSelect: true });
    expect(empty.status).toBe(400);
    expect(empty.body.problems).toEqual([
      'toolSelect: needs toolSearch: true (selection is a part of tool search)',
      'body: names no sources, tools or tags, so it would serve nothing; give at least one',
    ]);
    // fields of the wrong type are named; the rules across fields wait until they are right
    const typed = await admin(a, 'POST', '/admin/servers', { id: 'typed', tools: 'claims.*' });
    expect(typed.status).toBe(400);
    expect(typed.body.problems).toEqual([expect.stringMatching(/^tools: must be a list/)]);
    for (const id of ['configured', 'team']) {
      const taken = await admin(a, 'POST', '/admin/servers', { id, tools: ['claims.*'] });
      expect(taken.status).toBe(409);
      expect(taken.body.problems[0]).toMatch(new RegExp(`^id: "${id}" is a`));
    }
    // a body nested past any server's shape: 400 before any validation walks it, and audited
    for (const [method, path, body] of [
      ['POST', '/admin/servers', `{"id":"deep","x":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`],
      ['POST', '/admin/servers', `{"id":"deep","tools":${'['.repeat(5000)}${']'.repeat(5000)}}`],
      [
        'PUT',
        '/admin/servers/team',
        `{"id":"team","tools":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      ],
    ] as const) {
      const before = auditLines(a).length;
      const deep = await fetch(`${a.managementUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body,
      });
      expect([method, path, deep.status]).toEqual([method, path, 400]);
      expect(((await deep.json()) as { problems: string[] }).problems).toEqual([
        'the body is nested deeper than 16 levels',
      ]);
      // the 409s above may log after their answers: wait for this refusal's own line
      expect(await awaitAuditLine(a, before, (l) => l.status !== 409)).toMatchObject({
        status: 400,
        outcome: 'refused',
      });
    }
    const configured = await admin(a, 'DELETE', '/admin/servers/configured');
    expect(configured.status).toBe(409);
    expect(await admin(a, 'POST', '/admin/servers', TEAM, null)).toMatchObject({ status: 401 });
    expect(await admin(a, 'DELETE', '/admin/servers/nope')).toMatchObject({ status: 404 });
  });

  it('PUT replaces it on both replicas; a stale If-Match is a 409 and changes nothing', async () => {
    const read = await admin(b, 'GET', '/admin/servers/team');
    const etag = read.headers.get('etag') as string;
    const replaced = await admin(
      b,
      'PUT',
      '/admin/servers/team',
      { ...TEAM, tools: ['claims.close_claim'] },
      ADMIN_TOKEN,
      { 'if-match': etag },
    );
    expect(replaced.status).toBe(200);
    // registered when it was first; the replace is said apart
    expect(replaced.body).toMatchObject({
      id: 'team',
      registeredAt: read.body.registeredAt,
      updatedBy: 'admin-token',
    });
    expect(Date.parse(replaced.body.updatedAt)).toBeGreaterThanOrEqual(
      Date.parse(read.body.registeredAt),
    );
    expect(replaced.body.toolNames).toEqual(['claims.close_claim']);
    const stale = await admin(a, 'PUT', '/admin/servers/team', TEAM, ADMIN_TOKEN, {
      'if-match': etag,
    });
    expect(stale.status).toBe(409);
    await waitFor(
      async () => (await listedOn(a, 'team')).toString() === 'claims.close_claim',
      10_000,
    );
    const renamed = await admin(a, 'PUT', '/admin/servers/team', { ...TEAM, id: 'other' });
    expect(renamed.status).toBe(400);
  });

  it('written back when Redis loses its data, its version kept: an If-Match read before still means that version', async () => {
    const before = await admin(a, 'GET', '/admin/servers/team');
    const etag = before.headers.get('etag') as string;
    await deleteKeys(redis, keyPrefix);
    await waitFor(
      async () =>
        (await redis.hkeys(`${keyPrefix}:{mcp-gateway-test}:virtual-servers`)).includes('team'),
      10_000,
    );
    expect(await listedOn(b, 'team')).toEqual(['claims.close_claim']);
    // the counter is above every version written back: no version is handed out twice
    const stored = JSON.parse(
      (await redis.hget(`${keyPrefix}:{mcp-gateway-test}:virtual-servers`, 'team')) as string,
    ) as { version: number };
    expect(`"${stored.version}"`).toBe(etag);
    const bumped = await admin(
      a,
      'PUT',
      '/admin/servers/team',
      { ...TEAM, tools: ['claims.close_claim'] },
      ADMIN_TOKEN,
      { 'if-match': etag },
    );
    expect(bumped.status).toBe(200);
    expect(Number(bumped.body.version)).toBeGreaterThan(stored.version);
    const stale = await admin(a, 'PUT', '/admin/servers/team', TEAM, ADMIN_TOKEN, {
      'if-match': etag,
    });
    expect(stale.status).toBe(409);
  });

  it('after Redis loses its data a server registered anew never gets a version handed out before: an If-Match read before is 409', async () => {
    expect(
      (await admin(a, 'POST', '/admin/servers', { id: 'kept', tools: ['claims.*'] })).status,
    ).toBe(201);
    const first = await admin(a, 'POST', '/admin/servers', { id: 'anew', tools: ['claims.*'] });
    expect(first.status).toBe(201);
    const etag = first.headers.get('etag') as string;
    expect((await admin(a, 'DELETE', '/admin/servers/anew')).status).toBe(200);
    await deleteKeys(redis, keyPrefix);
    // the replicas write back what they serve (kept); B may not have read the deletion yet and
    // write 'anew' back too, which A, the replica that deleted it, deletes again
    await waitFor(async () => {
      const stored = await redis.hkeys(`${keyPrefix}:{mcp-gateway-test}:virtual-servers`);
      return (
        stored.includes('kept') &&
        !stored.includes('anew') &&
        (await listedOn(a, 'anew')) === 404 &&
        (await listedOn(b, 'anew')) === 404
      );
    }, 15_000);
    const again = await admin(b, 'POST', '/admin/servers', { id: 'anew', tools: ['claims.*'] });
    expect(again.status).toBe(201);
    expect(Number(again.body.version)).toBeGreaterThan(Number(etag.replace(/"/g, '')));
    const stale = await admin(a, 'DELETE', '/admin/servers/anew', undefined, ADMIN_TOKEN, {
      'if-match': etag,
    });
    expect(stale.status).toBe(409);
    expect((await admin(b, 'DELETE', '/admin/servers/anew')).status).toBe(200);
    expect((await admin(b, 'DELETE', '/admin/servers/kept')).status).toBe(200);
  });

  it('a deletion wins over a write-back of the deleted server by a replica that had not read it', async () => {
    const created = await admin(a, 'POST', '/admin/servers', { id: 'brief', tools: ['claims.*'] });
    expect(created.status).toBe(201);
    await waitFor(async () => Array.isArray(await listedOn(b, 'brief')), 10_000);
    // deleted on A and the store emptied at once: B still serves it, and writes it back
    expect((await admin(a, 'DELETE', '/admin/servers/brief')).status).toBe(200);
    await deleteKeys(redis, keyPrefix);
    await waitFor(
      async () => (await listedOn(a, 'brief')) === 404 && (await listedOn(b, 'brief')) === 404,
      15_000,
    );
    await new Promise((r) => setTimeout(r, 4_500));
    expect(await listedOn(a, 'brief')).toBe(404);
    expect(await listedOn(b, 'brief')).toBe(404);
    expect(await redis.hexists(`${keyPrefix}:{mcp-gateway-test}:virtual-servers`, 'brief')).toBe(0);
  });

  it('a stored server whose id the configuration took over is not served, and its DELETE removes only the stored record', async () => {
    // as if registered before the configuration named `configured`: the stored record of
    // `team` under that id (another tool list), the way a replica of the old configuration wrote it
    const hash = `${keyPrefix}:{mcp-gateway-test}:virtual-servers`;
    const record = JSON.parse((await redis.hget(hash, 'team')) as string) as {
      server: Record<string, unknown>;
    };
    record.server = { ...record.server, id: 'configured', tools: ['claims.open*'] };
    await redis.hset(hash, 'configured', JSON.stringify(record));
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await listedOn(a, 'configured')).toEqual(['claims.close_claim']);

    const deleted = await admin(a, 'DELETE', '/admin/servers/configured');
    expect(deleted).toMatchObject({ status: 200, body: { id: 'configured', deleted: true } });
    expect(await redis.hexists(hash, 'configured')).toBe(0);
    // the configured server stays, read-only
    expect(await listedOn(a, 'configured')).toEqual(['claims.close_claim']);
    expect((await admin(b, 'DELETE', '/admin/servers/configured')).status).toBe(409);
  });

  it('DELETE removes it everywhere', async () => {
    const deleted = await admin(b, 'DELETE', '/admin/servers/team');
    expect(deleted).toMatchObject({ status: 200, body: { id: 'team', deleted: true } });
    expect(await listedOn(b, 'team')).toBe(404);
    await waitFor(async () => (await listedOn(a, 'team')) === 404, 10_000);
  });
});

/**
 * docs/operations.md §16 "Registered at runtime" with `mcp.auth`: a registered server's URL is an
 * audience of its own while it exists; once it is deleted a token for it serves nothing (not
 * `/mcp`, not `/admin`), and a request admitted on its path before the deletion is not served
 * as one to `/mcp`.
 */
describe('registered virtual servers with tokens, and deleted under a request', () => {
  const RESOURCE = 'https://gateway.test/mcp';
  const LATE = `${RESOURCE}/servers/late`;
  let as: TestAuthorizationServer;
  let claims: TestToolService;
  let gateway: GatewayProcess;
  let adminToken: string;

  beforeAll(async () => {
    as = await TestAuthorizationServer.start({
      resources: {
        [RESOURCE]: { scope: 'mcp mcp:admin' },
        [LATE]: { scope: 'mcp mcp:admin' },
      },
      defaultResource: RESOURCE,
    });
    claims = await TestToolService.start(
      manifest('claims', [tool({ name: 'claims.open_claim' }), tool({ name: 'claims.secret' })]),
    );
    gateway = await GatewayProcess.start({
      mcp: {
        ...gatewayConfig([bundle('claims', claims, 'claims.')]),
        auth: jwtAuthConfig(as, RESOURCE),
      },
      waitReady: true,
    });
    adminToken = (await as.mint({ subject: 'ops', scope: 'mcp mcp:admin' })).access_token;
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([as?.stop(), claims?.stop()]);
  });

  const adminCall = (method: 'POST' | 'DELETE', path: string, body?: unknown) =>
    admin(gateway, method, path, body, adminToken);

  it("a token for a deleted server's URL is refused everywhere, /admin included", async () => {
    expect(
      (await adminCall('POST', '/admin/servers', { id: 'late', tools: ['claims.open*'] })).status,
    ).toBe(201);
    const forLate = (await as.mint({ subject: 'x', resource: LATE, scope: 'mcp mcp:admin' }))
      .access_token;
    const bearer = { authorization: `Bearer ${forLate}` };
    const late = gateway.mcpUrl.replace(/\/mcp$/, '/mcp/servers/late');
    expect((await rpc(late, 'tools/list', {}, bearer)).status).toBe(200);
    expect((await rpc(gateway.mcpUrl, 'tools/list', {}, bearer)).status).toBe(401);
    expect((await adminCall('DELETE', '/admin/servers/late')).status).toBe(200);
    expect((await rpc(gateway.mcpUrl, 'tools/list', {}, bearer)).status).toBe(401);
    expect((await rpc(late, 'tools/list', {}, bearer)).status).toBe(404);
    const asAdmin = await admin(
      gateway,
      'POST',
      '/admin/servers',
      { id: 'evil', tools: ['*'] },
      forLate,
    );
    expect([401, 403]).toContain(asAdmin.status);
    // the gateway's own audience still serves /mcp
    expect(
      (await rpc(gateway.mcpUrl, 'tools/list', {}, { authorization: `Bearer ${adminToken}` }))
        .status,
    ).toBe(200);
  });

  it('a request admitted on a server path that is deleted before its body ends is a 404, never /mcp', async () => {
    expect(
      (await adminCall('POST', '/admin/servers', { id: 'brief', tools: ['claims.open*'] })).status,
    ).toBe(201);
    const { port } = new URL(gateway.mcpUrl);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'claims.secret', arguments: {} },
    });
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.write(
      [
        'POST /mcp/servers/brief HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${adminToken}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body.slice(0, 10),
      ].join('\r\n'),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect((await adminCall('DELETE', '/admin/servers/brief')).status).toBe(200);
    socket.write(body.slice(10));
    await waitFor(() => answer.includes('\r\n\r\n'), 10_000);
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 404/);
    expect(claims.toolRequests('claims.secret')).toHaveLength(0);
  });
});
