import { EventEmitter } from 'node:events';
import {
  markClosing,
  REVIVE_AFTER_MS,
  reviveWhenEnded,
  type RevivableRedis,
} from './sentinel-revival';

/**
 * The revival of a Sentinel connection ioredis ended on its own (sentinel-revival.ts). The race
 * that ends it (the sentinels' +switch-master while the client is connecting again) depends on
 * timing a test cannot hold still, so the client here is a stand-in with ioredis' status and
 * connect(); the Sentinel failover e2e suite runs the real thing.
 */
class StandIn extends EventEmitter {
  status = 'ready';
  readonly connect = jest.fn(() => {
    this.status = 'connecting';
    return this.outcome;
  });
  outcome: Promise<void> = Promise.resolve();

  end(): void {
    this.status = 'end';
    this.emit('end');
  }
}

const revivable = (client: StandIn): RevivableRedis => client as unknown as RevivableRedis;

describe('reviveWhenEnded', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('connects again a connection that ended without being closed, after the delay', () => {
    const client = new StandIn();
    reviveWhenEnded(revivable(client));
    client.end();
    jest.advanceTimersByTime(REVIVE_AFTER_MS - 1);
    expect(client.connect).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(client.connect).toHaveBeenCalledTimes(1);
  });

  it('leaves closed a connection closed on purpose (quitRedis marks it)', () => {
    const client = new StandIn();
    reviveWhenEnded(revivable(client));
    markClosing(client);
    client.end();
    jest.advanceTimersByTime(REVIVE_AFTER_MS * 10);
    expect(client.connect).not.toHaveBeenCalled();
  });

  it('does not connect a connection that is no longer ended when the delay is over', () => {
    const client = new StandIn();
    reviveWhenEnded(revivable(client));
    client.end();
    client.status = 'connecting';
    jest.advanceTimersByTime(REVIVE_AFTER_MS);
    expect(client.connect).not.toHaveBeenCalled();
  });

  it('a connect that fails (and ends it again) is tried again, never thrown', async () => {
    const client = new StandIn();
    reviveWhenEnded(revivable(client));
    client.outcome = Promise.reject(new Error('Connection is closed.'));
    client.end();
    jest.advanceTimersByTime(REVIVE_AFTER_MS);
    await Promise.resolve();
    client.end();
    client.outcome = Promise.resolve();
    jest.advanceTimersByTime(REVIVE_AFTER_MS);
    expect(client.connect).toHaveBeenCalledTimes(2);
  });
});
