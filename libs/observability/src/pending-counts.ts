import type { Counter } from 'prom-client';

/** One series of a counter: its labels and what was added since the last scrape. */
interface Cell<L extends string> {
  readonly labels: Record<L, string>;
  pending: number;
}

/**
 * The per-call increments of a labelled prom-client counter, kept as plain numbers under the
 * label values and handed to the counter (`inc(labels, n)`) when it is read: at each scrape,
 * from the counter's `collect` hook. prom-client builds a label string and looks it up in an
 * object on every `inc`, about 2.5k instructions of a tools/call for each of the two counters a
 * call touches (docs/benchmarks.md, "Where a bundle call's instructions go"); a walk down two
 * or three Maps keyed by strings the catalog and the code already hold costs a tenth of that.
 * The series, their values and the text a scrape gets are the counter's own, as before.
 *
 * Label values must be bounded as they are for the counter itself (ids from config, names
 * from the catalog, fixed outcome sets): a cell lives as long as its series.
 */
export class PendingCounts<L extends string> {
  private readonly cells = new Map<string, unknown>();

  /** The counter the cells are handed to (attach): made after the cells, as its `collect` uses them. */
  private counter?: Counter<L>;

  /** @param labelNames the counter's label names, in the order `add` gets their values */
  constructor(private readonly labelNames: readonly L[]) {}

  /** The counter the cells are handed to; its `collect` must call `flush`. */
  attach(counter: Counter<L>): void {
    this.counter = counter;
  }

  /** Adds 1 to the series of these label values (one per label name, in order). */
  add(values: readonly string[]): void {
    let level = this.cells;
    for (let depth = 0; depth < values.length; depth++) {
      const value = values[depth] ?? '';
      const found = level.get(value);
      if (depth === values.length - 1) {
        const cell = (found as Cell<L> | undefined) ?? this.newCell(level, value, values);
        cell.pending += 1;
        return;
      }
      if (found !== undefined) {
        level = found as Map<string, unknown>;
        continue;
      }
      const next = new Map<string, unknown>();
      level.set(value, next);
      level = next;
    }
  }

  private newCell(level: Map<string, unknown>, key: string, values: readonly string[]): Cell<L> {
    const labels = {} as Record<L, string>;
    this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
    const cell: Cell<L> = { labels, pending: 0 };
    level.set(key, cell);
    return cell;
  }

  /** Hands every pending count to the counter (from its `collect` hook, before it is read). */
  flush(): void {
    const counter = this.counter;
    if (counter === undefined) return;
    const visit = (level: Map<string, unknown>, depth: number): void => {
      for (const entry of level.values()) {
        if (depth < this.labelNames.length - 1) {
          visit(entry as Map<string, unknown>, depth + 1);
          continue;
        }
        const cell = entry as Cell<L>;
        if (cell.pending === 0) continue;
        counter.inc(cell.labels, cell.pending);
        cell.pending = 0;
      }
    };
    visit(this.cells, 0);
  }

  /**
   * Drops the cells under this first label value, with their pending counts: their series are
   * being removed from the counter (a tool that left the catalog, an upstream removed).
   */
  forget(first: string): void {
    this.cells.delete(first);
  }
}
