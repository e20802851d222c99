import { GatewayProcess, waitFor } from '../support/gateway-process';
import { bundle, gatewayConfig, manifest, tool } from '../support/fixtures';
import { callTool, rpc } from '../support/rpc';
import { connectV1, connectV2 } from '../support/sdk-clients';
import { TestToolService } from '../support/tool-service';

/** What the official v1 TypeScript SDK emits for a zod input schema (wire notes §2.4, W-v1). */
const DRAFT07_INPUT = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
};

const ICONS = [
  {
    src: 'https://cdn.example/echo.svg',
    mimeType: 'image/svg+xml',
    sizes: ['any'],
    theme: 'light',
  },
];

/**
 * docs/operations.md §6 "Schema dialects", "Tool fields": a declared JSON Schema dialect no longer
 * sinks the bundle, and every MCP 2025-11-25 Tool field reaches tools/list as published, `_meta`
 * excepted.
 */
describe('schema dialects and every Tool field, through a real gateway', () => {
  let service: TestToolService;
  let big: TestToolService;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    // Over 256 KiB: validated in the manifest worker thread, which must know the dialects too.
    big = await TestToolService.start(
      manifest('big', [
        {
          ...tool({
            name: 'big.draft07',
            description: `A large tool. ${'x'.repeat(300 * 1024)}`,
            inputSchema: DRAFT07_INPUT,
            outputSchema: {
              $schema: 'https://json-schema.org/draft/2019-09/schema',
              type: 'object',
            },
          }),
          execution: { taskSupport: 'optional' },
        },
      ]),
    );
    service = await TestToolService.start(
      manifest('d', [
        tool({ name: 'd.draft07', inputSchema: DRAFT07_INPUT }),
        tool({
          name: 'd.draft07nohash',
          inputSchema: { ...DRAFT07_INPUT, $schema: 'http://json-schema.org/draft-07/schema' },
        }),
        tool({
          name: 'd.v2019',
          inputSchema: {
            $schema: 'https://json-schema.org/draft/2019-09/schema',
            type: 'object',
            $defs: { n: { type: 'integer' } },
            properties: { n: { $ref: '#/$defs/n' } },
          },
        }),
        {
          ...tool({ name: 'd.fields', title: 'All fields', annotations: { readOnlyHint: true } }),
          icons: ICONS,
          execution: { taskSupport: 'forbidden' },
          'x-internal-owner': 'team-a',
        },
      ]),
    );
    // A first pull with these schemas must publish a catalog and make the gateway ready.
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('d', service, 'd.'), bundle('big', big, 'big.')]),
      env: { LOG_LEVEL: 'debug' },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
    await big?.stop();
  });

  it('a draft-07 $schema (the official TypeScript SDK) is published on the first pull, unchanged, and the tool is callable', async () => {
    expect(await gateway.bundleStatus('d')).toMatchObject({ status: 'healthy', toolCount: 4 });
    const client = await connectV1(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'd.draft07')?.inputSchema).toEqual(DRAFT07_INPUT);
      const result = await client.callTool({ name: 'd.draft07', arguments: { text: 'hi' } });
      expect(result.isError).toBeFalsy();
      expect((result.content as Array<{ text: string }>)[0]?.text).toBe(
        '{"received":{"text":"hi"}}',
      );
    } finally {
      await client.close();
    }
  });

  it('variant: draft-07 without the trailing # and 2019-09 are published unchanged too', async () => {
    const answer = await rpc(gateway.mcpUrl, 'tools/list');
    const byName = new Map<string, any>(
      (answer.json.result.tools as any[]).map((t: any) => [t.name, t]),
    );
    expect(byName.get('d.draft07nohash')?.inputSchema.$schema).toBe(
      'http://json-schema.org/draft-07/schema',
    );
    expect(byName.get('d.v2019')?.inputSchema.$schema).toBe(
      'https://json-schema.org/draft/2019-09/schema',
    );
  });

  it('variant: a manifest large enough for the validation worker compiles its dialects there too', async () => {
    await gateway.waitForOutput(/big: validating a \d+-byte manifest in a worker thread/);
    expect(await gateway.bundleStatus('big')).toMatchObject({ status: 'healthy', toolCount: 1 });
    const listed = (await rpc(gateway.mcpUrl, 'tools/list')).json.result.tools.find(
      (t: any) => t.name === 'big.draft07',
    );
    expect(listed.inputSchema).toEqual(DRAFT07_INPUT);
    expect(listed.execution).toEqual({ taskSupport: 'optional' });
  });

  it('icons and execution {"taskSupport":"forbidden"} reach tools/list as published; _meta and unknown fields do not', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'd.fields')).toEqual({
        name: 'd.fields',
        title: 'All fields',
        description: '[marker:d.fields] a test tool',
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: true },
        icons: ICONS,
        execution: { taskSupport: 'forbidden' },
      });
      expect(JSON.stringify(tools)).not.toContain('_meta');
      expect(JSON.stringify(tools)).not.toContain('x-internal-owner');
    } finally {
      await client.close();
    }
  });

  it('variant: the v2 SDK client sees the same icons', async () => {
    const client = await connectV2(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'd.fields')?.icons).toEqual(ICONS);
    } finally {
      await client.close();
    }
  });
});

