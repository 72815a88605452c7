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

/** Byte-for-byte equality (a memcmp): cheaper than comparing hashes of bytes at hand. */
export function sameBytes(a: Uint8Array, b: Uint8Array | undefined): boolean {
  return b !== undefined && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
