import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { BundleDefinition, GatewayConfig } from '@app/config';
import { ThrottledLines, type GatewayMetrics } from '@app/observability';
import type { Clock } from '../clock';
import { problemText, type PullErrorType } from '../manifest/manifest-errors';
import type { AcceptedManifest, ManifestTool } from '../manifest/manifest.types';
import type { OutputValidator } from '../catalog/catalog-tool';
import type { SourceContribution } from '../catalog/source-contribution';
import { bundleContribution } from './bundle-contribution';
import { unpackTools } from '../manifest/manifest-transfer';
import {
  EVENT_LOOP_COMPILE_NODES,
  holdsLargeSchema,
  SchemaChecker,
} from '../manifest/schema-checker';
import { parseJsonSliced } from '../manifest/sliced-json';
import { parseKeepingNumbers, type NumberTexts } from '../manifest/number-texts';
import {
  validateManifest,
  type ManifestExpectations,
  type ManifestValidation,
} from '../manifest/validate-manifest';
import type { WorkerResponse } from '../manifest/manifest-worker-protocol';
import { WORKER_MIN_BYTES, WorkerValidator } from '../manifest/worker-validator';
import type { BundlePullResult } from '../pull-result';
import { sourceUrlDigest, type LastGoodStore } from '../redis/last-good-store';
import {
  MapRound,
  type MergeRejectionType,
  type PartialSource,
  type SourceIntake,
  type SourcePulls,
  resultsOf,
} from '../source-intake';
import {
  BundleRecord,
  type BundleStatus,
  type BundleStatusView,
  type CopySource,
  type LastGoodCopy,
} from '../state/bundle-record';

/** Strict UTF-8 (a BOM is dropped): a manifest that is not UTF-8 is not JSON (RFC 8259). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A bundle copy the catalog may adopt: pulled this round, or not (fallback file, Redis). */
export interface BundleCandidate {
  readonly copy: LastGoodCopy;
  readonly pulled: boolean;
}

/** A copy adopted without a pull of this replica: a Redis last-good (warm start). */
export interface StoredCopy {
  readonly manifest: AcceptedManifest;
  readonly fetchedAt: Date;
}

/** Why a bundle's copy was not adopted: the type name, and for validation failures the detail. */
export interface BundleFailure {
  readonly errorType: PullErrorType;
  readonly detail?: string;
}

/** One round's bundle outcomes, before the catalog decides which copies it adopts. */
export class BundleRound extends MapRound<BundleCandidate, BundleFailure> {
  protected fingerprintOf(candidate: BundleCandidate): string {
    return candidate.copy.manifest.fingerprint;
  }

  /** A bundle's status names the error type; the merge's detail is in the registry's log line. */
  protected failureOf(_id: string, errorType: MergeRejectionType): BundleFailure {
    return { errorType };
  }
}

/**
 * The intake of Tool Service bundles (contract §5, §6, §7.1, §11): validates each pulled
 * manifest (large ones in a worker thread), keeps every bundle's last good copy and status,
 * and shares adopted copies through the last-good store. Catalog publication is
 * RegistryService's: it asks for the copies of a round and reports back which it adopted.
 */
export class BundleIntake implements SourceIntake<BundleRound> {
  readonly kind = 'bundle';
  private readonly logger = new Logger('Registry');
  /**
   * A caller's unknown tool name is a round, and every round pulls every bundle: a pull's
   * failure or rejection is counted per bundle and kind, the first at once, then at most once a
   * minute (docs/operations.md §4 "What outsiders can make the gateway log").
   */
  private readonly pullLines = new ThrottledLines((line) => this.logger.warn(line));
  readonly records: ReadonlyMap<string, BundleRecord>;
  private readonly schemas = new SchemaChecker();
  private readonly worker = new WorkerValidator();
  /**
   * Digests of the schemas the worker found to compile, newline-separated and handed back to
   * the next worker as they are: the event loop never splits or stores them one by one.
   */
  private workerGoodSchemas = '';
  private skippedUnchanged = false;

