import { failSpan, inSpan } from '@app/observability';
import type { SourcePulls } from '@app/registry';

/** What a refresh round pulled of one kind of source, for RegistryService.applyPulls. */
export type { SourcePulls };

/**
 * One kind of source as a refresh round pulls it (docs/architecture.md "Sources as intakes"):
 * every enabled source of the kind, concurrently (contract §6 "동시 조회"), each failure a value,
 * never an exception (contract §6). A round loops over the pullers (SOURCE_PULLERS); a new kind of
 * source is one puller here and one intake in the registry.
 */
export interface SourcePuller {
  readonly kind: SourcePulls['kind'];
  /** @param traced each source's pull gets a span of its own (docs/operations.md §3 "Traces") */
  pullAll(traced: boolean): Promise<SourcePulls>;
}

/** The pullers a refresh round loops over, in the order their results are applied. */
export const SOURCE_PULLERS = Symbol('SOURCE_PULLERS');

/** Pulls every source at once; with `traced`, each pull in a span naming its source. */
export function pullEach<S extends { readonly id: string }, R extends PullOutcome>(
  kind: SourcePulls['kind'],
  sources: readonly S[],
  pull: (source: S) => Promise<R>,
  traced: boolean,
): Promise<R[]> {
  return Promise.all(
    sources.map((source) =>
      traced ? pullSpan(kind, source.id, () => pull(source)) : pull(source),
    ),
  );
}

interface PullOutcome {
  readonly kind: string;
  readonly errorType?: string;
}

/** One source's pull in a round's trace: which source, and the error type when it failed. */
function pullSpan<T extends PullOutcome>(
  kind: SourcePulls['kind'],
  id: string,
  pull: () => Promise<T>,
): Promise<T> {
  return inSpan(
    `pull ${kind} ${id}`,
    { attributes: () => ({ 'mcp_gateway.source.kind': kind, 'mcp_gateway.source.id': id }) },
    async () => {
      const result = await pull();
      if (result.kind === 'failed' && result.errorType !== undefined) failSpan(result.errorType);
      return result;
    },
  );
}
