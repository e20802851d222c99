import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { rangeList, urlMatches, type AdminSettings } from '@app/config';

/** Resolves a host name to every address it has; a provider so tests can pin answers. */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

/** The system resolver (getaddrinfo, like the connections to the upstream will use). */
export const systemResolve: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Address classes a registered upstream may not resolve to unless allowed (issue 13 §1). */
const REFUSED: readonly {
  readonly name: string;
  readonly ranges: readonly [string, number, 'ipv4' | 'ipv6'][];
}[] = [
  {
    // Cloud metadata endpoints (AWS, GCP, Azure, OpenStack: 169.254.169.254; AWS IPv6;
    // Alibaba Cloud; Oracle Cloud's 169.254.169.254 too). Listed before link-local to name them.
    name: 'a cloud metadata address',
    ranges: [
      ['169.254.169.254', 32, 'ipv4'],
      ['169.254.170.2', 32, 'ipv4'],
      ['fd00:ec2::254', 128, 'ipv6'],
      ['100.100.100.200', 32, 'ipv4'],
    ],
  },
  {
    name: 'a link-local address',
    ranges: [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  },
  {
    // RFC 8215: the operator picks the prefix length inside it, so where the IPv4 address sits
    // is unknown; the whole range is refused (allowedAddressRanges can allow it).
    name: 'a local-use NAT64 address (64:ff9b:1::/48)',
    ranges: [['64:ff9b:1::', 48, 'ipv6']],
  },
  {
    name: 'an unspecified address',
    ranges: [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  },
];
const LOOPBACK: readonly [string, number, 'ipv4' | 'ipv6'][] = [
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
];

/**
 * The IPv4 address an IPv6 address reaches through translation, or undefined: IPv4-mapped
 * (`::ffff:a.b.c.d`), SIIT (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, RFC 4291
 * §2.5.5.1), NAT64's well-known `64:ff9b::/96` (RFC 6052), 6to4 (`2002::/16`,
 * RFC 3056) and Teredo's client (`2001::/32`, RFC 4380). A refused IPv4 address stays refused
 * in any of these forms.
 */
export function embeddedIPv4(address: string): string | undefined {
  if (!ipaddr.IPv6.isValid(address)) return undefined;
  const v6 = ipaddr.IPv6.parse(address);
  const bytes = v6.toByteArray();
  const dotted = (b: readonly number[]): string => b.join('.');
  const tail = bytes.slice(12, 16);
  const range = v6.range();
  // 64:ff9b::/96 only: the local-use 64:ff9b:1::/48 is refused whole (REFUSED)
  if (range === 'rfc6052') return bytes[4] === 0 && bytes[5] === 0 ? dotted(tail) : undefined;
  if (range === 'ipv4Mapped' || range === 'rfc6145') return dotted(tail);
  if (range === '6to4') return dotted(bytes.slice(2, 6));
  if (range === 'teredo') return dotted(tail.map((b) => b ^ 0xff));
  if (range === 'unspecified' || range === 'loopback') return undefined;
  // IPv4-compatible: 96 zero bits, then the IPv4 address.
  return bytes.slice(0, 12).every((b) => b === 0) ? dotted(tail) : undefined;
}

function listOf(ranges: readonly [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}

/**
 * Decides whether an upstream URL may be registered (issue 13 §1): it must match one of
 * `mcp.admin.allowedUpstreamUrls` (when any is configured), and every address its host
 * resolves to must be outside the refused classes (cloud metadata, link-local, unspecified,
 * and loopback unless `allowLoopback`), unless `allowedAddressRanges` holds it. Every address
 * is checked, so a name that resolves to one good and one refused address is refused.
 *
 * The check runs on every write (POST, PATCH) and whenever a replica applies a new or changed
 * stored record; a host whose DNS answer changes after that is not re-checked (the upstream
 * connection resolves the name itself).
 */
export class UpstreamAddressGuard {
  private readonly refused: readonly { readonly name: string; readonly list: BlockList }[];
  private readonly allowed: BlockList;

  constructor(
    private readonly settings: Pick<
      AdminSettings,
      'urlPatterns' | 'allowLoopback' | 'allowedRanges'
    >,
    private readonly resolve: ResolveHost = systemResolve,
  ) {
    this.refused = [
      ...REFUSED.map((c) => ({ name: c.name, list: listOf(c.ranges) })),
      ...(settings.allowLoopback ? [] : [{ name: 'a loopback address', list: listOf(LOOPBACK) }]),
    ];
    this.allowed = rangeList(settings.allowedRanges);
  }

  /**
   * undefined when the URL may be registered; otherwise why not (`"<field>: …"`, field `url`
   * unless given). `unresolvedPasses`: a host that does not resolve now is no refusal (a
   * stored registration read again: its pulls fail on their own, and a DNS outage must not
   * drop it). Never throws.
   */
  async problem(
    rawUrl: string,
    field = 'url',
    options: { readonly unresolvedPasses?: boolean } = {},
  ): Promise<string | undefined> {
    const found = await this.urlProblem(rawUrl, options.unresolvedPasses === true);
    return found === undefined ? undefined : `${field}: ${found}`;
  }

  private async urlProblem(rawUrl: string, unresolvedPasses: boolean): Promise<string | undefined> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return 'must be an http(s) URL';
    }
    const patterns = this.settings.urlPatterns;
    if (patterns.length > 0 && !patterns.some((p) => urlMatches(p, url)))
      return (
        `not allowed by mcp.admin.allowedUpstreamUrls (${patterns.map((p) => p.text).join(', ')}); ` +
        'ask the gateway operator to add a pattern'
      );
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: readonly string[];
    try {
      addresses = isIP(host) !== 0 ? [host] : await this.resolve(host);
    } catch (err) {
      if (unresolvedPasses) return undefined;
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      return `host "${host}" does not resolve (${code})`;
    }
    if (addresses.length === 0)
      return unresolvedPasses ? undefined : `host "${host}" does not resolve`;
    for (const address of addresses) {
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (this.allowed.check(address, family)) continue;
      const inner = family === 'ipv6' ? embeddedIPv4(address) : undefined;
      if (inner !== undefined && this.allowed.check(inner, 'ipv4')) continue;
      const hit = this.refused.find(
        (c) =>
          c.list.check(address, family) || (inner !== undefined && c.list.check(inner, 'ipv4')),
      );
      if (hit !== undefined)
        return (
          `host "${host}" resolves to ${address}${inner === undefined ? '' : ` (IPv4 ${inner})`}, ` +
          `${hit.name}, which may not be registered ` +
          '(mcp.admin.allowedAddressRanges' +
          (hit.name === 'a loopback address' ? ' or mcp.admin.allowLoopback' : '') +
          ' can allow it)'
        );
    }
    return undefined;
  }
}
