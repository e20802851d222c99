import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { rangeList } from './admin-url-patterns';
import type { AdminSettings } from './gateway-config';

/** Address classes a registered upstream may not reach unless allowed (docs/security.md). */
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
const LOOPBACK_CLASS = 'a loopback address';
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

/** Why one address may not be reached by a registered upstream. */
export interface AddressRefusal {
  /** The address as given. */
  readonly address: string;
  /** The IPv4 address an IPv6 form carries, when that is what is refused. */
  readonly ipv4?: string;
  /** The class, in words: `a loopback address`, `a cloud metadata address`, … */
  readonly className: string;
  /** The settings that can allow it, for the message: `mcp.admin.allowedAddressRanges` (…). */
  readonly allowedBy: string;
}

/** The address settings of `mcp.admin` these rules read. */
export type AddressRuleSettings = Pick<AdminSettings, 'allowLoopback' | 'allowedRanges'>;

/** The settings without an `mcp.admin` section: nothing allowed beyond the defaults. */
export const NO_ADDRESS_ALLOWANCES: AddressRuleSettings = {
  allowLoopback: false,
  allowedRanges: [],
};

/**
 * Which IP addresses a runtime-registered upstream may reach (docs/security.md, "Runtime
 * registrations"): cloud metadata, link-local, local-use NAT64, unspecified and (unless
 * `allowLoopback`) loopback addresses are refused, also in an IPv6 form that carries one of
 * them as IPv4, unless `allowedAddressRanges` holds the address. One set of rules for the
 * registration guard (at POST/PATCH and when a stored record is read) and for the connect
 * guard (every connection to a registered upstream, at the address dialled).
 */
export class AddressRules {
  private readonly refused: readonly { readonly name: string; readonly list: BlockList }[];
  private readonly allowed: BlockList;

  constructor(settings: AddressRuleSettings) {
    this.refused = [
      ...REFUSED.map((c) => ({ name: c.name, list: listOf(c.ranges) })),
      ...(settings.allowLoopback ? [] : [{ name: LOOPBACK_CLASS, list: listOf(LOOPBACK) }]),
    ];
    this.allowed = rangeList(settings.allowedRanges);
  }

  /** undefined when `address` (an IP address, no brackets) may be reached; else why not. */
  refusal(address: string): AddressRefusal | undefined {
    const version = isIP(address);
    // not an IP address: nothing to check here (callers resolve names first)
    if (version === 0) return undefined;
    const family = version === 6 ? 'ipv6' : 'ipv4';
    if (this.allowed.check(address, family)) return undefined;
    const inner = family === 'ipv6' ? embeddedIPv4(address) : undefined;
    if (inner !== undefined && this.allowed.check(inner, 'ipv4')) return undefined;
    const hit = this.refused.find(
      (c) => c.list.check(address, family) || (inner !== undefined && c.list.check(inner, 'ipv4')),
    );
    if (hit === undefined) return undefined;
    return {
      address,
      ...(inner === undefined ? {} : { ipv4: inner }),
      className: hit.name,
      allowedBy:
        'mcp.admin.allowedAddressRanges' +
        (hit.name === LOOPBACK_CLASS ? ' or mcp.admin.allowLoopback' : ''),
    };
  }
}
