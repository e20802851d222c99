import { Counter, Registry } from 'prom-client';
import { PendingCounts } from './pending-counts';

function counterWithCells<L extends string>(labelNames: L[]) {
  const registry = new Registry();
  const cells = new PendingCounts<L>(labelNames);
  const counter = new Counter<L>({
    name: 'calls_total',
    help: 'calls',
    labelNames,
    registers: [registry],
    collect: () => cells.flush(),
  });
  cells.attach(counter);
  const series = async () =>
    (await registry.getMetricsAsJSON())[0]?.values.map((v) => [v.labels, v.value]) ?? [];
  return { registry, cells, counter, series };
}

describe('PendingCounts', () => {
  it('hands what was added to the counter when it is read, once', async () => {
    const { cells, series, registry } = counterWithCells(['tool', 'outcome']);
    cells.add(['a.echo', 'success']);
    cells.add(['a.echo', 'success']);
    cells.add(['a.echo', 'timeout']);
    cells.add(['b.echo', 'success']);
    expect(await series()).toEqual([
      [{ tool: 'a.echo', outcome: 'success' }, 2],
      [{ tool: 'a.echo', outcome: 'timeout' }, 1],
      [{ tool: 'b.echo', outcome: 'success' }, 1],
    ]);
    // a second scrape adds nothing twice; what came after the first is added to it
    cells.add(['a.echo', 'success']);
    expect(await series()).toEqual([
      [{ tool: 'a.echo', outcome: 'success' }, 3],
      [{ tool: 'a.echo', outcome: 'timeout' }, 1],
      [{ tool: 'b.echo', outcome: 'success' }, 1],
    ]);
    expect(await registry.metrics()).toContain('calls_total{tool="a.echo",outcome="success"} 3');
  });

  it('keeps three labels apart, in the order given', async () => {
    const { cells, series } = counterWithCells(['upstream', 'method', 'outcome']);
    cells.add(['up', 'tools/call', 'success']);
    cells.add(['up', 'tools/call', 'error']);
    cells.add(['up', 'resources/read', 'success']);
    cells.add(['other', 'tools/call', 'success']);
    expect(await series()).toEqual([
      [{ upstream: 'up', method: 'tools/call', outcome: 'success' }, 1],
      [{ upstream: 'up', method: 'tools/call', outcome: 'error' }, 1],
      [{ upstream: 'up', method: 'resources/read', outcome: 'success' }, 1],
      [{ upstream: 'other', method: 'tools/call', outcome: 'success' }, 1],
    ]);
  });

  it('forgets the pending counts of a first label value whose series are removed', async () => {
    const { cells, counter, series } = counterWithCells(['tool', 'outcome']);
    cells.add(['gone.echo', 'success']);
    cells.add(['kept.echo', 'success']);
    expect(await series()).toHaveLength(2);
    cells.add(['gone.echo', 'success']);
    cells.forget('gone.echo');
    counter.remove({ tool: 'gone.echo', outcome: 'success' });
    expect(await series()).toEqual([[{ tool: 'kept.echo', outcome: 'success' }, 1]]);
    // counted anew afterwards (a tool that came back)
    cells.add(['gone.echo', 'success']);
    expect(await series()).toEqual([
      [{ tool: 'kept.echo', outcome: 'success' }, 1],
      [{ tool: 'gone.echo', outcome: 'success' }, 1],
    ]);
  });
});
