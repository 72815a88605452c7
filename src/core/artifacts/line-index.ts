import { eolOf, type Eol } from '../text/eol.ts';
import { SCRATCH_BYTES, type NewlineCounter } from './newlines.ts';

/**
 * The index keeps one number per block: how many line feeds come before the block. Any line is
 * then reached by one binary search and a scan of at most one block, and a 1 GiB file costs
 * 32,768 numbers (256 KiB), whatever its line count.
 */
export const INDEX_BLOCK_BYTES = 32 * 1024;

/** A finished line index over a spool file's bytes. */
export interface LineIndex {
  /** Bytes in the spool file. */
  readonly bytes: number;
  /** Line feeds in the file. */
  readonly newlines: number;
  /** Line feeds preceded by a carriage return. */
  readonly crlf: number;
  /** `blockCounts[k]` = line feeds in bytes `[0, k * INDEX_BLOCK_BYTES)`. */
  readonly blockCounts: Float64Array;
  /** Lines as an editor counts them: a final line without a line feed counts; an empty file has 0. */
  readonly lines: number;
  readonly eol: Eol;
}

/** Builds a LineIndex from bytes in file order, fed through a NewlineCounter's scratch area. */
export class LineIndexBuilder {
  private readonly counter: NewlineCounter;
  private readonly counts: number[] = [0];
  private position = 0;
  private newlines = 0;
  private nextBoundary = INDEX_BLOCK_BYTES;
  private lastByte = -1;

  constructor(counter: NewlineCounter) {
    this.counter = counter;
  }

  get bytes(): number {
    return this.position;
  }
  get scratch(): Uint8Array {
    return this.counter.scratch;
  }

  /** Indexes `scratch[start, start + length)`, which the caller has filled (e.g. by a file read). */
  countScratch(start: number, length: number): void {
    let offset = start;
    let left = length;
    while (left > 0) {
      const take = Math.min(left, this.nextBoundary - this.position);
      this.newlines += this.counter.count(offset, take);
      this.position += take;
      offset += take;
      left -= take;
      if (this.position === this.nextBoundary) {
        this.counts.push(this.newlines);
        this.nextBoundary += INDEX_BLOCK_BYTES;
      }
    }
    if (length > 0) this.lastByte = this.counter.scratch[start + length - 1]!;
  }

  /** Indexes bytes held elsewhere (copied through the scratch area). */
  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i += SCRATCH_BYTES) {
      const piece = bytes.subarray(i, Math.min(bytes.length, i + SCRATCH_BYTES));
      this.counter.scratch.set(piece, 0);
      this.countScratch(0, piece.length);
    }
  }

  finish(): LineIndex {
    const bytes = this.position;
    const newlines = this.newlines;
    const crlf = this.counter.crlf;
    const lines = bytes === 0 ? 0 : newlines + (this.lastByte === 10 ? 0 : 1);
    return { bytes, newlines, crlf, blockCounts: Float64Array.from(this.counts), lines, eol: eolOf(newlines, crlf) };
  }
}

/** The block holding the n-th line feed (1-based): the last block with fewer than n line feeds before it. */
export function blockOfNewline(index: LineIndex, n: number): number {
  const counts = index.blockCounts;
  let lo = 0;
  let hi = counts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (counts[mid]! < n) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
