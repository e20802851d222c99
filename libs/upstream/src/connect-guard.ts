import { lookup as systemLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressRefusal, AddressRules } from '@app/config';

/**
 * A connection the gateway was about to make for a runtime-registered upstream went to an
 * address the registration rules refuse (docs/security.md, "Runtime registrations"): the
 * name resolved elsewhere than when it was registered (DNS rebinding), or the URL is an IP
 * address the rules refuse now. Raised before any byte is sent: no TCP connection is made.
 * The message names the host and the address; it is for the gateway's log, never a client.
 */
export class UpstreamAddressRefusedError extends Error {
  override readonly name = 'UpstreamAddressRefusedError';
  readonly code = 'ERR_UPSTREAM_ADDRESS_REFUSED';

  constructor(
    readonly host: string,
    readonly refusal: AddressRefusal,
  ) {
    super(
      `host "${host}" resolved to ${refusal.address}` +
        `${refusal.ipv4 === undefined ? '' : ` (IPv4 ${refusal.ipv4})`} at connect, ` +
        `${refusal.className}, which a registered upstream may not reach ` +
        `(${refusal.allowedBy} can allow it)`,
    );
  }
}

/** Every address of a name, as dns.lookup with `all: true` gives them. */
export type LookupAll = (
  host: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** getaddrinfo, as node:net would have used it (the registration guard resolves alike). */
const lookupAll: LookupAll = (host, options, callback) =>
  systemLookup(host, { ...options, all: true }, callback);

/**
 * A `lookup` for net.connect / tls.connect that resolves the name, checks every address
 * against `rules`, and gives the socket only what passed: the socket dials one of the
 * addresses checked here, so the check is made at the address connected to, whatever the
 * name answered at registration. One refused address refuses the name, as at registration
 * (libs/registrations/src/upstream-address-guard.ts). A refusal is handed to `onRefused` and
 * fails the connect with UpstreamAddressRefusedError; nothing is dialled.
 *
 * @param resolve the resolver (tests give a table; the default is the system's)
 */
export function guardedLookup(
  rules: AddressRules,
  onRefused: (err: UpstreamAddressRefusedError) => void,
  resolve: LookupAll = lookupAll,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (err, addresses) => {
      if (err !== null) {
        callback(err, '', 0);
        return;
      }
      if (addresses.length === 0) {
        callback(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
            code: 'ENOTFOUND',
            hostname,
          }),
          '',
          0,
        );
        return;
      }
      for (const { address } of addresses) {
        const refusal = rules.refusal(address);
        if (refusal === undefined) continue;
        const refused = new UpstreamAddressRefusedError(hostname, refusal);
        onRefused(refused);
        callback(refused, '', 0);
        return;
      }
      // node:net asks for every address (`all`) when it tries them in turn (autoSelectFamily)
      if (options.all === true) {
        callback(null, addresses);
        return;
      }
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An undici connector whose connections pass `rules`: a host name through guardedLookup
 * (checked at the address dialled), an IP-address host checked before the socket is opened
 * (node:net skips `lookup` for those). For the Agent of a runtime-registered upstream
 * (UpstreamConnections); configured upstreams keep the plain connector.
 */
export function guardedConnector(
  rules: AddressRules,
  onRefused: (err: UpstreamAddressRefusedError) => void,
  resolve: LookupAll = lookupAll,
  options: { readonly timeout?: number } = {},
): buildConnector.connector {
  const connect = buildConnector({
    lookup: guardedLookup(rules, onRefused, resolve),
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
  return (connectOptions, callback) => {
    // undici gives IPv6 hosts without brackets; a URL's hostname keeps them
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) {
      const refusal = rules.refusal(host);
      if (refusal !== undefined) {
        const refused = new UpstreamAddressRefusedError(host, refusal);
        onRefused(refused);
        callback(refused, null);
        return;
      }
    }
    connect(connectOptions, callback);
  };
}
