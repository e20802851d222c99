import { holderStopped } from './holder-watch';

/** Counts served one per look, then the last one again. */
function counts(...values: (number | undefined)[]): () => Promise<number | undefined> {
  let i = 0;
  return () => Promise.resolve(values[Math.min(i++, values.length - 1)]);
}

describe('holderStopped', () => {
  it('a channel without a subscriber for the whole grace is a stopped holder', async () => {
    await expect(holderStopped(counts(1, 0), () => true, 5, 1)).resolves.toBe(true);
  });

  it('a subscriber back within the grace (a reconnect) starts the grace again', async () => {
    let looks = 0;
    const subscribers = counts(0, 1, 0, 1, 0, 1, 0, 1);
    // stops being waited on after eight looks, never seeing the grace pass without a subscriber
    const stopped = holderStopped(
      () => {
        looks++;
        return subscribers();
      },
      () => looks < 8,
      50,
      1,
    );
    await expect(stopped).resolves.toBe(false);
  });

  it('Redis not answering concludes nothing', async () => {
    let looks = 0;
    const stopped = holderStopped(
      () => {
        looks++;
        return Promise.resolve(undefined);
      },
      () => looks < 20,
      1,
      1,
    );
    await expect(stopped).resolves.toBe(false);
  });

  it('ends when the resume is no longer waited on', async () => {
    await expect(holderStopped(counts(0), () => false, 1, 1)).resolves.toBe(false);
  });
});
