import { audienceKey, registrationAudienceKey } from './registration-credentials';

describe('audienceKey (docs/operations.md §15: audiences compared normalized)', () => {
  const held = 'https://owner.example/api/mcp';

  it.each([
    'https://owner.example/api/mcp/',
    'HTTPS://Owner.Example:443/api/mcp',
    ' https://owner.example/api/mcp ',
    'https://owner.example/api/./mcp',
    'https://owner.example/api/%2E/mcp',
    'https://owner.example/api/%6Dcp',
    'https://owner.example/%61pi/mcp',
    'https://owner.example/%61%70%69/%6d%63%70',
    'https://owner.example./api/mcp',
    'https://owner.example/api/mcp?x=1#f',
  ])('%j is the key of %j', (spelling) => {
    expect(audienceKey(spelling)).toBe(audienceKey(held));
  });

  it('decodes unreserved characters and upper-cases the hex of the others', () => {
    expect(audienceKey('https://a.example/%7e%2d%5f%2E/x%2fy%3a')).toBe(
      'https://a.example/~-_./x%2Fy%3A',
    );
  });

  it.each([
    'https://owner.example/api/mcp2',
    'https://owner.example/api%2Fmcp',
    'https://owner.example:8443/api/mcp',
    'https://owner.example../api/mcp',
    'http://owner.example/api/mcp',
  ])('%j is another audience', (other) => {
    expect(audienceKey(other)).not.toBe(audienceKey(held));
  });

  it('keeps a non-URL audience as written, trimmed', () => {
    expect(audienceKey(' urn:example:Api ')).toBe('urn:example:Api');
  });

  it('is the key the registration store takes', () => {
    expect(
      registrationAudienceKey({
        authorization: {
          mode: 'tokenExchange',
          audience: 'https://owner.example./%61pi/%6Dcp/',
        } as never,
      }),
    ).toBe(audienceKey(held));
  });
});
