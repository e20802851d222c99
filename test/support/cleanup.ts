/** Something a test started and must stop: a gateway, a Tool Service, a Redis. */
export interface Stoppable {
  stop(): Promise<unknown>;
}

/**
 * Registers an afterEach that stops, newest first, everything the test passed to `track`, so
 * a failing assertion never leaves a process or a port behind.
 */
export function stopAfterEach(): <T extends Stoppable>(s: T) => T {
  const started: Stoppable[] = [];
  afterEach(async () => {
    for (const s of started.splice(0).reverse()) await s.stop();
  });
  return (s) => {
    started.push(s);
    return s;
  };
}
