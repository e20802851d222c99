import { bearerToken, looksLikeJwt, scopesOf } from './bearer-token';
import {
  resourceMetadataPaths,
  resourceMetadataUrl,
  wwwAuthenticate,
} from './protected-resource-metadata';

describe('Bearer tokens (RFC 6750 §2.1)', () => {
  it('takes the token of a Bearer header, scheme in any case', () => {
    expect(bearerToken('Bearer abc.def-ghi_jkl')).toBe('abc.def-ghi_jkl');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER a+b/c==')).toBe('a+b/c==');
  });

  it('refuses other schemes, empty tokens and values that are not token68', () => {
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken('Bearer a"b')).toBeUndefined();
    expect(bearerToken('Bearerabc')).toBeUndefined();
  });

  it('tells compact JWTs from opaque tokens', () => {
    expect(looksLikeJwt('eyJh.eyJz.c2ln')).toBe(true);
    expect(looksLikeJwt('opaque-token_value')).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
  });

  it('reads scopes from scope (space-separated) or scp (array or string)', () => {
    expect(scopesOf({ scope: 'mcp  admin' })).toEqual(['mcp', 'admin']);
    expect(scopesOf({ scp: ['mcp', 3, 'read'] })).toEqual(['mcp', 'read']);
    expect(scopesOf({ scp: 'a b' })).toEqual(['a', 'b']);
    expect(scopesOf({})).toEqual([]);
  });
});

describe('protected-resource metadata (RFC 9728) and WWW-Authenticate (RFC 6750 §3)', () => {
  it('inserts the well-known prefix between the origin and the resource path', () => {
    expect(resourceMetadataUrl('https://gw.example.com/mcp')).toBe(
      'https://gw.example.com/.well-known/oauth-protected-resource/mcp',
    );
    expect(resourceMetadataUrl('https://gw.example.com/')).toBe(
      'https://gw.example.com/.well-known/oauth-protected-resource',
    );
    expect(resourceMetadataPaths('https://gw.example.com/tenant/mcp/')).toEqual([
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/tenant/mcp',
    ]);
  });

  it('builds the challenge: resource_metadata always, error and scope when given, quotes escaped', () => {
    expect(wwwAuthenticate('https://gw/m')).toBe('Bearer resource_metadata="https://gw/m"');
    expect(wwwAuthenticate('https://gw/m', 'insufficient_scope', 'needs "mcp"', 'mcp read')).toBe(
      'Bearer resource_metadata="https://gw/m", error="insufficient_scope", error_description="needs \\"mcp\\"", scope="mcp read"',
    );
  });
});
