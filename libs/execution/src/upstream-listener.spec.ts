import type { UpstreamDefinition } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import type { UpstreamAnswer, UpstreamConnections, UpstreamRequestOptions } from '@app/upstream';
import type { CallerRequestHeaders } from './caller-request-headers';
import { UpstreamListener } from './upstream-listener.service';

/**
 * An upstream listen held for a caller carries the caller's headers: it is never opened,
 * re-opened or resumed after the caller's token's `exp` (docs/security.md "Answers to relayed
 * requests"), and says so, so that the client's stream can end as at its expiry.
 */
const upstream = { id: 'u26', url: 'http://127.0.0.1:1/mcp' } as UpstreamDefinition;

function setup() {
  const sent: { headers: unknown; options: UpstreamRequestOptions }[] = [];
  /** Ends the listen open now, as an upstream that drops it. */
  let drop: (() => void) | undefined;
  const connection = {
    era: '2026',
    request: (_method: string, _params: unknown, options: UpstreamRequestOptions) => {
      sent.push({ headers: options.headers, options });
      return new Promise<UpstreamAnswer>((resolve, reject) => {
        drop = () => resolve({ kind: 'result', result: {} });
        // an aborted listen fails as the connection fails it (cancelled)
        options.signal?.addEventListener('abort', () => reject(new Error('cancelled')), {
          once: true,
        });
      });
    },
  };
  const connections = {
    get: () => connection,
  } as unknown as UpstreamConnections;
  const callerHeaders = {
    for: (_u: unknown, headers: Record<string, string>) => Promise.resolve(headers),
  } as unknown as CallerRequestHeaders;
  const listener = new UpstreamListener(connections, callerHeaders);
  return { listener, sent, drop: () => drop?.() };
}

function caller(seconds: number): CallerIdentity {
  return { subject: 'alice', expiresAt: Math.floor(Date.now() / 1000) + seconds } as CallerIdentity;
}

describe('UpstreamListener.hold: never with an expired caller token', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('re-opens a dropped listen while the token is valid, and not after its exp: it stops and says so', async () => {
    const { listener, sent, drop } = setup();
    const end = new AbortController();
    const expired = jest.fn();
    const who = caller(5);
    const held = listener.hold(
      upstream,
      { resourceSubscriptions: ['r://x'] },
      {
        headers: { authorization: 'Bearer short' },
        caller: who,
        signal: end.signal,
        onNotification: () => undefined,
        onCredentialExpired: expired,
      },
    );
    await jest.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    // its resume GET and a repeat after a renewed session know the token's end
    expect(sent[0]?.options.credentialExpiresAtMs).toBe((who.expiresAt ?? 0) * 1000);
    drop();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(sent).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(4_500);
    drop();
    await jest.advanceTimersByTimeAsync(0);
    await expect(held).resolves.toBeUndefined();
    expect(sent).toHaveLength(2);
    expect(expired).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(2);
  });

  it('opens nothing with a token that has already expired', async () => {
    const { listener, sent } = setup();
    const expired = jest.fn();
    await listener.hold(
      upstream,
      { toolsListChanged: true },
      {
        headers: { authorization: 'Bearer stale' },
        caller: caller(-1),
        signal: new AbortController().signal,
        onNotification: () => undefined,
        onCredentialExpired: expired,
      },
    );
    expect(sent).toEqual([]);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('a listen its holder ended is not reported as expired', async () => {
    const { listener, sent } = setup();
    const end = new AbortController();
    const expired = jest.fn();
    const held = listener.hold(
      upstream,
      { toolsListChanged: true },
      {
        headers: {},
        caller: caller(5),
        signal: end.signal,
        onNotification: () => undefined,
        onCredentialExpired: expired,
      },
    );
    await jest.advanceTimersByTimeAsync(0);
    end.abort();
    await jest.advanceTimersByTimeAsync(10_000);
    await held;
    expect(sent).toHaveLength(1);
    expect(expired).not.toHaveBeenCalled();
  });

  it('a caller without exp (auth off) is re-opened as before', async () => {
    const { listener, sent, drop } = setup();
    const end = new AbortController();
    const held = listener.hold(
      upstream,
      { toolsListChanged: true },
      { headers: {}, signal: end.signal, onNotification: () => undefined },
    );
    await jest.advanceTimersByTimeAsync(0);
    drop();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(sent).toHaveLength(2);
    expect(sent[1]?.options.credentialExpiresAtMs).toBeUndefined();
    end.abort();
    await held;
  });
});
