import { Cluster, Redis } from 'ioredis';
import { onClusterFailover } from './cluster-failover';

/** A cluster client that never connects: its pool events are emitted by the test. */
function idleCluster(masters: () => string[]): Cluster {
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  cluster.nodes = () =>
    masters().map((key) => {
      const [host, port] = key.split(':');
      return new Redis({ host, port: Number(port), lazyConnect: true });
    });
  return cluster;
}

const node = (port: number): Redis => new Redis({ host: '10.0.0.1', port, lazyConnect: true });

describe('onClusterFailover: a lost master replaced, told once per replacement', () => {
  it('waits for a slots refresh whose masters no longer include the node that left', () => {
    let masters = ['10.0.0.1:7000', '10.0.0.1:7001'];
    const cluster = idleCluster(() => masters);
    let told = 0;
    onClusterFailover(cluster, () => told++);
    cluster.emit('refresh');
    expect(told).toBe(0); // nothing left
    cluster.emit('-node', node(7001));
    cluster.emit('refresh');
    expect(told).toBe(0); // still named a master: the failover is not over
    masters = ['10.0.0.1:7000', '10.0.0.1:7004'];
    cluster.emit('refresh');
    expect(told).toBe(1);
    cluster.emit('refresh');
    expect(told).toBe(1); // once per loss
    cluster.emit('-node', node(7000));
    masters = ['10.0.0.1:7005', '10.0.0.1:7004'];
    cluster.emit('refresh');
    expect(told).toBe(2);
  });

  it('calls nothing for a single server (its users watch `ready`)', () => {
    const single = new Redis({ lazyConnect: true });
    let told = 0;
    onClusterFailover(single, () => told++);
    single.emit('-node', node(7000));
    single.emit('refresh');
    expect(told).toBe(0);
  });
});
