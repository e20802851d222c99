import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import type { GatewayConfig } from '@app/config';
import type { RedisClient } from '@app/redis';
import { RedisLastGoodStore } from './redis-last-good.store';

/** A connected client whose GETs answer from `values`; counts the GETs. */
function fakeRedis(values: Map<string, string>): RedisClient {
  const client = Object.assign(new EventEmitter(), {
    status: 'ready',
    defineCommand: () => undefined,
    connect: () => Promise.resolve(),
    get: (key: string) => Promise.resolve(values.get(key) ?? null),
    quit: () => Promise.resolve('OK'),
    disconnect: () => undefined,
  });
  return client as unknown as RedisClient;
}

const config = {
  mcp: {
    identity: 'gw',
    redis: { keyPrefix: 'p', ttlSeconds: 60, connectTimeoutMillis: 100 },
    discovery: { maxManifestBytes: 1024 },
    execution: { maxResponseBytes: 1000 },
  },
} as unknown as GatewayConfig;

function listsRecord(id: string, description: string): string {
  return JSON.stringify({
    v: 1,
    upstreamId: id,
    fetchedAtMs: Date.now() - 1000,
    writtenBy: 'other',
    lists: {
      era: '2025',
      capabilities: { tools: {} },
      tools: [{ name: 't', description, inputSchema: { type: 'object' } }],
      resources: [],
      resourceTemplates: [],
      prompts: [],
    },
  });
}

describe('RedisLastGoodStore.loadUpstreams: stored lists are bounded before they are parsed', () => {
  afterEach(() => jest.restoreAllMocks());

  it('reads lists within ten times execution.maxResponseBytes and room for the record', async () => {
    const values = new Map<string, string>();
    const store = new RedisLastGoodStore(fakeRedis(values), config);
    values.set(store.upstreamListsKey('u'), listsRecord('u', 'x'.repeat(5000)));
    const found = await store.loadUpstreams(['u']);
    expect(found.get('u')?.writtenBy).toBe('other');
  });

  it('treats a longer value as absent without parsing it, and warns once for it', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const parse = jest.spyOn(JSON, 'parse');
    const values = new Map<string, string>();
    const store = new RedisLastGoodStore(fakeRedis(values), config);
    // 10 × 1000 + 65,536 characters is the bound
    values.set(store.upstreamListsKey('u'), listsRecord('u', 'x'.repeat(10 * 1000 + 65_536)));
    expect((await store.loadUpstreams(['u'])).size).toBe(0);
    expect((await store.loadUpstreams(['u'])).size).toBe(0);
    expect(parse).not.toHaveBeenCalled();
    const lines = warn.mock.calls.map(([line]) => String(line));
    expect(lines.filter((l) => l.includes('upstream u'))).toEqual([
      expect.stringMatching(/characters, more than 75536 .*treated as absent/),
    ]);
  });
});
