import { callerName, callerSubject, type CallerIdentity } from './caller-identity';

const caller = (subject?: string, clientId?: string): CallerIdentity => ({
  subject,
  clientId,
  scopes: [],
  claims: {},
  token: 't',
});

/** docs/security.md, "Who is a caller": one namespaced key per caller, users and clients apart. */
describe('callerName', () => {
  it('a user is keyed by its sub, a client by its client_id, each in its own namespace', () => {
    expect(callerName(caller('alice', 'agent-app'))).toBe('sub:alice');
    expect(callerName(caller(undefined, 'alice'))).toBe('client:alice');
    expect(callerName(caller('alice'))).toBe('sub:alice');
    expect(callerName(caller())).toBeUndefined();
    expect(callerName(undefined)).toBeUndefined();
  });

  it('a client-credentials token whose sub is its own client_id is that client, not the user of that sub', () => {
    // RFC 9068 §2.2: sub = client_id when no resource owner is involved (oidc-provider does so)
    expect(callerName(caller('alice', 'alice'))).toBe('client:alice');
    expect(callerName(caller('alice', 'alice'))).not.toBe(callerName(caller('alice', 'agent')));
    expect(callerSubject(caller('alice', 'alice'))).toBeUndefined();
    expect(callerSubject(caller('alice', 'agent'))).toBe('alice');
  });
});