  /**
   * @param outputValidatorOf the compiled validator of a listed tool's outputSchema, given to the
   *   catalog entries (OutputValidators: compiled once per catalog, never per call)
   */
  constructor(
    private readonly config: GatewayConfig,
    private readonly clock: Clock,
    private readonly store: LastGoodStore | null,
    private readonly metrics: GatewayMetrics | null,
    private readonly outputValidatorOf: (tool: ManifestTool) => OutputValidator | undefined = () =>
      undefined,
  ) {
    this.records = new Map(config.bundles.map((b) => [b.id, new BundleRecord(b)]));
  }

  /** The bundles to pull: enabled ones, in config order. */
  enabled(): readonly BundleDefinition[] {
    return this.config.bundles.filter((b) => b.enabled);
  }

  emptyRound(): BundleRound {
    return new BundleRound((id) => this.records.get(id)?.lastGood?.manifest.fingerprint);
  }

  /**
   * Every enabled bundle's copy as the catalog would take it with this round's candidates, in
   * config order; undefined while one of them has no copy (contract §1: all or nothing).
   */
  contributions(round: BundleRound): SourceContribution[] | undefined {
    const out: SourceContribution[] = [];
    for (const record of this.records.values()) {
      if (!record.definition.enabled) continue;
      const manifest =
        round.candidates.get(record.definition.id)?.copy.manifest ?? record.lastGood?.manifest;
      if (manifest === undefined) return undefined;
      out.push(bundleContribution(record.definition, manifest, this.outputValidatorOf));
    }
    return out;
  }

  statuses(): { id: string; status: BundleStatus }[] {
    return [...this.records.values()].map((r) => ({ id: r.definition.id, status: r.status }));
  }

  namePrefixOf(id: string): string | undefined {
    return this.records.get(id)?.definition.namePrefix;
  }

  /**
   * Enabled bundles served from a last good copy or a fallback file, or not at all
   * (docs/operations.md §10 "Partial lists").
   */
  partialSources(): PartialSource[] {
    const out: PartialSource[] = [];
    for (const record of this.records.values()) {
      const status = record.status;
      if (status === 'degraded' || status === 'fallback')
        out.push({ id: record.definition.id, kind: 'bundle', state: 'last-good' });
      else if (status === 'unreachable')
        out.push({ id: record.definition.id, kind: 'bundle', state: 'missing' });
    }
    return out;
  }

  views(now: Date): BundleStatusView[] {
    return [...this.records.values()].map((r) => r.view(now));
  }

  /**
   * The shared store's copies of the enabled bundles (contract §11 warm start), each checked like
   * a pull (garbage is a miss, never a catalog), as candidates where nothing newer is held here.
   */
  async storedRound(): Promise<BundleRound> {
    if (this.store === null) return this.emptyRound();
    const stored = await this.store.load(this.enabled().map((b) => b.id));
    const copies = new Map<string, StoredCopy>();
    for (const [bundleId, entry] of stored) {
      const record = this.records.get(bundleId);
      // a copy pulled from another manifestUrl (a configuration since changed, or another
      // deployment under the same identity) is another Tool Service's manifest: its tools would
      // be called at this bundle's baseEndpoint (docs/operations.md §5 "Redis")
      if (
        record !== undefined &&
        entry.urlDigest !== undefined &&
        entry.urlDigest !== sourceUrlDigest(record.definition.manifestUrl)
      ) {
        this.logger.log(
          `Bundle ${bundleId}: the Redis copy was pulled from another manifestUrl (an earlier configuration); not used`,
        );
        continue;
      }
      const manifest = await this.checkStored(bundleId, entry.body, entry.fetchedAt);
      if (manifest === undefined) continue;
      copies.set(bundleId, { manifest, fetchedAt: entry.fetchedAt });
      this.logger.log(
        `Bundle ${bundleId}: warm start from the Redis copy (revision ${manifest.revision ?? 'none'}, ` +
          `pulled ${entry.fetchedAt.toISOString()} by ${entry.writtenBy})`,
      );
    }
    return this.storedCopiesRound(copies);
  }

