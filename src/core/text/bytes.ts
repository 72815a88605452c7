/** Byte-for-byte equality (a memcmp, none for the same array): cheaper than comparing hashes of bytes at hand. */
export function sameBytes(a: Uint8Array, b: Uint8Array | undefined): boolean {
  return b !== undefined && (a === b || Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b));
}
