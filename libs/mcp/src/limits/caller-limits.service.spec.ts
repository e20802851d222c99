import type { GatewayConfig } from '@app/config';
import type { CallerIdentity } from '@app/identity';
import { GatewayError, GatewayErrorCode } from '../errors/gateway-error';
import { errorHeaders, legacyWireError, modernWireError } from '../errors/wire-errors';
import { CallerLimits } from './caller-limits.service';

function configWith(rateLimits: object): GatewayConfig {
  return {
    mcp: {
      identity: 'gw',
      redis: { keyPrefix: 'mcp-gateway' },
      rateLimits: { store: 'memory', ...rateLimits },
    },
  } as unknown as GatewayConfig;
}

function caller(subject: string | undefined, clientId?: string): CallerIdentity {
  return { subject, clientId, scopes: [], claims: {}, token: `t-${subject ?? clientId}` };
}

async function refusal(promise: Promise<void>): Promise<GatewayError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe('CallerLimits (docs/operations.md §14 "Rate limits per caller")', () => {
  it('perSubject: each caller has its own bucket, keyed by sub, else client_id', async () => {
    const limits = new CallerLimits(
      configWith({ perSubject: { capacity: 2, refillPerSecond: 0.001 } }),
    );
    await limits.admit(caller('alice'));
    await limits.admit(caller('alice'), 'a.tool');
    const err = await refusal(limits.admit(caller('alice')));
    expect(err.code).toBe(GatewayErrorCode.RateLimited);
    expect(err.message).toMatch(
      /^Rate limit hit: too many requests from this caller; retry after \d+ s$/,
    );
    expect(err.data).toEqual({ retryAfterSeconds: 1000, limit: 'perSubject' });
    await limits.admit(caller('bob'));
    await limits.admit(caller(undefined, 'machine-1'));
    await limits.admit(caller(undefined, 'machine-1'));
    await expect(limits.admit(caller(undefined, 'machine-1'))).rejects.toThrow(/Rate limit hit/);
  });

  it("a client_id equal to a user's sub is another caller: it drains its own bucket, never the user's", async () => {
    const limits = new CallerLimits(
      configWith({
        perSubject: { capacity: 1, refillPerSecond: 0.001 },
        perTool: { capacity: 1, refillPerSecond: 0.001 },
      }),
    );
    await limits.admit(caller(undefined, 'alice'), 'a.tool');
    await expect(limits.admit(caller(undefined, 'alice'))).rejects.toThrow(/Rate limit hit/);
    // the user alice (sub) still has a full bucket, for requests and for the same tool
    await limits.admit(caller('alice'), 'a.tool');
  });

  it('perTool: a bucket per (caller, tool); other tools and other callers are not affected', async () => {
    const limits = new CallerLimits(configWith({ perTool: { capacity: 1, refillPerSecond: 0.5 } }));
    await limits.admit(caller('alice'), 'x.search');
    const err = await refusal(limits.admit(caller('alice'), 'x.search'));
    expect(err.data).toEqual({ retryAfterSeconds: 2, limit: 'perTool' });
    expect(err.message).toContain('too many calls of this tool');
    await limits.admit(caller('alice'), 'x.other');
    await limits.admit(caller('bob'), 'x.search');
    // perTool alone does not limit requests that are not tool calls
    for (let i = 0; i < 5; i++) await limits.admit(caller('alice'));
  });

  it('without auth every request is the one anonymous caller', async () => {
    const limits = new CallerLimits(
      configWith({ perSubject: { capacity: 1, refillPerSecond: 1 } }),
    );
    await limits.admit(undefined);
    await expect(limits.admit(undefined)).rejects.toThrow(/Rate limit hit/);
  });

  it('no bucket configured: never limits', async () => {
    const limits = new CallerLimits(configWith({}));
    expect(limits.enabled).toBe(false);
    for (let i = 0; i < 100; i++) await limits.admit(caller('alice'), 't');
  });

  it('is written as HTTP 429 with Retry-After in both eras', () => {
    const err = new GatewayError(GatewayErrorCode.RateLimited, 'x', { retryAfterSeconds: 7 });
    expect(legacyWireError(err.code)).toEqual({ httpStatus: 429, code: -31429 });
    expect(modernWireError(err.code)).toEqual({ httpStatus: 429, code: -31429 });
    expect(errorHeaders(err)).toEqual({ 'retry-after': '7' });
    expect(errorHeaders(new GatewayError(GatewayErrorCode.InvalidParams, 'x'))).toEqual({});
  });
});

describe('CallerLimits under a flood of made-up tool names (memory bounded, nothing reset)', () => {
  it("20,000 tools/call of names nobody publishes reset neither the caller's own exhausted (caller, tool) bucket nor another's", async () => {
    const limits = new CallerLimits(
      configWith({ store: 'memory', perTool: { capacity: 1, refillPerSecond: 1 / 3600 } }),
    );
    const admitted = (p: Promise<void>): Promise<boolean> =>
      p.then(
        () => true,
        () => false,
      );
    const [mallory, bob] = [caller('mallory'), caller('bob')];
    expect(await admitted(limits.admit(mallory, 'up__costly'))).toBe(true);
    expect(await admitted(limits.admit(bob, 'up__costly'))).toBe(true);
    for (let i = 0; i < 20_000; i++) await admitted(limits.admit(mallory, `x${i}`));
    expect(await admitted(limits.admit(mallory, 'up__costly'))).toBe(false);
    expect(await admitted(limits.admit(bob, 'up__costly'))).toBe(false);
  });
});
