/**
 * A walk that calls the file system synchronously over tens of thousands of entries (a round trip
 * through Node's thread pool for each took seconds where the calls themselves take milliseconds)
 * gives the event loop its turn every `every` entries: it awaits the returned function once per entry.
 */
export function turnsEvery(every: number): () => Promise<void> {
  let count = 0;
  return async () => {
    if (++count % every === 0) await new Promise((resolve) => setImmediate(resolve));
  };
}

/**
 * `fn` over every item, at most `limit` at once, the results in the items' order. For independent
 * file-system calls by the thousand: one after another, each waits out a thread-pool round trip.
 */
export async function inParallel<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      results[at] = await fn(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
