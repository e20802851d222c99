import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { checkRegistration, type GatewayConfig, type RegisteredUpstreamConfig } from '@app/config';
import type { RegistryService } from '@app/registry';
import type { UpstreamConnections } from '@app/upstream';
import type { StoredRegistration } from './registration-record';
import type { UpstreamAddressGuard } from './upstream-address-guard';

/** A registration as this replica applied it. */
export interface Known {
  /** The record as the store holds it (what a re-seed writes back). */
  readonly stored: StoredRegistration;
  /** The upstream as the boot rules read it (defaults filled in); the stored one when invalid. */
  readonly upstream: RegisteredUpstreamConfig;
  /** JSON of the stored upstream fields: a change of it re-applies the registration. */
  readonly signature: string;
  /** Why the boot rules refuse it now (a config change, a source registered before it). */
  readonly invalid?: string;
  /** Why the address guard refused this stored upstream when it was read (per signature). */
  readonly addressRefusal?: string;
}

/** The order every replica applies registrations in: oldest first, then by id. */
export function byAge(a: StoredRegistration, b: StoredRegistration): number {
  const x = a.upstream.id;
  const y = b.upstream.id;
  return a.createdAt - b.createdAt || (x < y ? -1 : x > y ? 1 : 0);
}

/**
 * The registrations this replica applied, and how it applies what it reads from the store:
 * the boot rules (checkRegistration) in one order (byAge) and the address guard, so every
 * replica takes the same registrations and refuses the same ones (operations §15 "One answer
 * on every replica"). It puts and removes the registry's sources; `onChange` asks for a round.
 */
/**
 * What a stored record is applied from: createdAt too, so a registration deleted and posted
 * again with the same content is a new one, placed after those registered before it.
 */
function signatureOf(registration: StoredRegistration): string {
  return JSON.stringify([registration.createdAt, registration.upstream]);
}

/**
 * Which registration a record is, the same on every replica and from what the replicas apply
 * (signatureOf): createdAt tells one posted again under an id from the earlier one, the
 * digest of its fields a change of it. A write that changes nothing (a PATCH to the state it
 * has) keeps it, as it keeps what each replica applied.
 */
function registrationOf(registration: StoredRegistration): string {
  const digest = createHash('sha256').update(signatureOf(registration)).digest('base64url');
  return `${registration.createdAt}.${digest.slice(0, 22)}`;
}

export class AppliedRegistrations {
  private readonly logger = new Logger('Admin');
  private readonly known = new Map<string, Known>();
  private readonly configuredIds: ReadonlySet<string>;
  /** The set of records last applied (versions and fields), to skip an unchanged read. */
  private appliedSignature?: string;

  constructor(
    private readonly config: GatewayConfig,
    private readonly registry: RegistryService,
    private readonly connections: UpstreamConnections,
    private readonly guard: UpstreamAddressGuard,
    private readonly onChange: () => void,
  ) {
    this.configuredIds = new Set(config.upstreams.map((u) => u.id));
  }

  get size(): number {
    return this.known.size;
  }

  get(id: string): Known | undefined {
    return this.known.get(id);
  }

  has(id: string): boolean {
    return this.known.has(id);
  }

  /** Every registration applied, oldest first. */
  all(): Known[] {
    return [...this.known.values()].sort((a, b) => byAge(a.stored, b.stored));
  }

  /**
   * The address guard over every stored record that is new or changed since this replica read
   * it (a record another replica wrote, or one written around the API): a refused address is
   * never applied. A host that does not resolve now passes (its pulls fail on their own).
   */
  async guardChanged(
    registrations: readonly StoredRegistration[],
  ): Promise<ReadonlyMap<string, string | undefined>> {
    const out = new Map<string, string | undefined>();
    await Promise.all(
      registrations.map(async (r) => {
        const id = r.upstream.id;
        const previous = this.known.get(id);
        if (previous !== undefined && previous.signature === signatureOf(r)) {
          out.set(id, previous.addressRefusal);
          return;
        }
        const url = typeof r.upstream.url === 'string' ? r.upstream.url : '';
        const endpoint = (r.upstream.authorization as { tokenEndpoint?: unknown } | undefined)
          ?.tokenEndpoint;
        const options = { unresolvedPasses: true };
        const problems = await Promise.all([
          this.guard.problem(url, 'url', options),
          typeof endpoint === 'string'
            ? this.guard.problem(endpoint, 'authorization.tokenEndpoint', options)
            : undefined,
        ]);
        out.set(id, problems.filter((p) => p !== undefined).join('; ') || undefined);
      }),
    );
    return out;
  }

