/**
 * A result artifact still being written: readers wait on it for lines not written yet, or for its
 * end; the writer wakes them as it goes.
 */
export class LiveResult {
  private waiters: (() => void)[] = [];
  private ended = false;
  /** Stops the work that writes the result (when the store is disposed). */
  readonly stop: () => void;

  constructor(stop: () => void) {
    this.stop = stop;
  }

  get done(): boolean {
    return this.ended;
  }

  /** Resolves at the next write, at once when the result is complete, or when `signal` aborts (the caller checks it). */
  changed(signal?: AbortSignal): Promise<void> {
    if (this.ended || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      signal?.addEventListener('abort', wake, { once: true });
      this.waiters.push(wake);
    });
  }

  /** Resolves once the result is completely written, or when `signal` aborts (the caller checks it). */
  async finished(signal?: AbortSignal): Promise<void> {
    while (!this.ended && !signal?.aborted) await this.changed(signal);
  }

  /** More was written (`end`: and that was all). */
  wake(end: boolean): void {
    if (end) this.ended = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
