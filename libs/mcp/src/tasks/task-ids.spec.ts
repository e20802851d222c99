import type { GatewayConfig } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import { MrtrSeal } from '../sealing/mrtr-seal';
import { callerDigest } from '../session/caller-key';
import { mayUseUpstreamTask, TaskIds, UNBOUNDED_TASK_ID_MILLIS, urlDigest } from './task-ids';

const KEY = Buffer.alloc(32, 7);
const config = (identity = 'gw') =>
  ({ sessionKeys: [{ kid: 'a', key: KEY }], mcp: { identity } }) as unknown as GatewayConfig;
const caller = (subject: string): CallerIdentity => ({
  subject,
  scopes: [],
  claims: {},
  token: 't',
});

describe('TaskIds (docs/operations.md §10 "Tasks")', () => {
  const ids = new TaskIds(new MrtrSeal(config()));
  const alice = caller('alice');

  it('opens for the caller it was handed to, with the owner and its own id', () => {
    const id = ids.handOut(
      { kind: 'upstream', id: 'jobs', source: 'http://jobs/mcp', tool: 'jobs__slow' },
      'u-1',
      alice,
      60_000,
    );
    expect(id).toMatch(/^gwtk1\.a\./);
    expect(id).not.toContain('u-1');
    expect(ids.open(id, caller('alice'))).toEqual({
      owner: {
        kind: 'upstream',
        id: 'jobs',
        urlDigest: urlDigest('http://jobs/mcp'),
        tool: 'jobs__slow',
      },
      taskId: 'u-1',
    });
    const gw = { kind: 'gateway', source: 'jobs', tool: 'jobs.report' } as const;
    const own = ids.handOut(gw, 'g-1', undefined, null);
    expect(ids.open(own, undefined)).toEqual({ owner: gw, taskId: 'g-1' });
  });

  it('is unknown to another caller, to no caller, to another gateway identity, and once expired', () => {
    const id = ids.handOut(
      { kind: 'upstream', id: 'jobs', source: 'http://jobs/mcp', tool: 'jobs__slow' },
      'u-1',
      alice,
      1_000,
      0,
    );
    expect(ids.open(id, caller('bob'))).toBeUndefined();
    expect(ids.open(id, undefined)).toBeUndefined();
    expect(new TaskIds(new MrtrSeal(config('other'))).open(id, alice)).toBeUndefined();
    // ttlMs 1 s (+ 1 min of slack) from time 0: long gone
    expect(ids.open(id, alice)).toBeUndefined();
    expect(ids.open('gwtk1.a.AAAA', alice)).toBeUndefined();
    expect(ids.open(42, alice)).toBeUndefined();
  });

  it('is unknown to another OAuth client of the same user: the id binds sub and client_id, as requestState', () => {
    const gw = { kind: 'gateway', source: 'w', tool: 'w.report' } as const;
    const one = { ...alice, clientId: 'app-one' };
    const id = ids.handOut(gw, 'g-1', one, 60_000);
    expect(ids.open(id, { ...alice, clientId: 'app-one' })).toEqual({ owner: gw, taskId: 'g-1' });
    expect(ids.open(id, { ...alice, clientId: 'app-two' })).toBeUndefined();
    expect(ids.open(id, alice)).toBeUndefined();
  });

  it('an id sealed by an earlier build (the caller as sub only, `c`) opens for nobody', () => {
    const seal = new MrtrSeal(config());
    const old = seal.seal('task-id', {
      o: 'g',
      s: 'w',
      n: 'w.report',
      t: 'g-1',
      c: callerDigest(alice),
      exp: Date.now() + 60_000,
    } as unknown as { exp: number });
    expect(new TaskIds(seal).open(old, alice)).toBeUndefined();
  });

  it('lives for the task ttlMs plus a minute, at most a week; a task without one for a week', () => {
    const seal = new MrtrSeal(config());
    const spy = jest.spyOn(seal, 'seal');
    const t = new TaskIds(seal);
    t.handOut({ kind: 'gateway', source: 's', tool: 't' }, 'x', undefined, 5_000, 1_000);
    t.handOut({ kind: 'gateway', source: 's', tool: 't' }, 'x', undefined, null, 1_000);
    t.handOut(
      { kind: 'gateway', source: 's', tool: 't' },
      'x',
      undefined,
      10 * UNBOUNDED_TASK_ID_MILLIS,
      1_000,
    );
    expect(spy.mock.calls.map(([, p]) => p.exp)).toEqual([
      1_000 + 5_000 + 60_000,
      1_000 + UNBOUNDED_TASK_ID_MILLIS,
      1_000 + UNBOUNDED_TASK_ID_MILLIS,
    ]);
  });
});

describe('mayUseUpstreamTask: a task of an upstream is the tool call that created it', () => {
  const owner = { kind: 'upstream', id: 'jobs', urlDigest: 'd', tool: 'jobs__slow' } as const;
  const tools = (names: string[]) =>
    ({ all: false, key: 'k', sources: new Set<string>(), tools: new Set(names) }) as never;

  it('a grant of the tool alone (a tool-pattern virtual server, a tools rule) may use it; one without it may not', () => {
    expect(mayUseUpstreamTask(tools(['jobs__slow']), owner)).toBe(true);
    expect(mayUseUpstreamTask(tools(['jobs__fast']), owner)).toBe(false);
    expect(mayUseUpstreamTask(undefined, owner)).toBe(true);
  });

  it('an id that names no tool is decided by its source, as before', () => {
    const { tool: _tool, ...old } = owner;
    expect(mayUseUpstreamTask(tools(['jobs__slow']), old)).toBe(false);
    expect(
      mayUseUpstreamTask(
        { all: false, key: 'k', sources: new Set(['jobs']), tools: new Set() } as never,
        old,
      ),
    ).toBe(true);
  });
});
