import { GatewayProcess, TEST_SESSION_KEYS } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool, upstream } from '../support/fixtures';
import { V1Upstream } from '../support/mcp-upstreams';
import { rpc } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/**
 * docs/operations.md §9: outside the local profile the gateway starts without MCP_SESSION_KEYS, in
 * stateless legacy mode: initialize issues no Mcp-Session-Id (the 2025 transport lets a server
 * issue none), a session id a client still sends is ignored (as the SDKs' stateless servers
 * do), one warning at boot, and /actuator/toolBundles shows `sessions.mode: "stateless"`.
 */

const INITIALIZE_PARAMS = {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'curl', version: '1' },
};

describe('stateless legacy mode: APP_PROFILE=staging without MCP_SESSION_KEYS', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })]));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
      env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: undefined },
      waitReady: true,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  it('starts, and warns once at boot', () => {
    const warnings = gateway.output.split('\n').filter((l) => l.includes('stateless legacy mode'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: expect.anything(),
      context: 'Session',
    });
    expect(warnings[0]).toContain('MCP_SESSION_KEYS is not set');
  });

  it('issues no Mcp-Session-Id on initialize', async () => {
    const answer = await rpc(gateway.mcpUrl, 'initialize', INITIALIZE_PARAMS);
    expect(answer.status).toBe(200);
    expect(answer.json.result.protocolVersion).toBe('2025-11-25');
    expect(answer.headers.get('mcp-session-id')).toBeNull();
  });

  it('shows sessions.mode "stateless" with the warning in /actuator/toolBundles', async () => {
    const view = await gateway.toolBundles();
    expect(view.sessions).toEqual({
      mode: 'stateless',
      keySource: 'none',
      warning: expect.stringContaining('MCP_SESSION_KEYS is not set'),
    });
    expect(view.bundles.map((b: { id: string }) => b.id)).toEqual(['svc']);
  });

  it('serves the official v1 and v2 clients without a session id', async () => {
    for (const connect of [connectV1, connectV2]) {
      const client = await connect(gateway.mcpUrl);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(['svc.echo']);
        const result = await client.callTool({ name: 'svc.echo', arguments: { n: 1 } });
        expect(result.isError).toBeFalsy();
      } finally {
        await client.close();
      }
    }
  });

  it('ignores a session id a client still sends (forged, or sealed by a replica with keys): 200, not 404', async () => {
    const sealed = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
      env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    let issued: string;
    try {
      const init = await rpc(sealed.mcpUrl, 'initialize', INITIALIZE_PARAMS);
      issued = init.headers.get('mcp-session-id')!;
      expect(issued).toMatch(/^v1\.t1\./);
    } finally {
      await sealed.stop();
    }
    for (const sessionId of [issued, 'v1.t1.forged-token-value', 'anything']) {
      const answer = await rpc(gateway.mcpUrl, 'tools/list', undefined, {
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      });
      expect([sessionId, answer.status, answer.json.result?.tools?.length]).toEqual([
        sessionId,
        200,
        1,
      ]);
    }
  });
});

describe('stateless legacy mode and resource subscriptions', () => {
  it('offers no resources.subscribe (with sealed sessions it does) and refuses resources/subscribe and unsubscribe (400 -32600) without forwarding them', async () => {
    const repo = await V1Upstream.start({}, { subscribable: true });
    const start = (keys: string | undefined) =>
      GatewayProcess.start({
        mcp: gatewayConfig([], { upstreams: [upstream('repo', repo.url)] }),
        env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: keys },
        waitReady: true,
      });
    const [stateless, sealed] = await Promise.all([start(undefined), start(TEST_SESSION_KEYS)]);
    try {
      const offered = async (gateway: GatewayProcess) =>
        (await rpc(gateway.mcpUrl, 'initialize', INITIALIZE_PARAMS)).json.result.capabilities
          .resources;
      expect(await offered(stateless)).toEqual({ listChanged: false });
      expect(await offered(sealed)).toEqual({ listChanged: true, subscribe: true });
      for (const method of ['resources/subscribe', 'resources/unsubscribe']) {
        const answer = await rpc(
          stateless.mcpUrl,
          method,
          { uri: 'repo://readme' },
          { 'mcp-protocol-version': '2025-11-25' },
        );
        expect([answer.status, answer.json.error.code, answer.json.error.message]).toEqual([
          400,
          -32600,
          `${method} needs a session, and this gateway issues none (MCP_SESSION_KEYS is not set): resource updates cannot be delivered`,
        ]);
      }
      expect(repo.requestsFor('resources/subscribe')).toHaveLength(0);
      expect(repo.requestsFor('resources/unsubscribe')).toHaveLength(0);
    } finally {
      await Promise.all([stateless.stop(), sealed.stop()]);
      await repo.stop();
    }
  });
});

describe('sealed sessions, for contrast (variant: keys present, or the local profile)', () => {
  let service: TestToolService;

  beforeAll(async () => {
    service = await TestToolService.start(manifest('svc', [tool({ name: 'svc.echo' })]));
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('with MCP_SESSION_KEYS: issues a session id, 404 for a forged one, sessions {mode: sealed, keySource: env}, no warning', async () => {
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
      env: { APP_PROFILE: 'staging', MCP_SESSION_KEYS: TEST_SESSION_KEYS },
    });
    try {
      const init = await rpc(gateway.mcpUrl, 'initialize', INITIALIZE_PARAMS);
      expect(init.headers.get('mcp-session-id')).toMatch(/^v1\.t1\./);
      const forged = await rpc(gateway.mcpUrl, 'tools/list', undefined, {
        'mcp-session-id': 'v1.t1.forged-token-value',
      });
      expect(forged.status).toBe(404);
      expect((await gateway.toolBundles()).sessions).toEqual({ mode: 'sealed', keySource: 'env' });
      expect(gateway.output).not.toContain('MCP_SESSION_KEYS is not set');
    } finally {
      await gateway.stop();
    }
  });

  it('local profile without MCP_SESSION_KEYS: a generated key, sessions {mode: sealed, keySource: generated}', async () => {
    const gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('svc', service, 'svc.')]),
      env: { APP_PROFILE: 'local', MCP_SESSION_KEYS: undefined },
    });
    try {
      const init = await rpc(gateway.mcpUrl, 'initialize', INITIALIZE_PARAMS);
      expect(init.headers.get('mcp-session-id')).toMatch(/^v1\.local\./);
      expect((await gateway.toolBundles()).sessions).toEqual({
        mode: 'sealed',
        keySource: 'generated',
      });
    } finally {
      await gateway.stop();
    }
  });
});
