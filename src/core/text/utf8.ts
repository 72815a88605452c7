import { isUtf8 } from 'node:buffer';

function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 1;
}

const isContinuation = (b: number): boolean => (b & 0xc0) === 0x80;

/** Index of the first byte of an invalid UTF-8 sequence in `bytes` (which isUtf8 rejected). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const n = sequenceLength(b);
    if (n === 1 || i + n > bytes.length) return i;
    const b1 = bytes[i + 1]!;
    // Overlong forms, UTF-16 surrogates and code points above U+10FFFF are invalid second bytes.
    if (b === 0xe0 && b1 < 0xa0) return i;
    if (b === 0xed && b1 > 0x9f) return i;
    if (b === 0xf0 && b1 < 0x90) return i;
    if (b === 0xf4 && b1 > 0x8f) return i;
    for (let k = 1; k < n; k++) if (!isContinuation(bytes[i + k]!)) return i;
    i += n;
  }
  return bytes.length;
}

/**
 * Validates UTF-8 across chunk boundaries (a character may be split between two reads) with the
 * SIMD `isUtf8`, and remembers where the first invalid byte is.
 */
export class Utf8Validator {
  private carry: Uint8Array = new Uint8Array(0);
  private carryOffset = 0;
  private invalidAt: number | undefined;

  /** `bytes` start at file offset `offset`. The bytes are not retained (only a split character's head is copied). */
  feed(bytes: Uint8Array, offset: number): void {
    if (this.invalidAt !== undefined || bytes.length === 0) return;
    let start = 0;
    if (this.carry.length > 0) {
      const need = sequenceLength(this.carry[0]!) - this.carry.length;
      const take = Math.min(need, bytes.length);
      const head = Buffer.concat([this.carry, bytes.subarray(0, take)]);
      if (take < need) {
        if (!bytes.subarray(0, take).every(isContinuation)) {
          this.invalidAt = this.carryOffset;
          return;
        }
        this.carry = head;
        return;
      }
      if (!isUtf8(head)) {
        this.invalidAt = this.carryOffset;
        return;
      }
      this.carry = new Uint8Array(0);
      start = take;
    }
    const end = incompleteTail(bytes, start);
    const body = bytes.subarray(start, end);
    if (!isUtf8(body)) {
      this.invalidAt = offset + start + firstInvalidUtf8(body);
      return;
    }
    if (end < bytes.length) {
      this.carry = bytes.slice(end);
      this.carryOffset = offset + end;
    }
  }

  /** The file offset of the first invalid byte, or undefined when the whole input was valid UTF-8. */
  finish(): number | undefined {
    if (this.invalidAt === undefined && this.carry.length > 0) this.invalidAt = this.carryOffset;
    return this.invalidAt;
  }
}

/** Where a character cut off by the end of `bytes` starts (or `bytes.length` when none is). */
function incompleteTail(bytes: Uint8Array, start: number): number {
  for (let j = 1; j <= 3 && bytes.length - j >= start; j++) {
    const b = bytes[bytes.length - j]!;
    if (isContinuation(b)) continue;
    return sequenceLength(b) > j ? bytes.length - j : bytes.length;
  }
  return bytes.length;
}
