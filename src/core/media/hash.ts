import { createHash } from 'node:crypto';

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
