import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Agent, errors as undiciErrors, request } from 'undici';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import type { PullErrorType } from '@app/registry';

/** A pulled manifest's bytes (decoded, parsed and validated by the registry); or why there is none. */
export type FetchedManifest =
  | { readonly ok: true; readonly bytes: Buffer; readonly digest?: string }
  | { readonly ok: false; readonly errorType: PullErrorType; readonly detail: string };

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Maps a thrown pull error to a failure value; never lets the error escape (contract §6). */
export function classifyPullError(err: unknown, readTimeoutMillis: number): FetchedManifest {
  if (err instanceof undiciErrors.ConnectTimeoutError) {
    return { ok: false, errorType: 'ManifestTimeoutError', detail: 'connect timeout' };
  }
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
  ) {
    return {
      ok: false,
      errorType: 'ManifestTimeoutError',
      detail: `no complete answer within ${readTimeoutMillis} ms`,
    };
  }
  if (err instanceof undiciErrors.HeadersOverflowError) {
    return {
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: 'the response headers are too large',
    };
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) {
    return { ok: false, errorType: 'ManifestConnectError', detail: code };
  }
  return {
    ok: false,
    errorType: 'UnexpectedPullError',
    detail: err instanceof Error ? err.name : typeof err,
  };
}

/**
 * Drops a response body we will not read. undici reports the abort as an 'error' event on
 * the body; without a listener that event would crash the process.
 */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * Pulls manifests: `GET {manifestUrl}` with `Accept: application/json` and no caller headers
 * (contract §4: a background refresh has no caller), connect and read timeouts from config
 * (§6), and a body cap of maxManifestBytes enforced while streaming, so an oversized
 * manifest is refused without being buffered. Also reads manifest files (legacy fixture,
 * fallbackManifestFile) under the same cap.
 */
@Injectable()
export class ManifestFetcher implements OnModuleDestroy {
  private readonly agent: Agent;
  private readonly maxBytes: number;
  private readonly readTimeoutMillis: number;
  private readonly connectTimeoutMillis: number;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const d = config.mcp.discovery;
    this.maxBytes = d.maxManifestBytes;
    this.readTimeoutMillis = d.readTimeoutMillis;
    this.connectTimeoutMillis = d.connectTimeoutMillis;
    this.agent = new Agent({
      connect: { timeout: d.connectTimeoutMillis },
      headersTimeout: d.readTimeoutMillis,
      bodyTimeout: d.readTimeoutMillis,
      keepAliveTimeout: 4_000,
    });
  }

  /** Never throws: every failure comes back as `{ ok: false }`. */
  async fetch(url: string): Promise<FetchedManifest> {
    try {
      // The whole pull is also bounded: a server that drips bytes cannot hold a round forever.
      const signal = AbortSignal.timeout(this.connectTimeoutMillis + this.readTimeoutMillis);
      const res = await request(url, {
        method: 'GET',
        headers: { accept: 'application/json' },
        dispatcher: this.agent,
        signal,
      });
      if (res.statusCode < 200 || res.statusCode > 299) {
        discard(res.body);
        return {
          ok: false,
          errorType: 'ManifestHttpStatusError',
          detail: `HTTP ${res.statusCode}`,
        };
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > this.maxBytes) {
        discard(res.body);
        return this.tooLarge(`Content-Length ${declared}`);
      }
      // Hashed and copied chunk by chunk as they arrive, so a large manifest costs no single
      // long copy or hash on the event loop (the digest lets the registry skip an unchanged one).
      const hash = createHash('sha1');
      let sized =
        Number.isFinite(declared) && declared > 0 ? Buffer.allocUnsafeSlow(declared) : undefined;
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        if (total + buf.length > this.maxBytes) {
          discard(res.body);
          return this.tooLarge(`more than ${total + buf.length} bytes streamed`);
        }
        hash.update(buf);
        if (sized !== undefined && total + buf.length > sized.length) {
          // more than declared: keep what was copied and collect the rest as chunks
          chunks.push(sized.subarray(0, total));
          sized = undefined;
        }
        if (sized !== undefined) buf.copy(sized, total);
        else chunks.push(buf);
        total += buf.length;
      }
      const bytes = sized !== undefined ? sized.subarray(0, total) : Buffer.concat(chunks, total);
      return { ok: true, bytes, digest: hash.digest('base64url') };
    } catch (err) {
      return classifyPullError(err, this.readTimeoutMillis);
    }
  }

  /** Reads a manifest file (legacy fixture or fallbackManifestFile). Never throws. */
  async readFile(path: string): Promise<FetchedManifest> {
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
  async onModuleDestroy(): Promise<void> {
    await this.agent.destroy();
  }

  private tooLarge(detail: string): FetchedManifest {
    return {
      ok: false,
      errorType: 'ManifestTooLargeError',
      detail: `${detail} > maxManifestBytes ${this.maxBytes}`,
    };
  }
}