  /**
   * Copies kept elsewhere (Redis last-good) as candidates for the enabled bundles that hold
   * nothing newer: a stored copy never replaces a copy this replica pulled or holds newer.
   */
  storedCopiesRound(copies: ReadonlyMap<string, StoredCopy>): BundleRound {
    const round = this.emptyRound();
    for (const [bundleId, stored] of copies) {
      const record = this.records.get(bundleId);
      if (!record?.definition.enabled) continue;
      if (record.lastGood && record.lastGood.fetchedAt >= stored.fetchedAt) continue;
      if (record.lastGood?.source === 'remote') continue;
      round.candidates.set(bundleId, {
        copy: { manifest: stored.manifest, source: 'redis', fetchedAt: stored.fetchedAt },
        pulled: false,
      });
    }
    return round;
  }

  /** A stored copy (Redis warm start) checked like a pull; undefined when it does not pass. */
  async checkStored(
    bundleId: string,
    body: unknown,
    fetchedAt: Date,
  ): Promise<AcceptedManifest | undefined> {
    const record = this.records.get(bundleId);
    if (record === undefined) return undefined;
    // a schema too large to compile on the event loop is checked in a worker, as a pull's is
    const inWorker =
      this.worker.available && holdsLargeSchema(body, EVENT_LOOP_COMPILE_NODES)
        ? await this.validateInWorker(record, JSON.stringify(body), 'redis', fetchedAt)
        : 'crashed';
    const checked =
      inWorker === 'crashed' ? await this.validate(record, body, 'redis', fetchedAt) : inWorker;
    return 'errorType' in checked ? undefined : checked.manifest;
  }

  intakePulls(pulls: readonly SourcePulls[]): Promise<BundleRound> {
    return this.intake(resultsOf(pulls, this.kind));
  }

  /** Checks a round's pull results; nothing is adopted until `commit`. */
  async intake(results: readonly BundlePullResult[]): Promise<BundleRound> {
    const round = this.emptyRound();
    const { candidates, failures } = round;
    for (const result of results) {
      const record = this.records.get(result.bundleId);
      if (!record?.definition.enabled) continue;
      record.lastAttemptAt = result.attemptedAt;
      if (result.kind === 'manifest') {
        const source = record.definition.manifestFile === undefined ? 'remote' : 'fixture';
        const copy = await this.adoptRaw(
          record,
          result.raw,
          source,
          result.attemptedAt,
          result.digest,
        );
        if ('errorType' in copy) {
          failures.set(record.definition.id, copy);
          if (result.readFallback !== undefined && record.lastGood === undefined)
            await this.serveFallback(record, await result.readFallback(), candidates);
        } else candidates.set(record.definition.id, { copy, pulled: true });
        continue;
      }
      if (result.kind === 'not-modified') {
        // contract §6: 304 keeps the last good copy and starts the failure count over; a copy
        // read from Redis is then the Tool Service's current one, so the bundle is healthy
        // (§9: the last pull succeeded), as after a pull of the same manifest
        const last = record.lastGood;
        if (last !== undefined) {
          this.skippedUnchanged = true;
          candidates.set(record.definition.id, {
            copy: {
              ...last,
              fetchedAt: result.attemptedAt,
              ...(last.source === 'redis' && { source: 'remote' as const }),
            },
            pulled: true,
          });
        } else {
          failures.set(record.definition.id, {
            errorType: 'ManifestHttpStatusError',
            detail: 'HTTP 304 Not Modified with no copy to keep',
          });
          this.logger.warn(
            `Bundle ${record.definition.id}: manifest pull answered 304 Not Modified, but there is no copy to keep yet`,
          );
        }
        continue;
      }
      failures.set(record.definition.id, { errorType: result.errorType });
      const { id } = record.definition;
      const line =
        `manifest pull failed (${result.errorType}: ${result.detail}); ` +
        (record.lastGood
          ? `serving the last good copy (revision ${record.lastGood.manifest.revision ?? 'none'})`
          : 'no copy to serve yet');
      this.pullLines.note(`${id}\u0000failed\u0000${result.errorType}`, (count) =>
        count === 1
          ? `Bundle ${id}: ${line}`
          : `Bundle ${id}: ${count} pulls since the last line: ${line}`,
      );
      await this.serveFallback(record, result.fallbackRaw, candidates);
    }
    // The schema cache keeps what this round checked; after a round that skipped unchanged
    // manifests it keeps everything, or their schemas would all be compiled again next time.
    if (results.length >= this.enabled().length && !this.skippedUnchanged)
      this.schemas.retainOnlySeen();
    this.skippedUnchanged = false;
    return round;
  }

