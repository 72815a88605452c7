import { createHash } from 'node:crypto';
import type { MediaBase } from './types.ts';
import { sameBytes } from '../text/bytes.ts';

/** The hex SHA-256 of some bytes: how a media remembers the disk it was staged from. */
export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const keptHashes = new WeakMap<Uint8Array, string>();

/**
 * hashBytes of bytes that never change once made (a media's bytes, what a save wrote), hashed once:
 * a save needs it for the store and for its undo record. Never for a buffer something may still fill.
 */
export function hashKept(bytes: Uint8Array): string {
  let hash = keptHashes.get(bytes);
  if (hash === undefined) { hash = hashBytes(bytes); keptHashes.set(bytes, hash); }
  return hash;
}

/**
 * What disk held when a line of edits began, its hash made when first asked: staging a file and
 * saving a change to it compare bytes, so the hash of a 10 MB file (~20 ms) is paid only by what
 * needs it (a change set, a delete, a move, an undo record).
 */
export class DiskBase implements MediaBase {
  readonly existed = true;
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) { this.bytes = bytes; }
  get hash(): string { return hashKept(this.bytes); }
}

/** Whether `disk` (undefined: no file) is what `base` held: the same bytes, or no file for a new one. */
export function holdsBase(disk: Uint8Array | undefined, base: Pick<MediaBase, 'existed' | 'bytes'>): boolean {
  return disk === undefined ? !base.existed : base.existed && sameBytes(disk, base.bytes);
}
