const Sequencer = require('@jest/test-sequencer').default;

/**
 * The e2e files that take longest (seconds in a fresh-clone CI run on 2 cores), started first:
 * a fresh clone has no timing cache, so Jest orders by file size, and a long suite that starts
 * last holds every other worker idle at the end of the run (two 33 s suites did, for 22 s).
 * Every other file keeps Jest's own order after these; a local run's cache still applies to it.
 */
const SLOWEST = [
  'test/bundles/discovery.e2e-spec.ts',
  'test/resilience/failure-matrix.e2e-spec.ts',
  'test/resilience/redis-outages.e2e-spec.ts',
  'test/auth/stream-auth.e2e-spec.ts',
  'test/upstreams/upstream-failures.e2e-spec.ts',
  'test/auth2/limits-and-audit.e2e-spec.ts',
  'test/admin/admin-redis.e2e-spec.ts',
  'test/resilience/redis-failover.e2e-spec.ts',
  'test/ops/npm-start.e2e-spec.ts',
  'test/console/console-admin.e2e-spec.ts',
  'test/console/console-views.e2e-spec.ts',
  'test/bundles/bundle-tasks.e2e-spec.ts',
  'test/resilience/mcp-slow-client.e2e-spec.ts',
  'test/ops/tracing.e2e-spec.ts',
  'test/admin/registration-replicas.e2e-spec.ts',
  'test/admin/admin-upstreams.e2e-spec.ts',
  'test/admin/registration-identity.e2e-spec.ts',
  'test/admin/registration-identity-replicas.e2e-spec.ts',
  'test/resilience/cancellation.e2e-spec.ts',
  'test/upstreams/huge-lists.e2e-spec.ts',
  'test/bundles/tools-call.e2e-spec.ts',
  'test/bundles/repeated-headers.e2e-spec.ts',
];

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = SLOWEST.findIndex((suffix) => test.path.endsWith(suffix));
      return i === -1 ? SLOWEST.length : i;
    };
    // Array.prototype.sort is stable: within a rank, Jest's order stays
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = SlowFirstSequencer;
