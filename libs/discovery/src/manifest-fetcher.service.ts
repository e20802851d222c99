import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { addAbortSignal, type Readable } from 'node:stream';
import { HttpService } from '@nestjs/axios';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { AxiosRequestConfig, AxiosResponse } from 'axios';
import { firstValueFrom } from 'rxjs';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import { decodingOrder, readBody } from '@app/http-body';
import { annotateSpan, failSpan, tracedHere, tracedHttpRequest } from '@app/observability';
import { createManifestAgents, type ManifestAgents } from './manifest-agents';
import { classifyPullError, type PullFailure } from './pull-errors';

export { classifyPullError } from './pull-errors';

/** A pulled manifest's bytes (decoded, parsed and validated by the registry); or why there is none. */
export type ManifestBytes =
  { readonly ok: true; readonly bytes: Buffer; readonly digest?: string } | PullFailure;

/** A pull's outcome: the bytes, why there are none, or 304 Not Modified (contract §6). */
export type FetchedManifest = ManifestBytes | { readonly ok: true; readonly notModified: true };

/**
 * The codings a manifest may arrive in; advertised so a Tool Service may compress
 * (docs/operations.md §7).
 */
const ACCEPT_ENCODING = 'gzip, deflate, br';

/** One response header as text (repeated values joined with ", "); undefined when absent. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value.join(', ');
  return undefined;
}

/**
 * Drops a response body we will not read. An abort is reported as an 'error' event on the
 * body; without a listener that event would crash the process.
 */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * Pulls manifests through `@nestjs/axios` (HttpService): `GET {manifestUrl}` with `Accept:
 * application/json` and no caller headers (contract §4: a background refresh has no caller),
 * on keep-alive agents with a connect timeout (§6), response headers within readTimeoutMillis
 * and the whole pull within connect + read ms. Redirects are not followed (a 3xx is a
 * ManifestHttpStatusError, as before), no proxy is read from the environment, and axios
 * decompresses nothing: the body is streamed through libs/http-body, which decodes gzip,
 * deflate and br and applies maxManifestBytes to the bytes received and to the decoded bytes
 * while they flow, so an oversized or bomb manifest is refused without being held whole.
 * Also reads manifest files (legacy fixture, fallbackManifestFile) under the same cap.
 */
@Injectable()
export class ManifestFetcher implements OnModuleDestroy {
  private readonly agents: ManifestAgents;
  private readonly maxBytes: number;
  private readonly readTimeoutMillis: number;
  private readonly deadlineMillis: number;
  private readonly requestConfig: AxiosRequestConfig;

  constructor(
    private readonly http: HttpService,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    const d = config.mcp.discovery;
    this.maxBytes = d.maxManifestBytes;
    this.readTimeoutMillis = d.readTimeoutMillis;
    // The whole pull is also bounded: a server that drips bytes cannot hold a round forever.
    this.deadlineMillis = d.connectTimeoutMillis + d.readTimeoutMillis;
    this.agents = createManifestAgents(d.connectTimeoutMillis);
    this.requestConfig = {
      headers: { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING },
      responseType: 'stream',
      decompress: false,
      maxRedirects: 0,
      proxy: false,
      // every status comes back as a response; pull() classifies non-2xx itself
      validateStatus: () => true,
      // until the response headers (axios' own clock starts with the request)
      timeout: d.readTimeoutMillis,
      transitional: { clarifyTimeoutError: true },
      httpAgent: this.agents.http,
      httpsAgent: this.agents.https,
    };
  }

  /**
   * Never throws: every failure comes back as `{ ok: false }`. In a traced refresh round the
   * GET is a CLIENT span under the bundle's pull, and the Tool Service gets its `traceparent`
   * (docs/operations.md §3 "Traces"), as a call of one of its tools does.
   */
  fetch(url: string): Promise<FetchedManifest> {
    if (!tracedHere()) return this.get(url, this.requestConfig);
    // the status code is set where the response is read (readManifest)
    return tracedHttpRequest(
      'GET',
      url,
      {},
      async (trace) => {
        const headers = { ...this.requestConfig.headers, ...trace };
        const fetched = await this.get(url, { ...this.requestConfig, headers });
        if (!fetched.ok) failSpan(fetched.errorType);
        return fetched;
      },
      () => undefined,
    );
  }

  private async get(url: string, config: AxiosRequestConfig): Promise<FetchedManifest> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.deadlineMillis);
    try {
      const res = await firstValueFrom(
        this.http.get<Readable>(url, { ...config, signal: deadline.signal }),
      );
      return await this.readManifest(res, deadline.signal);
    } catch (err) {
      return classifyPullError(err, this.readTimeoutMillis, deadline.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads a manifest file (legacy fixture or fallbackManifestFile). Never throws. */
  async readFile(path: string): Promise<ManifestBytes> {
    try {
      const info = await stat(path);
      if (info.size > this.maxBytes) return this.tooLarge(`file of ${info.size} bytes`);
      return { ok: true, bytes: await readFile(path) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      return {
        ok: false,
        errorType: 'ManifestFileError',
        detail: `cannot read the manifest file (${code})`,
      };
    }
  }

  /** A pull still running at shutdown is abandoned: its result would be dropped anyway. */
  onModuleDestroy(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /**
   * The body of a response: refused by status or declared size before reading; otherwise
   * streamed, decoded and hashed chunk by chunk (the digest, of the decoded bytes, lets the
   * registry skip an unchanged manifest).
   * @throws what readBody throws; fetch() classifies it
   */
  private async readManifest(
    res: AxiosResponse<Readable>,
    deadline: AbortSignal,
  ): Promise<FetchedManifest> {
    const body = res.data;
    // the manifest GET's CLIENT span, when the pull is traced (fetch)
    annotateSpan({ 'http.response.status_code': res.status });
    if (res.status === 304) {
      discard(body);
      return { ok: true, notModified: true };
    }
    if (res.status < 200 || res.status > 299) {
      discard(body);
      return { ok: false, errorType: 'ManifestHttpStatusError', detail: `HTTP ${res.status}` };
    }
    const declared = Number(headerText(res.headers['content-length']));
    if (Number.isFinite(declared) && declared > this.maxBytes) {
      discard(body);
      return this.tooLarge(`Content-Length ${declared}`);
    }
    let codings;
    try {
      codings = decodingOrder(headerText(res.headers['content-encoding']));
    } catch (err) {
      discard(body);
      throw err;
    }
    // past the headers axios no longer watches the signal: the deadline now ends the body
    addAbortSignal(deadline, body);
    const hash = createHash('sha1');
    const bytes = await readBody(body, {
      codings,
      maxBytes: this.maxBytes,
      sizeHint: codings.length === 0 && declared > 0 ? declared : undefined,
      onChunk: (chunk) => hash.update(chunk),
    });
    return { ok: true, bytes, digest: hash.digest('base64url') };
  }

  private tooLarge(detail: string): ManifestBytes {
    return {
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: `${detail} > maxManifestBytes ${this.maxBytes}`,
    };
  }
}