  /**
   * Contract §3: a bundle whose first remote pull failed (no answer, or no valid manifest) and
   * that has no copy serves its local fallbackManifestFile, when the puller brought one.
   */
  private async serveFallback(
    record: BundleRecord,
    fallbackRaw: Buffer | string | undefined,
    candidates: BundleRound['candidates'],
  ): Promise<void> {
    if (fallbackRaw === undefined || record.lastGood !== undefined) return;
    const copy = await this.adoptRaw(record, fallbackRaw, 'fallback', this.clock.now());
    if ('errorType' in copy) return;
    candidates.set(record.definition.id, { copy, pulled: false });
    this.logger.warn(
      `Bundle ${record.definition.id}: first remote pull failed; serving its local fallbackManifestFile`,
    );
  }

  /**
   * A pulled manifest: unchanged since the last good copy (same digest) it is adopted as it
   * is, without decoding or parsing; a large one is decoded, parsed and validated in a worker
   * thread (its bytes transferred, not copied); a small one here, parsed in slices.
   */
  private async adoptRaw(
    record: BundleRecord,
    raw: Buffer | string,
    source: CopySource,
    fetchedAt: Date,
    digest?: string,
  ): Promise<LastGoodCopy | BundleFailure> {
    const textDigest = digest ?? createHash('sha1').update(raw).digest('base64url');
    const last = record.lastGood;
    if (last !== undefined && last.textDigest === textDigest && last.source === source) {
      this.skippedUnchanged = true;
      return { manifest: last.manifest, source, fetchedAt, textDigest };
    }
    const size = typeof raw === 'string' ? raw.length : raw.length;
    if (size >= WORKER_MIN_BYTES && this.worker.available) {
      const copy = await this.validateInWorker(record, raw, source, fetchedAt);
      if (copy !== 'crashed') return 'errorType' in copy ? copy : { ...copy, textDigest };
    }
    const copy = await this.validateHere(record, raw, source, fetchedAt);
    return 'errorType' in copy ? copy : { ...copy, textDigest };
  }

  /** A manifest decoded, parsed in slices and validated on the event loop (time-sliced). */
  private async validateHere(
    record: BundleRecord,
    raw: Buffer | string,
    source: CopySource,
    fetchedAt: Date,
  ): Promise<LastGoodCopy | BundleFailure> {
    let text: string;
    try {
      text = typeof raw === 'string' ? raw : STRICT_UTF8.decode(raw);
    } catch {
      return this.notJson(record, source, 'not valid UTF-8');
    }
    let body: unknown;
    let numbers: NumberTexts | undefined;
    try {
      // numbers a double would rewrite are kept as written (number-texts.ts): a rare manifest,
      // parsed whole then
      const kept = parseKeepingNumbers(text);
      body = kept === undefined ? await parseJsonSliced(text) : kept.body;
      numbers = kept?.numbers;
    } catch {
      return this.notJson(record, source, 'not valid JSON');
    }
    // One schema's compile cannot be sliced: a small manifest with a large schema is
    // validated in a worker as a large manifest is (operations §2 "Large manifests").
    if (this.worker.available && holdsLargeSchema(body, EVENT_LOOP_COMPILE_NODES)) {
      const copy = await this.validateInWorker(record, raw, source, fetchedAt);
      if (copy !== 'crashed') return copy;
    }
    return this.validate(record, body, source, fetchedAt, numbers);
  }

