/**
 * ioredis is loaded by the first connection only (openRedis): a gateway without Redis never
 * pays for it in memory (docs/benchmarks.md "Memory").
 */
describe('@app/redis loads ioredis lazily', () => {
  it('importing the lib and asking a client whether it is a Cluster does not load ioredis', () => {
    let loaded = false;
    jest.isolateModules(() => {
      jest.doMock('ioredis', () => {
        loaded = true;
        return {};
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const redis = require('./index') as typeof import('./index');
      const single = { isCluster: false, on: jest.fn() };
      redis.onClusterFailover(single as never, () => undefined);
      expect(single.on).not.toHaveBeenCalled();
    });
    expect(loaded).toBe(false);
  });
});
