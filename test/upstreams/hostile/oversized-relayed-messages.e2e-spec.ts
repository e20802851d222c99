import { GatewayProcess } from '../../support/gateway-process';
import { gatewayConfig, upstream } from '../../support/fixtures';
import { modernListen, modernRequest } from '../../support/modern-rpc';
import { openLegacySession, rpc } from '../../support/rpc';
import { ScriptedUpstream } from '../../support/scripted-upstream';

/**
 * `listen.maxQueuedBytes` (1 MiB) bounds what a stream holds for a client that does not read
 * (docs/operations.md §10 "Relaying"): it must not cut a client that reads because one message
 * is larger than the bound. An upstream's one 1.2 MB `notifications/message` mid-call cut the
 * SSE answer of a reading client (no response at all), and a 2026 upstream's 2 MB task status
 * message closed every listen that watched the task, list changes of other sources included.
 */
const TASKS = 'io.modelcontextprotocol/tasks';
const CAPS = { extensions: { [TASKS]: {} } };

describe('one message larger than listen.maxQueuedBytes, to a client that reads', () => {
  let legacy: ScriptedUpstream;
  let tasks: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [legacy, tasks] = await Promise.all([
      ScriptedUpstream.start({
        tools: [{ name: 'big', inputSchema: { type: 'object' } }],
        sessionId: 'S1',
      }),
      ScriptedUpstream.start({
        era: '2026',
        tools: [{ name: 'job', inputSchema: { type: 'object' } }],
        capabilities: { tools: {}, extensions: { [TASKS]: {} } },
      }),
    ]);
    legacy.onTool('big', () => ({
      events: [
        {
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', data: 'x'.repeat(1_200_000) },
        },
      ],
      result: { content: [{ type: 'text', text: 'done' }] },
    }));
    const now = () => new Date().toISOString();
    tasks.onTool('job', () => ({
      result: {
        resultType: 'task',
        taskId: 'up-1',
        status: 'working',
        ttlMs: 600_000,
        pollIntervalMs: 1000,
        createdAt: now(),
        lastUpdatedAt: now(),
      },
    }));
    // every read says something new (a notification each), 2 MB of it
    tasks.on('tasks/get', (req) => ({
      result: {
        resultType: 'complete',
        taskId: req.params!.taskId,
        status: 'working',
        statusMessage: `${Date.now()} ${'m'.repeat(2_000_000)}`,
        ttlMs: 600_000,
        pollIntervalMs: 1000,
        createdAt: '2026-12-05T00:00:00Z',
        lastUpdatedAt: now(),
      },
    }));
    gateway = await GatewayProcess.start({
      mcp: gatewayConfig([], {
        upstreams: [upstream('leg', legacy.url), upstream('tk', tasks.url)],
      }),
      waitReady: true,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([legacy?.stop(), tasks?.stop()]);
  });

  it("a 2025 client reading the call's SSE answer gets the 1.2 MB notification and the result", async () => {
    const session = await openLegacySession(gateway.mcpUrl);
    const answer = await rpc(
      gateway.mcpUrl,
      'tools/call',
      { name: 'leg__big', arguments: {} },
      session,
    );
    expect(answer.status).toBe(200);
    const messages = answer.text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    expect(messages.map((m) => m.method ?? m.id)).toEqual(['notifications/message', 1]);
    expect(messages[0].params.data).toHaveLength(1_200_000);
    expect(messages[1].result.content).toEqual([{ type: 'text', text: 'done' }]);
  }, 60_000);

  it('a listen watching a task with a 2 MB status message gets bounded notifications and stays open', async () => {
    const created = await modernRequest(
      gateway.mcpUrl,
      'tools/call',
      { name: 'tk__job', arguments: {} },
      CAPS,
    );
    const taskId = created.json.result.taskId as string;
    const stream = await modernListen(
      gateway.mcpUrl,
      'watch',
      { taskIds: [taskId], toolsListChanged: true },
      CAPS,
    );
    try {
      const isTask = (m: any) => m.method === 'notifications/tasks' && m.params?.taskId === taskId;
      // two notifications: the stream outlived the first one
      await stream.waitForMessage(() => stream.messages.filter(isTask).length >= 2, 20_000);
      expect(stream.ended).toBe(false);
      for (const m of stream.messages.filter(isTask)) {
        expect(m.params.status).toBe('working');
        expect(m.params.statusMessage).toMatch(/^\d+ m+$/);
        expect(m.params.statusMessage.length).toBe(1024);
        expect(JSON.stringify(m).length).toBeLessThan(65_536);
      }
    } finally {
      stream.close();
    }
  }, 60_000);
});
