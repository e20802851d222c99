import type { GatewayConfig, UpstreamDefinition } from '@app/config';
import { UpstreamConnections } from './upstream-connections.service';
import { UpstreamFailure } from './upstream-types';

/**
 * One registration per id (docs/operations.md §15 "Deleted means gone"): a definition of a
 * runtime registration deleted, changed or posted again since gets no connection, and the
 * next one of its id starts afresh.
 */

const config = {
  upstreams: [],
  version: '1',
  mcp: {
    identity: 'gw',
    execution: { maxConnectionsPerOrigin: 4, maxResponseBytes: 1024 * 1024 },
  },
} as unknown as GatewayConfig;

function definition(url: string, registration?: string): UpstreamDefinition {
  return {
    id: 'flip',
    url,
    namePrefix: 'flip__',
    enabled: true,
    protocol: 'auto',
    lists: 'snapshot',
    connectMillis: 1000,
    listMillis: 1000,
    callMillis: 1000,
    forwardHeaders: [],
    authorization: { mode: 'none' },
    ...(registration === undefined ? {} : { registration }),
  };
}

function failureOf(run: () => unknown): UpstreamFailure {
  try {
    run();
  } catch (err) {
    if (err instanceof UpstreamFailure) return err;
    throw err;
  }
  throw new Error('expected an UpstreamFailure');
}

describe('UpstreamConnections: one admitted registration per id', () => {
  let connections: UpstreamConnections;
  beforeEach(() => {
    connections = new UpstreamConnections(config);
  });
  afterEach(() => connections.onApplicationShutdown());

  it('gives the admitted registration its connection, and refuses a released one', async () => {
    const old = definition('http://127.0.0.1:1/mcp', '1.1.1');
    connections.admit(old);
    const first = connections.get(old);
    expect(connections.get(old)).toBe(first);

    await connections.release('flip');
    // a call that started before the DELETE: nothing is created for it, nothing is sent
    const failure = failureOf(() => connections.get(old));
    expect(failure.kind).toBe('removed');
    expect(failure.message).not.toContain('127.0.0.1');
  });

  it('gives the next registration of the id a new connection at its own URL; the earlier one stays refused', () => {
    const old = definition('http://127.0.0.1:1/mcp', '1.1.1');
    connections.admit(old);
    const oldConnection = connections.get(old);
    const oldAgent = connections.guardedDispatcher(old);
    void connections.release('flip');
    const next = definition('http://127.0.0.1:2/mcp', '5.5.2');
    connections.admit(next);
    const connection = connections.get(next);
    expect(connection).not.toBe(oldConnection);
    // the guarded Agent is the new registration's own, not the one the release closes
    expect(connections.guardedDispatcher(next)).not.toBe(oldAgent);
    expect(failureOf(() => connections.get(old)).kind).toBe('removed');
    expect(connections.forAnswer(next)).toBe(connection);
    expect(failureOf(() => connections.forAnswer(old)).kind).toBe('removed');
  });

  it('a changed registration (same createdAt, another version) is another one', () => {
    const before = definition('http://127.0.0.1:1/mcp', '1.1.1');
    const patched = definition('http://127.0.0.1:1/mcp', '1.7.3');
    connections.admit(before);
    void connections.release('flip');
    connections.admit(patched);
    expect(failureOf(() => connections.get(before)).kind).toBe('removed');
    expect(connections.get(patched)).toBeDefined();
  });

  it('a definition that names no registration (a configured upstream) always has one', () => {
    const configured = definition('http://127.0.0.1:1/mcp');
    expect(connections.get(configured)).toBe(connections.get(configured));
  });
});
