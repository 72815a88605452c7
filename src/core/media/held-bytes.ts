import type { StagedMedia } from './types.ts';

/**
 * The byte arrays media hold in memory: each media's bytes and the disk snapshot it refers to, an
 * array shared by several counted once. Counted by reference, so eviction updates the total as it
 * drops media instead of summing again.
 */
export class HeldBytes {
  private readonly refs = new Map<Uint8Array, number>();
  private sum = 0;

  constructor(media: Iterable<StagedMedia>) {
    for (const m of media) this.count(m, 1);
  }

  /** Bytes held, each array once. */
  get total(): number {
    return this.sum;
  }

  /** Whether this array is held already (holding it again costs nothing). */
  has(bytes: Uint8Array): boolean {
    return this.refs.has(bytes);
  }

  /** `media` is no longer held. */
  release(media: StagedMedia): void {
    this.count(media, -1);
  }

  private count(media: StagedMedia, delta: 1 | -1): void {
    for (const bytes of [media.bytes, media.base.bytes]) {
      const n = (this.refs.get(bytes) ?? 0) + delta;
      if (n === 0) this.refs.delete(bytes);
      else this.refs.set(bytes, n);
      if (n === 0) this.sum -= bytes.byteLength;
      else if (n === 1 && delta === 1) this.sum += bytes.byteLength;
    }
  }
}
