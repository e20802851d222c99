import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SchemaChecker, validateManifest } from '@app/registry';
import { GatewayProcess, REPO_ROOT, waitFor } from '../support/gateway-process';
import { connectV1 } from '../support/sdk-clients';

/**
 * The sample insurance Tool Service of `npm start` behind the gateway, driven by the official
 * SDK client as the README shows (README.md "Quick start").
 */
describe('the sample Tool Service behind the gateway', () => {
  let sample: ChildProcess;
  let sampleOutput = '';
  let samplePort = 0;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    sample = spawn(process.execPath, [join(REPO_ROOT, 'dist/apps/sample-tool-service/main.js')], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        SAMPLE_SLOW_MILLIS: '1500',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    sample.stdout?.setEncoding('utf8').on('data', (d: string) => (sampleOutput += d));
    await waitFor(() => {
      const match = /Sample Tool Service on http:\/\/127\.0\.0\.1:(\d+)/.exec(sampleOutput);
      if (match) samplePort = Number(match[1]);
      return samplePort > 0;
    }, 15_000);
    const base = `http://127.0.0.1:${samplePort}`;
    gateway = await GatewayProcess.start({
      mcp: {
        identity: 'mcp-insurance-core',
        registry: { refreshIntervalSeconds: 30, refreshJitterSeconds: 5 },
        bundles: [
          {
            id: 'insurance-processing',
            manifestUrl: `${base}/tool-manifest`,
            baseEndpoint: `${base}/mcp`,
            namePrefix: 'processing.',
          },
        ],
      },
      waitReady: true,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    sample?.kill('SIGTERM');
  });

  it('lists the four sample tools with real input schemas', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'processing.claim.status',
        'processing.policy.lookup',
        'processing.premium.quote',
        'processing.underwriting.assess',
      ]);
      const quote = tools.find((t) => t.name === 'processing.premium.quote')!;
      expect(quote.inputSchema.required).toEqual(['age', 'coverage']);
      expect(quote.annotations).toMatchObject({ readOnlyHint: true });
    } finally {
      await client.close();
    }
  });

  it('answers a policy lookup, a claim status and a premium quote', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const text = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args });
        expect(result.isError).toBeFalsy();
        return JSON.parse((result.content as Array<{ text: string }>)[0]!.text);
      };
      expect(await text('processing.policy.lookup', { policyNumber: 'P-100231' })).toMatchObject({
        holder: '김민지',
        status: 'active',
      });
      expect(await text('processing.claim.status', { claimId: 'C-2026-0042' })).toMatchObject({
        stage: 'assessment',
      });
      expect(
        await text('processing.premium.quote', { age: 40, coverage: 'standard' }),
      ).toMatchObject({ monthlyPremiumKrw: 43200, currency: 'KRW' });
    } finally {
      await client.close();
    }
  });

  it("turns bad input (refused against the quote tool's inputSchema) and an unknown policy 404 into isError results", async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const bad = await client.callTool({
        name: 'processing.premium.quote',
        arguments: { age: 12, coverage: 'basic' },
      });
      expect(bad.isError).toBe(true);
      // the gateway checks arguments before the service (docs/operations.md §6 "Argument validation")
      expect((bad.content as Array<{ text: string }>)[0]!.text).toContain('- /age: must be >= 18');
      const unknown = await client.callTool({
        name: 'processing.policy.lookup',
        arguments: { policyNumber: 'P-999999' },
      });
      expect(unknown.isError).toBe(true);
      expect((unknown.content as Array<{ text: string }>)[0]!.text).toContain('404');
    } finally {
      await client.close();
    }
  });

  it('waits for the slow underwriting tool within its 10 s timeout', async () => {
    const client = await connectV1(gateway.mcpUrl);
    try {
      const started = Date.now();
      const result = await client.callTool({
        name: 'processing.underwriting.assess',
        arguments: { policyNumber: 'P-100231', declaredConditions: ['asthma'] },
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(result.isError).toBeFalsy();
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
        riskClass: 'standard',
      });
    } finally {
      await client.close();
    }
  });

  it('reports the sample bundle healthy with its four tools', async () => {
    const status = await gateway.bundleStatus('insurance-processing');
    expect(status).toMatchObject({ status: 'healthy', toolCount: 4, source: 'remote' });
  });

  it.each([
    ['config/local-process-tools-manifest-sample-v1.json', 'insurance-processing', 'processing.'],
    ['config/local-tools-fixture.json', 'local-fixture', ''],
  ])('ships %s as a manifest the gateway accepts', async (file, bundleId, namePrefix) => {
    const body: unknown = JSON.parse(readFileSync(join(REPO_ROOT, file), 'utf8'));
    const result = await validateManifest(
      body,
      { bundleId, namePrefix, maxToolsPerBundle: 100 },
      new SchemaChecker(),
    );
    expect(result.ok).toBe(true);
  });
});
