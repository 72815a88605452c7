/** Synchronous calls run at most this long before the event loop gets a turn. */
const SYNC_SLICE_MS = 4;

/**
 * Synchronous file calls in slices: on a small VM an asynchronous call costs the calling thread
 * ~35-40 µs (the hand-off to the thread pool), a synchronous one on cached data ~5 µs, so a run of
 * thousands of small calls is made synchronously, with a turn of the event loop every SYNC_SLICE_MS
 * so that the thread (in VS Code, the extension host every extension shares) is never held long.
 */
export class SyncSlice {
  private start = Number.NEGATIVE_INFINITY;

  /** Whether this slice has run its time: `next()` before the next synchronous call. */
  get over(): boolean {
    return performance.now() - this.start > SYNC_SLICE_MS;
  }

  /** A turn of the event loop, then a new slice. */
  async next(): Promise<void> {
    await new Promise<void>((resolve) => {
      setImmediate(resolve);
    });
    this.start = performance.now();
  }
}
