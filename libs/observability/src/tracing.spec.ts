import { sdkProblemLog } from './tracing';

describe("sdkProblemLog: the SDK's failed exports reach the log without a line per batch", () => {
  it('logs the first at once, then at most one line a minute saying how many were left out', () => {
    let now = 0;
    const lines: string[] = [];
    const log = sdkProblemLog(
      (m) => lines.push(m),
      () => now,
    );
    log('export failed: 404');
    for (let i = 0; i < 30; i++) {
      now += 1_000;
      log('export failed: 404');
    }
    expect(lines).toEqual(['OpenTelemetry SDK: export failed: 404']);
    now += 30_000;
    log('export failed: ECONNREFUSED');
    expect(lines).toEqual([
      'OpenTelemetry SDK: export failed: 404',
      'OpenTelemetry SDK: export failed: ECONNREFUSED (30 more since the last line)',
    ]);
  });

  it('bounds what one line repeats of a message', () => {
    const lines: string[] = [];
    sdkProblemLog((m) => lines.push(m))('x'.repeat(10_000));
    expect(lines[0]!.length).toBeLessThan(400);
  });
});
