import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { gatewayConfig, upstream } from '../support/fixtures';
import { GatewayProcess, waitFor } from '../support/gateway-process';
import { connectV1 } from '../support/sdk-clients';
import { EverythingServer } from '../support/server-everything';

interface TextContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text: string;
}

/**
 * The official v1 SDK client through the gateway to `@modelcontextprotocol/server-everything`
 * (upstream `everything`, prefix `everything__`): the lists, a long-running tool whose progress
 * notifications must reach the client while the call runs, a prompt, resources and a template.
 */
describe('v1 SDK client through the gateway to server-everything', () => {
  let everything: EverythingServer;
  let gateway: GatewayProcess;
  let client: Client;

  beforeAll(async () => {
    everything = await EverythingServer.start();
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], { upstreams: [upstream('everything', everything.url)] }),
      waitReady: true,
    });
    await waitFor(
      async () => {
        const res = await fetch(`${gateway.managementUrl}/actuator/upstreams`);
        const body = (await res.json()) as { upstreams: Array<{ id: string; status: string }> };
        return body.upstreams.find((u) => u.id === 'everything')?.status === 'healthy';
      },
      15_000,
      () => `upstream never healthy:\n${gateway.output}\n${everything.output}`,
    );
    client = await connectV1(gateway.mcpUrl);
  });

  afterAll(async () => {
    await client?.close();
    await gateway?.stop();
    await everything?.stop();
  });

  it('declares the capabilities the upstream offers', () => {
    const capabilities = client.getServerCapabilities();
    expect(capabilities).toMatchObject({ tools: {}, prompts: {}, resources: { subscribe: true } });
  });

  it('lists the tools, prompts, resources and templates, names prefixed and URIs unchanged', async () => {
    const { tools } = await client.listTools();
    const toolNames = tools.map((t) => t.name);
    expect(toolNames).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__get-sum',
        'everything__trigger-long-running-operation',
      ]),
    );
    expect(toolNames.every((n) => n.startsWith('everything__'))).toBe(true);

    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['everything__simple-prompt', 'everything__args-prompt']),
    );
    const args = prompts.find((p) => p.name === 'everything__args-prompt');
    expect(args?.arguments).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'city', required: true })]),
    );

    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    expect(resources.map((r) => r.uri)).toContain(
      'demo://resource/static/document/architecture.md',
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(
      expect.arrayContaining(['demo://resource/dynamic/text/{resourceId}']),
    );
  });

  it('relays the progress notifications of a long-running tool as they happen', async () => {
    const started = Date.now();
    const progress: Array<Progress & { at: number }> = [];
    const result = await client.callTool(
      {
        name: 'everything__trigger-long-running-operation',
        arguments: { duration: 1.5, steps: 3 },
      },
      undefined,
      { onprogress: (p) => progress.push({ ...p, at: Date.now() - started }) },
    );
    const finished = Date.now() - started;

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([
      {
        type: 'text',
        text: 'Long running operation completed. Duration: 1.5 seconds, Steps: 3.',
      },
    ]);
    expect(progress.map(({ progress: p, total }) => ({ progress: p, total }))).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
    // One step every 0.5 s: the first notification arrives while the call still runs, not
    // buffered until the result.
    expect(progress[0]?.at).toBeLessThan(finished - 400);
  });

  it('gets a prompt with arguments', async () => {
    const prompt = await client.getPrompt({
      name: 'everything__args-prompt',
      arguments: { city: 'Seoul', state: 'KR' },
    });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: "What's weather in Seoul, KR?" } },
    ]);
  });

  it('gets a prompt that embeds a resource', async () => {
    const prompt = await client.getPrompt({
      name: 'everything__resource-prompt',
      arguments: { resourceType: 'Text', resourceId: '2' },
    });
    expect(prompt.messages[1]).toMatchObject({
      role: 'user',
      content: {
        type: 'resource',
        resource: { uri: 'demo://resource/dynamic/text/2', mimeType: 'text/plain' },
      },
    });
  });

  it('reads a listed resource', async () => {
    const { contents } = await client.readResource({
      uri: 'demo://resource/static/document/architecture.md',
    });
    expect(contents).toHaveLength(1);
    const [doc] = contents as TextContents[];
    expect(doc).toMatchObject({
      uri: 'demo://resource/static/document/architecture.md',
      mimeType: 'text/markdown',
    });
    expect(doc?.text).toContain('Architecture');
  });

  it('reads resources through a template (text and blob)', async () => {
    const [text] = (await client.readResource({ uri: 'demo://resource/dynamic/text/7' }))
      .contents as TextContents[];
    expect(text).toMatchObject({ uri: 'demo://resource/dynamic/text/7', mimeType: 'text/plain' });
    expect(text?.text).toMatch(/^Resource 7: This is a plaintext resource/);

    const [blob] = (await client.readResource({ uri: 'demo://resource/dynamic/blob/7' }))
      .contents as Array<{ uri: string; blob: string }>;
    expect(blob?.uri).toBe('demo://resource/dynamic/blob/7');
    expect(Buffer.from(blob?.blob ?? '', 'base64').toString('utf8')).toMatch(/^Resource 7: /);
  });

  it('calls a tool with structured content', async () => {
    const result = await client.callTool({
      name: 'everything__get-structured-content',
      arguments: { location: 'New York' },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });
});
