import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AddressRules, urlMatches, type AdminSettings } from '@app/config';

/** Resolves a host name to every address it has; a provider so tests can pin answers. */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

/** The system resolver (getaddrinfo, like the connections to the upstream will use). */
export const systemResolve: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Decides whether an upstream URL may be registered
 * (docs/operations.md §15 "What may be registered"): it must match one of
 * `mcp.admin.allowedUpstreamUrls` (when any is configured), and every address its host resolves to
 * must be outside the refused classes (cloud metadata, link-local, unspecified, and loopback unless
 * `allowLoopback`), unless `allowedAddressRanges` holds it. Every address is checked, so a name
 * that resolves to one good and one refused address is refused.
 *
 * The check runs on every write (POST, PATCH) and whenever a replica applies a new or changed
 * stored record. A host whose DNS answer changes after that (DNS rebinding) meets the same
 * AddressRules again at every connection the gateway makes for the registration, at the
 * address it dials (libs/upstream connect-guard.ts; docs/security.md "Runtime registrations").
 */
export class UpstreamAddressGuard {
  private readonly rules: AddressRules;

  constructor(
    private readonly settings: Pick<
      AdminSettings,
      'urlPatterns' | 'allowLoopback' | 'allowedRanges'
    >,
    private readonly resolve: ResolveHost = systemResolve,
  ) {
    this.rules = new AddressRules(settings);
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
      const refusal = this.rules.refusal(address);
      if (refusal !== undefined)
        return (
          `host "${host}" resolves to ${address}` +
          `${refusal.ipv4 === undefined ? '' : ` (IPv4 ${refusal.ipv4})`}, ` +
          `${refusal.className}, which may not be registered (${refusal.allowedBy} can allow it)`
        );
    }
    return undefined;
  }
}