  /**
   * Applies the registrations of the store, in the order every replica uses: each one is
   * checked against the configuration and the ones before it, so an overlap (two replicas'
   * registrations, or one re-seeded after a reset) fails the later one everywhere.
   */
  applyAll(
    registrations: readonly StoredRegistration[],
    refusals: ReadonlyMap<string, string | undefined> = new Map(),
  ): void {
    const ordered = [...registrations].sort(byAge);
    const signature = JSON.stringify(ordered.map((r) => [r.version, r.upstream]));
    if (signature === this.appliedSignature) return;
    const accepted: RegisteredUpstreamConfig[] = [];
    const seen = new Set<string>();
    let changed = false;
    for (const registration of ordered) {
      seen.add(registration.upstream.id);
      const id = registration.upstream.id;
      // a record this replica wrote was guarded by the write; one read keeps its refusal
      const refusal = refusals.has(id) ? refusals.get(id) : this.known.get(id)?.addressRefusal;
      changed = this.applyOne(registration, accepted, refusal) || changed;
    }
    for (const id of [...this.known.keys()])
      if (!seen.has(id)) {
        this.forget(id);
        changed = true;
      }
    this.appliedSignature = signature;
    if (changed) this.onChange();
  }

  /** Applies one registration after `accepted` (pushed to when valid); true when the registry changed. */
  private applyOne(
    registration: StoredRegistration,
    accepted: RegisteredUpstreamConfig[],
    addressRefusal: string | undefined,
  ): boolean {
    const id = registration.upstream.id;
    const previous = this.known.get(id);
    const signature = signatureOf(registration);
    if (this.configuredIds.has(id)) {
      const invalid = `id: "${id}" is now a configured upstream`;
      this.known.set(id, {
        stored: registration,
        upstream: registration.upstream,
        signature,
        invalid,
      });
      return false;
    }
    const check = checkRegistration(registration.upstream, this.config, accepted);
    const invalid = check.ok ? addressRefusal : check.problems.join('; ');
    if (check.ok && addressRefusal === undefined) accepted.push(check.upstream);
    if (
      previous !== undefined &&
      previous.signature === signature &&
      previous.invalid === invalid
    ) {
      this.known.set(id, { ...previous, stored: registration });
      return false;
    }
    if (previous !== undefined) void this.connections.release(id);
    if (!check.ok || invalid !== undefined) {
      this.registry.removeUpstream(id);
      this.known.set(id, {
        stored: registration,
        upstream: registration.upstream,
        signature,
        invalid,
        addressRefusal,
      });
      this.logger.warn(`Registered upstream ${id} is not applied: ${invalid}`);
      return previous !== undefined && previous.invalid === undefined;
    }
    // the definition names the record it was applied from, and the connections take it as the
    // one of its id from now on: nothing of an earlier registration of the id reaches it
    // (docs/operations.md §15 "Deleted means gone")
    const definition = { ...check.definition, registration: registrationOf(registration) };
    this.connections.admit(definition);
    // registration time orders the registered sources alike on every replica (the order in
    // which sources claim resource URIs, docs/operations.md §10 "Routing")
    this.registry.putUpstream(definition, registration.createdAt);
    this.known.set(id, { stored: registration, upstream: check.upstream, signature });
    return true;
  }

  private forget(id: string): void {
    this.known.delete(id);
    this.registry.removeUpstream(id);
    void this.connections.release(id);
  }

  /** The stored records this replica applied, but `exceptId`'s. */
  records(exceptId?: string): StoredRegistration[] {
    return [...this.known.values()]
      .filter((k) => k.stored.upstream.id !== exceptId)
      .map((k) => k.stored);
  }

  valid(exceptId?: string): RegisteredUpstreamConfig[] {
    return [...this.known.values()]
      .filter((k) => k.invalid === undefined && k.stored.upstream.id !== exceptId)
      .map((k) => k.upstream);
  }
}