/**
 * docs/operations.md §2 "detail", and an unknown dialect (docs/operations.md §6 "Schema dialects"):
 * a reachable Tool Service whose manifest breaks a rule keeps the contract's status (§9:
 * `unreachable` means "enabled, never succeeded"; `degraded` once a good copy exists) and its type
 * name, and gains a `detail` naming the manifest path and the rule, never a URL, a tool's name
 * (it holds the namePrefix, contract §9) or a fragment of the answer; the log names the tool.
 */
describe('an invalid manifest: status, lastFailureReason and detail', () => {
  let service: TestToolService;
  let gateway: GatewayProcess;
  const DRAFT04 = 'http://json-schema.org/draft-04/schema#';

  beforeAll(async () => {
    service = await TestToolService.start(
      manifest('my', [{ ...tool({ name: 'my.echo' }), _meta: {} }]),
    );
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([bundle('my', service, 'my.')]),
    });
    await waitFor(async () => (await gateway.bundleStatus('my')).lastAttemptAt !== null);
  });

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
  });

  /** A tools/call of an unknown tool makes the gateway pull again (contract §8). */
  async function pullAgain(): Promise<void> {
    const before = (await gateway.bundleStatus('my')).lastAttemptAt;
    await callTool(gateway.mcpUrl, 'my.nothing');
    await waitFor(async () => (await gateway.bundleStatus('my')).lastAttemptAt !== before);
  }

  it('shows `tools[0]: _meta.version is required` with status unreachable (never succeeded) and says it in the log with the name', async () => {
    const status = await gateway.bundleStatus('my');
    expect(status).toMatchObject({
      status: 'unreachable',
      lastFailureReason: 'ToolVersionError',
      detail: 'tools[0]: _meta.version is required',
    });
    await gateway.waitForOutput('_meta.version is required');
    expect(gateway.output).toMatch(
      /rejected \(ToolVersionError\): tools\[0\] \\"my\.echo\\": _meta\.version is required; /,
    );
    expect((await gateway.readiness()).status).toBe(503);
  });

  it('variant: an unknown $schema (draft-04) is an InputSchemaError; the URI is in the log, not in the detail', async () => {
    service.setManifest(
      manifest('my', [
        tool({ name: 'my.echo', inputSchema: { $schema: DRAFT04, type: 'object' } }),
      ]),
    );
    await pullAgain();
    const status = await gateway.bundleStatus('my');
    expect(status).toMatchObject({ status: 'unreachable', lastFailureReason: 'InputSchemaError' });
    expect(status.detail).toBe(
      'tools[0]: inputSchema $schema is not a supported JSON Schema dialect (draft-06, draft-07, 2019-09, 2020-12; none means 2020-12)',
    );
    const view = JSON.stringify(await gateway.toolBundles());
    expect(view).not.toContain('http');
    expect(view).not.toContain('my.echo');
    await gateway.waitForOutput(`$schema ${DRAFT04}`);
  });

  it('a good manifest ends it: healthy, ready, no detail; a later invalid one shows degraded with its detail', async () => {
    service.setManifest(manifest('my', [tool({ name: 'my.echo' })]));
    await pullAgain();
    const healthy = await gateway.bundleStatus('my');
    expect(healthy).toMatchObject({ status: 'healthy', lastFailureReason: null });
    expect('detail' in healthy).toBe(false);
    await gateway.waitForReady();

    service.setManifest({ ...manifest('my', [tool({ name: 'my.echo' })]), bundleId: 'http://x' });
    await pullAgain();
    expect(await gateway.bundleStatus('my')).toMatchObject({
      status: 'degraded',
      lastFailureReason: 'BundleIdMismatchError',
      detail: 'bundleId is not the configured id "my"',
    });
  });

  it('a failure that is not a validation failure carries no detail', async () => {
    await service.stop();
    await pullAgain();
    const status = await gateway.bundleStatus('my');
    expect(status).toMatchObject({ status: 'degraded', lastFailureReason: 'ManifestConnectError' });
    expect('detail' in status).toBe(false);
  });
});
