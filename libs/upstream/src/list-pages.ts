import { createHash } from 'node:crypto';
import { shownResultType } from '@app/wire';
import type { UpstreamConnection } from './upstream-connection';
import { UpstreamFailure, type UpstreamSignal } from './upstream-types';

/**
 * Why a list could not be read to its end; `detail` names the method, never an address.
 * `too-many-items`: more items than `maxItems`, counted before the page that passed it was
 * parsed.
 */
export type ListPagesFaultKind = 'list-error' | 'bad-answer' | 'pagination' | 'too-many-items';

/** A list answered, but not as MCP pagination allows (docs/operations.md §10 "Lists"). */
export class ListPagesFault extends Error {
  override readonly name = 'ListPagesFault';

  constructor(
    readonly kind: ListPagesFaultKind,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** Every page of one list, joined, and the most restrictive cache hints of its pages. */
export interface ListPages {
  readonly items: readonly Readonly<Record<string, unknown>>[];
  /**
   * The smallest `ttlMs` over the pages, in ms (wire notes §3: absent or negative = 0; a
   * 2025 upstream sends none, so 0).
   */
  readonly ttlMs: number;
  /** `public` only when every page said `public` (absent = private, wire notes §3). */
  readonly cacheScope: 'public' | 'private';
  /** The length of the pages' results together (characters of their JSON text). */
  readonly bytes: number;
}

/** How to read one list. */
export interface ListPagesRequest {
  /** e.g. `tools/list`. */
  readonly method: string;
  /** The result member holding the items, e.g. `tools`, `resourceTemplates`. */
  readonly key: string;
  /** Remaining time of the whole read, in ms, asked before each page. */
  readonly left: () => number;
  readonly maxPages: number;
  /**
   * Most items of the whole list, every page together: a page that would pass it is refused
   * before it is parsed (listItemsExceed), and no further page is asked for.
   */
  readonly maxItems?: number;
  /** How the fault of a list over `maxItems` names the limit, e.g. `mcp.discovery.maxToolsPerUpstream 100`. */
  readonly maxItemsName?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * When the caller's credential in `headers` expires (ms since the epoch): no page is resumed
   * or repeated after it (UpstreamRequestOptions.credentialExpiresAtMs).
   */
  readonly credentialExpiresAtMs?: number;
  readonly signal?: UpstreamSignal;
  /** Called with each page's result, in order (the catalog keeps its declared cache hints). */
  readonly onPage?: (result: Readonly<Record<string, unknown>>, page: number) => void;
}

/**
 * Reads one list of a connected upstream to its end, following `nextCursor` (wire notes
 * §2.10), each page after the one before. Throws ListPagesFault for a JSON-RPC error, a
 * result without the list, a non-string cursor, a cursor seen before, more than `maxPages`
 * pages or more than `maxItems` items; UpstreamFailure when a page gets no answer (from the
 * connection) or the pages together pass the connection's `maxAnswerBytes` (`too-large`: a
 * list is one answer across its pages, as a resumed stream is, so no upstream can make the
 * catalog hold its one-answer limit times its page count). Shared by the
 * catalog's list pulls (DiscoveryModule) and live list fetches (ExecutionModule,
 * docs/operations.md §11 "Live lists").
 */
export async function readListPages(
  connection: UpstreamConnection,
  request: ListPagesRequest,
): Promise<ListPages> {
  const items: Readonly<Record<string, unknown>>[] = [];
  const seen = new Set<string>();
  let ttlMs = Number.POSITIVE_INFINITY;
  let cacheScope: 'public' | 'private' = 'public';
  let cursor: string | undefined;
  let bytes = 0;
  for (let page = 1; ; page++) {
    if (page > request.maxPages)
      throw new ListPagesFault(
        'pagination',
        `${request.method} has more than ${request.maxPages} pages`,
      );
    const { maxItems } = request;
    const tooMany = (): ListPagesFault =>
      new ListPagesFault(
        'too-many-items',
        `${request.method} lists more than ${maxItems} ${request.key} (${request.maxItemsName ?? 'the limit'})`,
      );
    let answer: Awaited<ReturnType<UpstreamConnection['request']>>;
    try {
      answer = await connection.request(
        request.method,
        cursor === undefined ? undefined : { cursor },
        {
          deadlineMillis: request.left(),
          headers: request.headers,
          credentialExpiresAtMs: request.credentialExpiresAtMs,
          signal: request.signal,
          listCap:
            maxItems === undefined
              ? undefined
              : { key: request.key, limit: maxItems - items.length, refusal: tooMany().detail },
        },
      );
    } catch (err) {
      if (err instanceof UpstreamFailure && err.kind === 'refused') throw tooMany();
      throw err;
    }
    if (answer.kind === 'error')
      throw new ListPagesFault(
        'list-error',
        `${request.method} answered JSON-RPC error ${answer.code}`,
      );
    const { result } = answer;
    bytes += answer.resultText?.length ?? JSON.stringify(result).length;
    if (bytes > connection.maxAnswerBytes)
      throw new UpstreamFailure(
        'too-large',
        `${request.method}'s pages together pass ${connection.maxAnswerBytes} bytes (mcp.execution.maxResponseBytes, one answer across its pages)`,
      );
    // a list's result is complete (MCP 2026-07-28 "ResultType"): any other value is invalid. A
    // 2025 result has no resultType (wire notes §2): a member of that name is the upstream's own
    if (connection.era !== '2025' && 'resultType' in result && result.resultType !== 'complete')
      throw new ListPagesFault(
        'bad-answer',
        `${request.method} answered resultType ${shownResultType(result.resultType)}, not "complete"`,
      );
    const pageItems = result[request.key];
    if (!Array.isArray(pageItems))
      throw new ListPagesFault(
        'bad-answer',
        `${request.method} result has no ${request.key} array`,
      );
    // The count before parsing found them all; this holds for any text it did not read as JSON.
    if (maxItems !== undefined && items.length + pageItems.length > maxItems) throw tooMany();
    for (const item of pageItems as Readonly<Record<string, unknown>>[]) items.push(item);
    // a 2025 upstream sends no cache hints (wire notes §3): a page's members of those names are
    // its own, and it counts as hinting nothing (its configured cacheTtlMillis/cacheScope apply)
    const hinted = connection.era !== '2025' ? result : withoutHints(result);
    request.onPage?.(hinted, page);
    const pageTtl = typeof hinted.ttlMs === 'number' && hinted.ttlMs > 0 ? hinted.ttlMs : 0;
    ttlMs = Math.min(ttlMs, pageTtl);
    if (hinted.cacheScope !== 'public') cacheScope = 'private';
    const next = result.nextCursor;
    if (next === undefined || next === null) break;
    if (typeof next !== 'string')
      throw new ListPagesFault('bad-answer', `${request.method} nextCursor is not a string`);
    // kept as a digest: an upstream's cursors may be megabytes each, page after page
    const digest = createHash('sha256').update(next).digest('base64');
    if (seen.has(digest))
      throw new ListPagesFault(
        'pagination',
        `${request.method} repeated the cursor of an earlier page`,
      );
    seen.add(digest);
    cursor = next;
  }
  return { items, ttlMs: Number.isFinite(ttlMs) ? ttlMs : 0, cacheScope, bytes };
}

/** A 2025 list page as it hints: without the members a 2026 page's cache hints would be. */
function withoutHints(
  result: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  if (!('ttlMs' in result) && !('cacheScope' in result)) return result;
  const { ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
  return rest;
}
