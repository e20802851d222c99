import { renderProblem } from './config-problem';
import {
  adminPatternProblems,
  parseAddressRange,
  parseUrlPattern,
  urlMatches,
  type UrlPattern,
} from './admin-url-patterns';

function pattern(text: string): UrlPattern {
  const p = parseUrlPattern(text);
  if (typeof p === 'string') throw new Error(p);
  return p;
}

const matches = (p: string, url: string): boolean => urlMatches(pattern(p), new URL(url));

describe('mcp.admin.allowedUpstreamUrls patterns (docs/operations.md §15 "What may be registered")', () => {
  it('an exact pattern matches its scheme, host, port and any path below its path', () => {
    expect(matches('http://10.1.2.3:8080/mcp', 'http://10.1.2.3:8080/mcp')).toBe(true);
    expect(matches('http://10.1.2.3:8080/mcp', 'http://10.1.2.3:8080/mcp/v2?x=1')).toBe(true);
    expect(matches('http://10.1.2.3:8080/mcp', 'http://10.1.2.3:8080/mcpx')).toBe(false);
    expect(matches('http://10.1.2.3:8080/mcp', 'https://10.1.2.3:8080/mcp')).toBe(false);
    expect(matches('http://10.1.2.3:8080/mcp', 'http://10.1.2.3:8081/mcp')).toBe(false);
    expect(matches('http://10.1.2.3:8080/mcp', 'http://10.1.2.4:8080/mcp')).toBe(false);
  });

  it('an absent port is the default port of the scheme; * is any port', () => {
    expect(matches('https://tools.example', 'https://tools.example/mcp')).toBe(true);
    expect(matches('https://tools.example', 'https://tools.example:443/mcp')).toBe(true);
    expect(matches('https://tools.example', 'https://tools.example:8443/mcp')).toBe(false);
    expect(matches('https://tools.example:*', 'https://tools.example:8443/mcp')).toBe(true);
  });

  it('*.name matches hosts under name, not name itself nor a look-alike', () => {
    expect(matches('https://*.tools.example', 'https://a.tools.example/')).toBe(true);
    expect(matches('https://*.tools.example', 'https://a.b.tools.example/')).toBe(true);
    expect(matches('https://*.tools.example', 'https://tools.example/')).toBe(false);
    expect(matches('https://*.tools.example', 'https://eviltools.example/')).toBe(false);
    expect(matches('http://*:*', 'http://anything:1/x')).toBe(true);
  });

  it('host names compare without case', () => {
    expect(matches('https://Tools.Example', 'https://tools.EXAMPLE/')).toBe(true);
  });

  it('a malformed entry is a boot problem naming its index', () => {
    expect(
      adminPatternProblems({
        allowedUpstreamUrls: [
          'https://ok.example',
          'ftp://x',
          'http://a:0',
          'http://a/b?c',
          'tools.example',
        ],
        allowedAddressRanges: ['10.0.0.0/8', '10.0.0.0/33', 'fd00::/129', 'x', '1.2.3.4/8/9'],
      }).map(renderProblem),
    ).toEqual([
      expect.stringMatching(/^mcp\.admin\.allowedUpstreamUrls\[1\]: must be/),
      expect.stringMatching(/^mcp\.admin\.allowedUpstreamUrls\[2\]: port must be/),
      expect.stringMatching(/^mcp\.admin\.allowedUpstreamUrls\[3\]: must be/),
      expect.stringMatching(/^mcp\.admin\.allowedUpstreamUrls\[4\]: must be/),
      expect.stringMatching(/^mcp\.admin\.allowedAddressRanges\[1\]: prefix length/),
      expect.stringMatching(/^mcp\.admin\.allowedAddressRanges\[2\]: prefix length/),
      expect.stringMatching(/^mcp\.admin\.allowedAddressRanges\[3\]: must be a CIDR/),
      expect.stringMatching(/^mcp\.admin\.allowedAddressRanges\[4\]: must be a CIDR/),
    ]);
  });

  it('a bare address is a one-address range', () => {
    expect(parseAddressRange('10.0.0.1')).toMatchObject({ prefix: 32, family: 'ipv4' });
    expect(parseAddressRange('fd00::1')).toMatchObject({ prefix: 128, family: 'ipv6' });
  });
});
