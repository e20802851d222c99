import type { AccessConfig } from '@app/config';
import { AccessPolicy, allowsSource, allowsTool, FULL_ACCESS } from './access-policy';
import type { CallerIdentity } from './caller-identity';

function caller(claims: Record<string, unknown>): CallerIdentity {
  const scope = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  return {
    subject: typeof claims.sub === 'string' ? claims.sub : undefined,
    scopes: scope,
    claims,
    token: 'unused',
  };
}

const rules = {
  rules: [
    { match: { claim: 'groups', value: 'claims-team' }, sources: ['claims'], tools: [] },
    { match: { subject: 'bob' }, sources: [], tools: ['billing.invoice'] },
    { match: { scope: 'admin' }, sources: ['claims', 'billing'], tools: [] },
    { match: { claim: 'dept', value: 'finance' }, sources: ['billing'], tools: [] },
  ],
} as unknown as AccessConfig;

describe('mcp.access rules (docs/operations.md §13 "Access")', () => {
  const policy = new AccessPolicy(rules);

  it('without mcp.access every caller (and no caller) gets everything', () => {
    const open = new AccessPolicy(undefined);
    expect(open.accessFor(caller({ sub: 'x' }))).toBe(FULL_ACCESS);
    expect(policy.accessFor(undefined)).toBe(FULL_ACCESS);
  });

  it('a subject rule matches a user\'s sub, never a client\'s own token whose sub is its client_id (docs/security.md "Who is a caller")', () => {
    expect(allowsTool(policy.accessFor(caller({ sub: 'bob' })), 'billing', 'billing.invoice')).toBe(
      true,
    );
    const client = { ...caller({ sub: 'bob', client_id: 'bob' }), clientId: 'bob' };
    expect(allowsTool(policy.accessFor(client), 'billing', 'billing.invoice')).toBe(false);
  });

  it('a claim rule matches an array claim containing the value and a string claim equal to it', () => {
    const inArray = policy.accessFor(caller({ groups: ['a', 'claims-team'] }));
    const asString = policy.accessFor(caller({ groups: 'claims-team' }));
    expect(allowsSource(inArray, 'claims')).toBe(true);
    expect(allowsSource(asString, 'claims')).toBe(true);
    expect(allowsSource(policy.accessFor(caller({ groups: 'claims-team-2' })), 'claims')).toBe(
      false,
    );
    expect(allowsSource(policy.accessFor(caller({ dept: ['finance'] })), 'billing')).toBe(true);
    expect(allowsSource(policy.accessFor(caller({ dept: { finance: true } })), 'billing')).toBe(
      false,
    );
  });

  it('a caller gets the union of the matching rules; a tool with no grant is invisible', () => {
    const access = policy.accessFor(caller({ sub: 'bob', groups: ['claims-team'] }));
    expect(allowsTool(access, 'claims', 'claims.open')).toBe(true);
    expect(allowsTool(access, 'billing', 'billing.invoice')).toBe(true);
    expect(allowsTool(access, 'billing', 'billing.refund')).toBe(false);
    // a single tool grant does not open its source's prompts and resources
    expect(allowsSource(access, 'billing')).toBe(false);
    const nobody = policy.accessFor(caller({ sub: 'eve' }));
    expect(nobody.all).toBe(false);
    expect(allowsTool(nobody, 'claims', 'claims.open')).toBe(false);
  });

  it('scope rules match a granted scope; callers with the same matching rules share one grant object', () => {
    const a = policy.accessFor(caller({ sub: 'a', scope: 'mcp admin' }));
    const b = policy.accessFor(caller({ sub: 'b', scope: 'admin' }));
    expect(a).toBe(b);
    expect(allowsTool(a, 'billing', 'billing.refund')).toBe(true);
    expect(policy.accessFor(caller({ sub: 'c', scope: 'administrator' }))).not.toBe(a);
  });
});
