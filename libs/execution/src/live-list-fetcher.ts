import { Inject, Injectable } from '@nestjs/common';
import {
  GATEWAY_CONFIG,
  toolsCapPerUpstream,
  type GatewayConfig,
  type UpstreamDefinition,
} from '@app/config';
import { ListPagesFault, readListPages, UpstreamConnections, UpstreamFailure } from '@app/upstream';
import { callerExpiresAtMs, SourceCredentialError, type CallerIdentity } from '@app/identity';
import type { IncomingHeaders } from './call-tool-result';
import { CallerRequestHeaders } from './caller-request-headers';

/** One list method of an upstream: which capability offers it and the result member. */
export interface LiveListMethod {
  /** e.g. `tools/list`. */
  readonly method: string;
  /** The server capability that offers it, e.g. `tools`, `resources`. */
  readonly capability: string;
  /** The result member holding the items, e.g. `tools`, `resourceTemplates`. */
  readonly key: string;
}

/** What a live list fetch gives back (a failure is a value: one upstream never sinks the list). */
export type LiveListOutcome =
  | {
      readonly kind: 'items';
      readonly era: '2025' | '2026';
      readonly capabilities: Readonly<Record<string, unknown>>;
      /** Every page's items joined, as the upstream sent them. */
      readonly items: readonly Readonly<Record<string, unknown>>[];
      /** The smallest ttlMs of the pages, ms (0: do not reuse; a 2025 upstream says nothing: 0). */
      readonly ttlMs: number;
      readonly cacheScope: 'public' | 'private';
      /** The length of the pages' results together (ListPages.bytes). */
      readonly bytes: number;
    }
  /** The upstream's capabilities do not offer this list: it is no source of it. */
  | { readonly kind: 'not-offered' }
  | {
      readonly kind: 'failed';
      /** Why, in words safe for a client and the log: never an address or a header value. */
      readonly reason: string;
    };

/**
 * Fetches one list of a `lists: live` upstream for one caller
 * (docs/operations.md §11 "Live lists"): connects if needed, then reads every page, with the
 * caller's forwarded headers (and Authorization per the upstream's mode, upstreamRequestHeaders),
 * the whole fetch bounded by the upstream's `timeouts.listMillis`. Never throws.
 */
@Injectable()
export class LiveListFetcher {
  private readonly maxPages: number;
  /** A live tools/list over it is refused before it is parsed, as a pulled one is. */
  private readonly toolsCap: ReturnType<typeof toolsCapPerUpstream>;
  private readonly listItemsCap: number;

  constructor(
    private readonly connections: UpstreamConnections,
    private readonly callerHeaders: CallerRequestHeaders,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.maxPages = config.mcp.registry.maxPagesPerList;
    this.toolsCap = toolsCapPerUpstream(config.mcp.discovery);
    this.listItemsCap = config.mcp.discovery.maxListItemsPerUpstream;
  }

  async fetch(
    upstream: UpstreamDefinition,
    list: LiveListMethod,
    incoming: IncomingHeaders,
    caller?: CallerIdentity,
  ): Promise<LiveListOutcome> {
    const deadline = performance.now() + upstream.listMillis;
    const left = (): number => Math.max(1, Math.round(deadline - performance.now()));
    try {
      // the caller's own request: its headers, exchanged token included (as for a call)
      const headers = await this.callerHeaders.for(upstream, incoming, caller);
      const connection = this.connections.get(upstream);
      await connection.connect({ deadlineMillis: left() });
      const capabilities = connection.serverCapabilities ?? {};
      if (capabilities[list.capability] === undefined) return { kind: 'not-offered' };
      const pages = await readListPages(connection, {
        method: list.method,
        key: list.key,
        left,
        maxPages: this.maxPages,
        // every list is counted before it is parsed, as the catalog's pulls count them
        ...(list.key === 'tools'
          ? {
              maxItems: this.toolsCap.limit,
              maxItemsName: `mcp.discovery.${this.toolsCap.key} ${this.toolsCap.limit}`,
            }
          : {
              maxItems: this.listItemsCap,
              maxItemsName: `mcp.discovery.maxListItemsPerUpstream ${this.listItemsCap}`,
            }),
        headers,
        // a page's resume GET, or its repeat after a renewed session, is sent by the gateway on
        // its own: not with the caller's token past its exp (docs/security.md "Answers to
        // relayed requests")
        credentialExpiresAtMs: callerExpiresAtMs(caller),
      });
      return {
        kind: 'items',
        era: connection.era ?? '2025',
        capabilities,
        items: pages.items,
        ttlMs: pages.ttlMs,
        cacheScope: pages.cacheScope,
        bytes: pages.bytes,
      };
    } catch (err) {
      const reason =
        err instanceof UpstreamFailure || err instanceof ListPagesFault
          ? err.message
          : err instanceof SourceCredentialError
            ? 'its credential for this caller could not be had'
            : `unexpected ${err instanceof Error ? err.name : typeof err}`;
      return { kind: 'failed', reason };
    }
  }
}
