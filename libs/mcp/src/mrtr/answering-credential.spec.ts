import type { MethodContext } from '../methods/method-handler';
import { answeringCredential, continuationContext } from './answering-credential';

/** docs/security.md "Answers to relayed requests": a call's continuation and its credential. */
function context(token: string, expiresAt?: number): MethodContext {
  return {
    protocolVersion: '2025-11-25',
    headers: { authorization: `Bearer ${token}` },
    rawBody: '',
    caller: { subject: 'alice', scopes: [], claims: {}, token, expiresAt },
    credential: `Bearer ${token}`,
  };
}

describe('continuationContext', () => {
  const now = 1_000_000_000_000;
  const first = context('t1', now / 1000 - 1); // expired a second ago
  const answering = context('t2', now / 1000 + 300);

  it("goes with the answering request's credential when the answer reached this replica", () => {
    const next = continuationContext(first, answeringCredential(answering), now);
    expect(next?.headers.authorization).toBe('Bearer t2');
    expect(next?.caller?.token).toBe('t2');
    expect(next?.credential).toBe('Bearer t2');
    // the call's own stream and the rest are kept
    expect(next?.protocolVersion).toBe('2025-11-25');
  });

  it("never with an expired token: the call's own when none came (another replica), and none once it expired", () => {
    const live = context('t1', now / 1000 + 5);
    expect(continuationContext(live, undefined, now)).toBe(live);
    expect(continuationContext(first, undefined, now)).toBeUndefined();
    expect(
      continuationContext(first, answeringCredential(context('t3', now / 1000)), now),
    ).toBeUndefined();
  });

  it('a caller without an expiry (auth off, an introspected token without exp) goes as it is', () => {
    const open = context('t', undefined);
    expect(continuationContext(open, undefined, now)).toBe(open);
  });

  it('the credential handed over is a function: it does not survive the JSON of a resume from another replica', () => {
    expect(JSON.parse(JSON.stringify({ answering: answeringCredential(answering) }))).toEqual({});
  });
});
