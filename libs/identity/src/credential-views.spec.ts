import { credentialViews, holdsToken, jwtsIn } from './credential-views';

describe('credentialViews: the readings of a header value a credential may hide in', () => {
  it('gives the value, its percent-decoding and the base64 decoding of long runs', () => {
    const token = 'secret-admin-token';
    expect(credentialViews(`Bearer%20${token}`)).toContain(`Bearer ${token}`);
    expect(credentialViews(Buffer.from(`Bearer ${token}`).toString('base64'))).toContain(
      `Bearer ${token}`,
    );
    expect(credentialViews(`x=${Buffer.from(`a:${token}`).toString('base64url')}`)).toContain(
      `a:${token}`,
    );
  });

  it('keeps a malformed escape as it is and leaves binary decodings out', () => {
    expect(credentialViews('a%zz%41')).toEqual(['a%zz%41', 'a%zzA']);
    const binary = Buffer.from([
      0, 1, 2, 3, 250, 251, 252, 253, 254, 255, 9, 8, 7, 6, 5, 4,
    ]).toString('base64');
    expect(credentialViews(binary)).toEqual([binary]);
  });
});

describe('holdsToken: a token of its own, not inside a longer word', () => {
  it.each(['adm-5f3e1', 'Bearer adm-5f3e1', 'k=adm-5f3e1&t=1', '[adm-5f3e1]', 'Token (adm-5f3e1)'])(
    'finds it in %j',
    (text) => expect(holdsToken(text, 'adm-5f3e1')).toBe(true),
  );

  it.each(['xadm-5f3e1', 'adm-5f3e1y', 'Bearer xadm-5f3e1y', 'adm-5f3e1.x'])('not in %j', (text) =>
    expect(holdsToken(text, 'adm-5f3e1')).toBe(false),
  );

  it('finds a later delimited occurrence after an undelimited one', () => {
    expect(holdsToken('xadm-5f3e1 adm-5f3e1', 'adm-5f3e1')).toBe(true);
  });
});

describe('jwtsIn: compact JWS serializations anywhere in a text', () => {
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzY29wZSI6Im1jcCJ9.c2ln';
  it.each([jwt, `token=${jwt}&tenant=7`, `(${jwt})`, `/session/${jwt}`, `<<${jwt}>>`])(
    'in %j',
    (text) => expect(jwtsIn(text)).toEqual([jwt]),
  );

  it('none in a text without one', () => {
    expect(jwtsIn('Bearer opaque-token')).toEqual([]);
  });
});
