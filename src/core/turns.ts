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
