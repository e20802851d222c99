import { EventEmitter } from 'node:events';
import type { GatewayConfig } from '@app/config';
import type { RedisClient } from '@app/redis';
import { MrtrSeal } from '../sealing/mrtr-seal';
import {
  MAX_BUS_MESSAGE_CHARS,
  MAX_BUS_SESSION_CHARS,
  RedisResourceUpdateBus,
  sessionGroups,
  type ResourceBusMessage,
} from './resource-update-bus';

const KEY = { kid: 'k1', key: Buffer.alloc(32, 7) };

function config(identity = 'gw', keys = [KEY]): GatewayConfig {
  return {
    sessionKeys: keys,
    mcp: { identity, redis: { keyPrefix: 'p' } },
  } as unknown as GatewayConfig;
}

/** One pub/sub channel: what a client publishes reaches every subscriber's 'message'. */
class FakeRedis extends EventEmitter {
  static readonly all: FakeRedis[] = [];
  constructor() {
    super();
    FakeRedis.all.push(this);
  }
  subscribe(): Promise<number> {
    return Promise.resolve(1);
  }
  publish(channel: string, text: string): Promise<number> {
    for (const r of FakeRedis.all) r.emit('message', channel, text);
    return Promise.resolve(FakeRedis.all.length);
  }
}

function bus(cfg = config()): { received: ResourceBusMessage[]; bus: RedisResourceUpdateBus } {
  const received: ResourceBusMessage[] = [];
  const b = new RedisResourceUpdateBus(
    new FakeRedis() as unknown as RedisClient,
    new FakeRedis() as unknown as RedisClient,
    cfg,
    new MrtrSeal(cfg),
  );
  b.onMessage((m) => received.push(m));
  return { received, bus: b };
}

const UPDATE = JSON.stringify({
  jsonrpc: '2.0',
  method: 'notifications/resources/updated',
  params: { uri: 'repo://a' },
});

describe('RedisResourceUpdateBus', () => {
  afterEach(() => FakeRedis.all.splice(0));

  it("passes another replica's message, not its own", async () => {
    const a = bus();
    const b = bus();
    a.bus.publish({ op: 'deliver', sessions: ['s1'], sourceId: 'repo', message: UPDATE });
    await Promise.resolve();
    expect(b.received).toEqual([
      { op: 'deliver', sessions: ['s1'], sourceId: 'repo', message: UPDATE },
    ]);
    expect(a.received).toEqual([]);
  });

  it('drops what is not sealed with its keys for its identity: junk, plain envelopes, another identity or key', async () => {
    const b = bus();
    const other = bus(config('other-gateway'));
    const otherKey = bus(config('gw', [{ kid: 'k1', key: Buffer.alloc(32, 9) }]));
    const hostile = new FakeRedis();
    const forged: ResourceBusMessage = {
      op: 'forget',
      session: 's1',
      upstreamId: 'repo',
      uri: 'repo://a',
    };
    await hostile.publish('c', 'not json');
    await hostile.publish('c', JSON.stringify({ from: 'x', body: forged }));
    await hostile.publish('c', 'gwrb1.k1.AAAA');
    other.bus.publish(forged);
    otherKey.bus.publish(forged);
    await Promise.resolve();
    expect(b.received).toEqual([]);
  });

  it('does not open a message longer than any replica publishes', async () => {
    const b = bus();
    const open = jest.spyOn(MrtrSeal.prototype, 'open');
    await new FakeRedis().publish('c', `gwrb1.k1.${'A'.repeat(MAX_BUS_MESSAGE_CHARS)}`);
    expect(open).not.toHaveBeenCalled();
    expect(b.received).toEqual([]);
    open.mockRestore();
  });

  it('publishes an update for many sessions in groups, each under the bound, none lost', async () => {
    const a = bus();
    const b = bus();
    const sessions = Array.from({ length: 3000 }, (_, i) => `s${i}.${'x'.repeat(200)}`);
    const published: string[] = [];
    const [aPublisher] = FakeRedis.all;
    aPublisher?.on('message', (_c: string, text: string) => published.push(text));
    a.bus.publish({ op: 'deliver', sessions, sourceId: 'repo', message: UPDATE });
    await Promise.resolve();
    expect(published.length).toBeGreaterThan(1);
    for (const text of published) expect(text.length).toBeLessThanOrEqual(MAX_BUS_MESSAGE_CHARS);
    expect(b.received.flatMap((m) => (m.op === 'deliver' ? m.sessions : []))).toEqual(sessions);
  });

  it('groups sessions by the characters they take, one at least', () => {
    const big = 'y'.repeat(MAX_BUS_SESSION_CHARS);
    expect(sessionGroups([big, 'a', 'b'])).toEqual([[big], ['a', 'b']]);
    expect(sessionGroups([])).toEqual([]);
  });
});