  private notJson(
    record: BundleRecord,
    source: CopySource,
    why: string,
  ): { errorType: PullErrorType } {
    this.logger.warn(
      `Bundle ${record.definition.id}: ${source} manifest is ${why}; the last good copy stays`,
    );
    return { errorType: 'ManifestNotJsonError' };
  }

  /**
   * A large manifest: parsed and validated in a worker thread, off the event loop of /mcp. A
   * worker that dies before it answers (out of memory, killed, a crash of its own) says nothing
   * about the manifest: it is logged with Node's code and message, counted, and the validation
   * runs again at once in a new worker; when that one dies too, `crashed` (the caller validates
   * on the event loop, in slices), so a crash never costs the catalog a round.
   */
  /**
   * How long one validation worker may run: ten times the manifest read timeout (30 s by
   * default) plus 2 s per MiB of manifest, generous for a loaded machine; a worker past it is
   * terminated and handled as one that died (operations §2 "Large manifests").
   */
  private workerDeadlineMillis(bytes: number): number {
    return 10 * this.config.mcp.discovery.readTimeoutMillis + Math.ceil((2000 * bytes) / 1048576);
  }

  private async validateInWorker(
    record: BundleRecord,
    raw: Buffer | string,
    source: CopySource,
    fetchedAt: Date,
  ): Promise<LastGoodCopy | BundleFailure | 'crashed'> {
    const id = record.definition.id;
    this.logger.debug(`Bundle ${id}: validating a ${raw.length}-byte manifest in a worker thread`);
    const deadline = this.workerDeadlineMillis(raw.length);
    let response: WorkerResponse | undefined;
    for (const then of ['retry', 'main-thread'] as const) {
      response = await this.worker.run(
        {
          // A copy each time: the bytes are transferred to the worker, and a retry needs them again.
          bytes: typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw),
          expect: this.expectationsOf(record),
          knownGoodSchemas: this.workerGoodSchemas,
        },
        deadline,
      );
      if (response.kind !== 'crashed') break;
      this.metrics?.validationWorkerCrash(id, then, response.reason);
      this.logger.error(
        `Bundle ${id}: the validation worker of its ${source} manifest ` +
          (response.reason === 'timeout' ? 'hung ' : 'died ') +
          `(${response.name}${response.code === undefined ? '' : ` ${response.code}`}: ${response.message ?? 'no message'}); ` +
          (then === 'retry'
            ? 'validating it again in a new worker'
            : 'validating it on the main thread, in slices'),
      );
    }
    if (response === undefined) return 'crashed';
    switch (response.kind) {
      case 'not-json':
        return this.notJson(record, source, response.why);
      case 'crashed':
        return 'crashed';
      case 'rejected':
        this.workerGoodSchemas = this.boundedGoodSchemas(response.goodSchemas);
        return this.accepted(record, response.validation, source, fetchedAt);
      case 'accepted': {
        this.workerGoodSchemas = this.boundedGoodSchemas(response.goodSchemas);
        const tools = await unpackTools(response.tools);
        const manifest: AcceptedManifest = {
          bundleId: response.bundleId,
          revision: response.revision,
          fingerprint: response.fingerprint,
          tools,
        };
        return this.accepted(record, { ok: true, manifest }, source, fetchedAt);
      }
    }
  }

  /** The known-good list only grows; past twice a full catalog it starts over (a few recompilations). */
  private boundedGoodSchemas(digests: string): string {
    const limit = 2 * this.config.mcp.discovery.maxToolsTotal * 28;
    return digests.length > limit ? '' : digests;
  }

  private expectationsOf(record: BundleRecord): ManifestExpectations {
    return {
      bundleId: record.definition.id,
      namePrefix: record.definition.namePrefix,
      maxToolsPerBundle: this.config.mcp.discovery.maxToolsPerBundle,
    };
  }

  private async validate(
    record: BundleRecord,
    body: unknown,
    source: CopySource,
    fetchedAt: Date,
    numbers?: NumberTexts,
  ): Promise<LastGoodCopy | BundleFailure> {
    let result: ManifestValidation;
    try {
      result = await validateManifest(body, this.expectationsOf(record), this.schemas, numbers);
    } catch (err) {
      // One bundle's manifest must never sink the round for the others (contract §6).
      this.logger.error(
        `Bundle ${record.definition.id}: ${source} manifest could not be validated (${err instanceof Error ? err.name : typeof err}); the last good copy stays`,
      );
      return { errorType: 'UnexpectedPullError' };
    }
    return this.accepted(record, result, source, fetchedAt);
  }

  /** The copy a valid manifest makes, or the logged rejection of an invalid one. */
  private accepted(
    record: BundleRecord,
    result: ManifestValidation,
    source: CopySource,
    fetchedAt: Date,
  ): LastGoodCopy | BundleFailure {
    if (result.ok) return { manifest: result.manifest, source, fetchedAt };
    // The first problem is what /actuator/toolBundles shows as `detail`, by its manifest path
    // only: a tool's name holds the namePrefix, and may hold an internal name, neither of which
    // the status shows (contract §9); the log says it with the name first, then lists every
    // problem with ajv's words.
    const [first] = result.problems;
    const more = result.problems.length - 1;
    const andMore =
      more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'} in the log)` : '';
    const detail = first === undefined ? undefined : `${first.detail}${andMore}`;
    const statusDetail =
      first === undefined ? undefined : `${withoutToolName(first.detail)}${andMore}`;
    const { id } = record.definition;
    const { revision, errorType, problems } = result;
    this.pullLines.note(`${id}\u0000rejected\u0000${source}\u0000${errorType}`, (count) =>
      count === 1
        ? `Bundle ${id} revision ${revision ?? 'none'}: ${source} manifest rejected ` +
          `(${errorType})${detail === undefined ? '' : `: ${detail}`}; the last good copy stays. ` +
          `Problems: ${problems.map((p) => `[${p.type}] ${problemText(p)}`).join('; ')}`
        : `Bundle ${id}: ${count} ${source} manifests rejected (${errorType}) since the last line, the last revision ${revision ?? 'none'}${detail === undefined ? '' : `: ${detail}`}; the last good copy stays`,
    );
    return { errorType: result.errorType, detail: statusDetail };
  }

  /**
   * Writes every shared last good copy held here (pulled, or read from the store at warm start;
   * never a fallback file's) to the store again, each only if newer there.
   */
  writeBack(): number {
    let written = 0;
    for (const [id, record] of this.records)
      if (record.lastGood?.source === 'remote' || record.lastGood?.source === 'redis') {
        this.store?.save(id, record.definition.manifestUrl, record.lastGood);
        written += 1;
      }
    return written;
  }

  /** Adopts the candidates the catalog accepted and records every outcome of the round. */
  commit(round: BundleRound): void {
    const { candidates, failures } = round;
    for (const [id, candidate] of candidates) {
      const record = this.records.get(id);
      if (!record) continue;
      record.lastGood = candidate.copy;
      // contract §11: share every adopted remote manifest (a warm start for restarted replicas).
      if (candidate.copy.source === 'remote')
        this.store?.save(id, record.definition.manifestUrl, candidate.copy);
    }
    for (const [id, candidate] of candidates) {
      if (!candidate.pulled) continue;
      const ended = this.records.get(id)?.recordSuccess(candidate.copy.fetchedAt) ?? 0;
      this.metrics?.manifestPull(id, 'success', candidate.copy.fetchedAt);
      if (ended > 0)
        this.logger.log(
          `Bundle ${id}: recovered after ${ended} failed pull${ended === 1 ? '' : 's'}`,
        );
    }
    for (const [id, failure] of failures) {
      this.records.get(id)?.recordFailure(failure.errorType, failure.detail);
      this.metrics?.manifestPull(id, failure.errorType);
    }
  }
}

/**
 * A problem's detail without the tool name it quotes after the manifest path
 * (`tools[3] "ins.lookup": …` → `tools[3]: …`). The quoted name passed the tool name pattern,
 * which has no quote, so the first quote after the path ends it.
 */
function withoutToolName(detail: string): string {
  return detail.replace(/^(tools\[\d+\]) "[^"]*"/, '$1');
}
