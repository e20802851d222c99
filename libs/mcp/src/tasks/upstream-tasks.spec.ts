import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import type { RegistryService } from '@app/registry';
import { ForwardedError } from '../errors/gateway-error';
import { SerializedResult, type MethodContext } from '../methods/method-handler';
import type { UpstreamRouter } from '../relay/upstream-router';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { TaskIds, urlDigest } from './task-ids';
import { UpstreamTasks } from './upstream-tasks';

const config = {
  sessionKeys: [{ kid: 'a', key: Buffer.alloc(32, 1) }],
  mcp: { identity: 'gw' },
} as unknown as GatewayConfig;
const ids = new TaskIds(new MrtrSeal(config));
const tasks = new UpstreamTasks(ids, {} as UpstreamRouter, {} as RegistryService);
const jobs = { id: 'jobs', url: 'http://jobs/mcp' } as UpstreamDefinition;
const TASKS = 'io.modelcontextprotocol/tasks';
const context = (protocolVersion: string, caps: object): MethodContext =>
  ({ protocolVersion, headers: {}, rawBody: '', clientCapabilities: caps }) as MethodContext;
const created = { resultType: 'task', taskId: 'u-1', status: 'working', ttlMs: 1000 };

describe('UpstreamTasks.handOut (docs/operations.md §10 "Tasks")', () => {
  it('gives a declaring 2026 request the sealed id, every other member as the upstream wrote it', () => {
    const out = tasks.handOut(
      new SerializedResult(JSON.stringify(created), created),
      jobs,
      'jobs__slow',
      context('2026-07-28', { extensions: { [TASKS]: {} } }),
    ) as Record<string, unknown>;
    expect(out).toEqual({ ...created, taskId: expect.stringMatching(/^gwtk1\./) });
    expect(ids.open(out.taskId, undefined)).toEqual({
      owner: {
        kind: 'upstream',
        id: 'jobs',
        urlDigest: urlDigest('http://jobs/mcp'),
        tool: 'jobs__slow',
      },
      taskId: 'u-1',
    });
  });

  it('leaves every other result alone', () => {
    const result = { content: [], resultType: 'complete' };
    expect(tasks.handOut(result, jobs, 'jobs__slow', context('2026-07-28', {}))).toBe(result);
  });

  it('refuses a task for a request that did not declare the extension, in either era, and one without a taskId', () => {
    for (const ctx of [
      context('2026-07-28', {}),
      context('2025-11-25', { extensions: { [TASKS]: {} } }),
    ])
      expect(() => tasks.handOut(created, jobs, 'jobs__slow', ctx)).toThrow(ForwardedError);
    expect(() =>
      tasks.handOut(
        { ...created, taskId: undefined },
        jobs,
        'jobs__slow',
        context('2026-07-28', { extensions: { [TASKS]: {} } }),
      ),
    ).toThrow('without a taskId');
    expect(() =>
      tasks.handOut(
        { ...created, taskId: 'x'.repeat(1025) },
        jobs,
        'jobs__slow',
        context('2026-07-28', { extensions: { [TASKS]: {} } }),
      ),
    ).toThrow('over 1024 characters');
  });
});

describe('UpstreamTasks.forward (docs/operations.md §10 "Tasks")', () => {
  const answering = (answer: object) => {
    const registry = {
      current: () => ({ extras: { upstreams: new Map([['jobs', { upstream: jobs }]]) } }),
    } as unknown as RegistryService;
    const router = { forward: () => Promise.resolve(answer) } as unknown as UpstreamRouter;
    return new UpstreamTasks(ids, router, registry);
  };
  const owner = { kind: 'upstream', id: 'jobs', urlDigest: urlDigest(jobs.url) } as const;
  const ctx = context('2026-07-28', { extensions: { [TASKS]: {} } });

  it("gives the client's id back on the upstream's DetailedTask; an empty acknowledgement passes", async () => {
    const detailed = await answering({ taskId: 'u-1', status: 'working' }).forward(
      'tasks/get',
      owner,
      'u-1',
      'gwtk1.client',
      {},
      ctx,
    );
    expect(detailed).toEqual({ taskId: 'gwtk1.client', status: 'working' });
    for (const method of ['tasks/cancel', 'tasks/update'])
      expect(await answering({}).forward(method, owner, 'u-1', 'gwtk1.client', {}, ctx)).toEqual(
        {},
      );
  });

  it("refuses a tasks/get answer without a taskId, or with another task's, as a broken answer (-32603)", async () => {
    await expect(
      answering({ status: 'working' }).forward('tasks/get', owner, 'u-1', 'gwtk1.c', {}, ctx),
    ).rejects.toThrow(
      new ForwardedError(-32603, "Upstream jobs answered tasks/get without the task's id"),
    );
    await expect(
      answering({ taskId: 'u-2', status: 'working' }).forward(
        'tasks/get',
        owner,
        'u-1',
        'gwtk1.c',
        {},
        ctx,
      ),
    ).rejects.toThrow("Upstream jobs answered tasks/get with another task's id");
  });
});
