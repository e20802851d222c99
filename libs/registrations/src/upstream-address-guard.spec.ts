import {
  parseAddressRange,
  parseUrlPattern,
  type AddressRange,
  type UrlPattern,
} from '@app/config';
import { UpstreamAddressGuard, type ResolveHost } from './upstream-address-guard';

function ranges(...texts: string[]): AddressRange[] {
  return texts.map((t) => parseAddressRange(t) as AddressRange);
}

/** A resolver answering from a table: the host names of these tests exist nowhere else. */
function table(answers: Record<string, string[]>): ResolveHost {
  return (host) => {
    const found = answers[host];
    if (found === undefined)
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve(found);
  };
}

function guard(
  options: { loopback?: boolean; patterns?: string[]; allowed?: string[] } = {},
  answers: Record<string, string[]> = {},
): UpstreamAddressGuard {
  return new UpstreamAddressGuard(
    {
      allowLoopback: options.loopback ?? false,
      urlPatterns: (options.patterns ?? []).map((p) => parseUrlPattern(p) as UrlPattern),
      allowedRanges: ranges(...(options.allowed ?? [])),
    },
    table(answers),
  );
}

describe('UpstreamAddressGuard (docs/operations.md §15 "What may be registered")', () => {
  it('private and public addresses pass; loopback, link-local, metadata and unspecified do not', async () => {
    const g = guard();
    for (const ok of [
      'http://10.1.2.3/mcp',
      'http://192.168.1.1:8080/',
      'https://[fd12::1]/mcp',
      'http://8.8.8.8/',
    ])
      expect(await g.problem(ok)).toBeUndefined();
    const refused: [string, string][] = [
      ['http://127.0.0.1:8080/mcp', 'a loopback address'],
      ['http://127.9.9.9/', 'a loopback address'],
      ['http://[::1]/', 'a loopback address'],
      ['http://169.254.169.254/latest', 'a cloud metadata address'],
      ['http://169.254.170.2/', 'a cloud metadata address'],
      ['http://[fd00:ec2::254]/', 'a cloud metadata address'],
      ['http://100.100.100.200/', 'a cloud metadata address'],
      ['http://169.254.1.1/', 'a link-local address'],
      ['http://[fe80::1]/', 'a link-local address'],
      ['http://[::ffff:169.254.169.254]/', 'a cloud metadata address'],
      ['http://[::ffff:127.0.0.1]/', 'a loopback address'],
      ['http://0.0.0.0/', 'an unspecified address'],
      ['http://[::]/', 'an unspecified address'],
    ];
    for (const [url, reason] of refused) expect(await g.problem(url)).toContain(reason);
  });

  it('an IPv4 address carried in IPv6 (compatible, SIIT, NAT64, 6to4, Teredo) is refused like the IPv4 address', async () => {
    const g = guard({}, { 'nat64.example': ['64:ff9b::a9fe:a9fe'] });
    const refused: [string, string][] = [
      ['http://[::127.0.0.1]/', 'a loopback address'],
      ['http://[::7f00:1]:9000/mcp', 'a loopback address'],
      ['http://[::ffff:0:7f00:1]/', 'a loopback address'],
      ['http://[64:ff9b::7f00:1]/', 'a loopback address'],
      ['http://[64:ff9b::169.254.169.254]/', 'a cloud metadata address'],
      ['http://[2002:a9fe:a9fe::1]/', 'a cloud metadata address'],
      ['http://[2002:7f00:1::]/', 'a loopback address'],
      // Teredo: the client's IPv4 address is the last 32 bits inverted (127.0.0.1)
      ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'a loopback address'],
      ['http://nat64.example/', 'a cloud metadata address'],
    ];
    for (const [url, reason] of refused) {
      const problem = await g.problem(url);
      expect(problem).toContain(reason);
      expect(problem).toMatch(/\(IPv4 \d+\.\d+\.\d+\.\d+\)/);
    }
    // local-use NAT64: where the IPv4 address sits depends on the operator's prefix length
    for (const url of [
      'http://[64:ff9b:1::a9fe:a9fe]/',
      'http://[64:ff9b:1:a9fe:a9:fe00:808:808]/',
      'http://[64:ff9b:1::808:808]/',
    ])
      expect(await g.problem(url)).toContain('a local-use NAT64 address (64:ff9b:1::/48)');
    expect(
      await guard({ allowed: ['64:ff9b:1::/48'] }).problem('http://[64:ff9b:1::808:808]/'),
    ).toBeUndefined();
    // another field than url is named as given
    expect(await g.problem('http://[64:ff9b::7f00:1]/', 'authorization.tokenEndpoint')).toMatch(
      /^authorization\.tokenEndpoint: host /,
    );
    // the same forms of an allowed IPv4 address pass
    for (const ok of [
      'http://[64:ff9b::a00:5]/',
      'http://[2002:a00:5::1]/',
      'http://[::ffff:a00:5]/',
    ])
      expect(await g.problem(ok)).toBeUndefined();
    // an allowed range admits the IPv4 address in its IPv6 forms too
    expect(await guard({ allowed: ['127.0.0.0/8'] }).problem('http://[64:ff9b::7f00:1]/')).toBe(
      undefined,
    );
  });

  it('a host name is resolved and every address checked: one refused address refuses the name', async () => {
    const g = guard(
      {},
      {
        'tools.internal': ['10.0.0.5'],
        'rebind.example': ['10.0.0.6', '169.254.169.254'],
        'metadata.google.internal': ['169.254.169.254'],
      },
    );
    expect(await g.problem('http://tools.internal/mcp')).toBeUndefined();
    expect(await g.problem('http://rebind.example/mcp')).toMatch(
      /^url: host "rebind\.example" resolves to 169\.254\.169\.254, a cloud metadata address/,
    );
    expect(await g.problem('http://metadata.google.internal/')).toContain(
      'a cloud metadata address',
    );
    expect(await g.problem('http://nowhere.example/')).toBe(
      'url: host "nowhere.example" does not resolve (ENOTFOUND)',
    );
  });

  it('allowLoopback lets loopback through, and only loopback', async () => {
    const g = guard({ loopback: true });
    expect(await g.problem('http://127.0.0.1:9/')).toBeUndefined();
    expect(await g.problem('http://[::1]:9/')).toBeUndefined();
    expect(await g.problem('http://169.254.169.254/')).toContain('a cloud metadata address');
  });

  it('allowedAddressRanges lets the listed ranges through', async () => {
    const g = guard({ allowed: ['169.254.10.0/24'] });
    expect(await g.problem('http://169.254.10.7/')).toBeUndefined();
    expect(await g.problem('http://169.254.11.7/')).toContain('a link-local address');
  });

  it('with URL patterns configured, a URL matching none is refused before any lookup', async () => {
    const g = guard({ patterns: ['https://*.tools.example'] }, { 'a.tools.example': ['10.0.0.1'] });
    expect(await g.problem('https://a.tools.example/mcp')).toBeUndefined();
    expect(await g.problem('http://a.tools.example/mcp')).toMatch(
      /^url: not allowed by mcp\.admin\.allowedUpstreamUrls \(https:\/\/\*\.tools\.example\)/,
    );
    expect(await g.problem('https://b.example/mcp')).toMatch(/^url: not allowed/);
  });
});
