import { createHash } from 'node:crypto';
import type { ModelPath } from '../paths.ts';
import { pathKey, sourceOf, type MediaBase, type StagedMedia } from './types.ts';
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
  if (hash === undefined) {
    hash = hashBytes(bytes);
    keptHashes.set(bytes, hash);
  }
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
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
  get hash(): string {
    return hashKept(this.bytes);
  }
}

/** Whether `disk` (undefined: no file) is what `base` held: the same bytes, or no file for a new one. */
export function holdsBase(disk: Uint8Array | undefined, base: Pick<MediaBase, 'existed' | 'bytes'>): boolean {
  return disk === undefined ? !base.existed : base.existed && sameBytes(disk, base.bytes);
}

/**
 * `bytes` (read from `source`), or the array a media of that same file already holds as its base
 * when it has the same bytes: a file staged again while earlier lines of edits of it are held shares
 * their copy, so it is held once, and a save or a disk change compares each distinct content once,
 * not once per line of edits. Only within a file: what is known of an array (its encoding, its text)
 * was found for that file's name and settings.
 */
export function heldCopyOf(media: Iterable<StagedMedia>, source: ModelPath, bytes: Uint8Array): Uint8Array {
  const key = pathKey(source);
  const seen = new Set<Uint8Array>();
  for (const m of media) {
    const held = m.base.bytes;
    if (!m.base.existed || seen.has(held) || pathKey(sourceOf(m)) !== key) continue;
    seen.add(held);
    if (sameBytes(held, bytes)) return held;
  }
  return bytes;
}

/** `test` of a base, asked once per distinct base array (many lines of edits of one file may share it). */
export function byBase(test: (base: MediaBase) => boolean): (base: MediaBase) => boolean {
  const known = new Map<Uint8Array, boolean>();
  return (base) => {
    if (!base.existed) return test(base);
    let answer = known.get(base.bytes);
    if (answer === undefined) {
      answer = test(base);
      known.set(base.bytes, answer);
    }
    return answer;
  };
}
