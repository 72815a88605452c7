import { promises as fsp, readSync } from 'node:fs';
import { INDEX_BLOCK_BYTES, blockOfNewline, type LineIndex } from './line-index.ts';
import { SyncSlice } from '../sync-slice.ts';

/** Lines longer than this many characters are cut (with a marker when rendered). */
export const MAX_LINE_CHARS = 2000;
// A line of more than 4 bytes per character allowed is certainly longer than MAX_LINE_CHARS.
const LINE_SCAN_BYTES = MAX_LINE_CHARS * 4;
// Enough for one cut line; small, because grep reads many short runs of lines at random places.
const WINDOW_BYTES = 16 * 1024;
// How far back from a match to look for its line's start before asking the index.
const BACKSCAN_BYTES = 4 * 1024;
// The largest read of `lineBatches`: it starts at one window and doubles while a run of lines goes on.
const BATCH_MAX_BYTES = 256 * 1024;

/** One line as read from a spool file. */
export interface SpoolLine {
  /** 1-based line number. */
  readonly n: number;
  /** Offset of the line's first byte in the spool. */
  readonly start: number;
  /** Offset just past the line's last byte (before its "\n", or the end of the file). */
  readonly end: number;
  /** At most MAX_LINE_CHARS characters; no line terminator, no BOM. */
  readonly text: string;
  /** True when `text` is only the line's beginning. */
  readonly cut: boolean;
}

/** Cuts `text` to `max` UTF-16 units without splitting a surrogate pair. */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * Random access to a spool file by line, through its LineIndex: reaching any line reads at most
 * one index block, and a long line is skipped without reading it.
 */
export class SpoolReader {
  private readonly handle: fsp.FileHandle;
  readonly index: LineIndex;
  private readonly bom: boolean;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly window = Buffer.allocUnsafe(WINDOW_BYTES);
  private windowStart = 0;
  private windowLength = 0;
  /** The current slice of synchronous reads (see `readSmall`). */
  private readonly slice = new SyncSlice();
  /** The buffer `lineBatches` reads into, once it is used, and what it holds. */
  private batch: Buffer | undefined;
  private batchStart = 0;
  private batchLength = 0;

  private constructor(handle: fsp.FileHandle, index: LineIndex, bom: boolean) {
    this.handle = handle;
    this.index = index;
    this.bom = bom;
  }

  /** `bom`: the spool starts with a UTF-8 byte order mark, which line 1's text leaves out. */
  static async open(path: string, index: LineIndex, bom: boolean): Promise<SpoolReader> {
    return new SpoolReader(await fsp.open(path, 'r'), index, bom);
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /** Runs `use` with a reader open on the spool file, and closes it after. */
  static async with<T>(
    path: string,
    index: LineIndex,
    bom: boolean,
    use: (reader: SpoolReader) => Promise<T>,
  ): Promise<T> {
    const reader = await SpoolReader.open(path, index, bom);
    try {
      return await use(reader);
    } finally {
      await reader.close();
    }
  }

  /** Reads `length` bytes at `position` (fewer at the end of the file). */
  async bytes(position: number, length: number): Promise<Buffer> {
    const out = Buffer.alloc(Math.max(0, Math.min(length, this.index.bytes - position)));
    if (out.length > 0) await this.handle.read(out, 0, out.length, position);
    return out;
  }

  /** Reads into `target` from `position` (at most its length; fewer at the end of the file); returns how many bytes were read. */
  async readInto(target: Buffer, position: number): Promise<number> {
    const length = Math.min(target.length, this.index.bytes - position);
    if (length <= 0) return 0;
    return (await this.handle.read(target, 0, length, position)).bytesRead;
  }

  /**
   * Copies into `target` what the read window holds from `position` on (at most its length), and
   * returns how many bytes: 0 when the window does not hold `position`. A grep reads a matching line
   * just after `lineStartNear` read around it.
   */
  fromWindow(target: Buffer, position: number): number {
    if (position < this.windowStart || position >= this.windowStart + this.windowLength) return 0;
    const from = position - this.windowStart;
    return this.window.copy(target, 0, from, Math.min(this.windowLength, from + target.length));
  }

  /** Offset of the n-th line feed, 1 <= n <= index.newlines. */
  async newlineOffset(n: number): Promise<number> {
    const block = blockOfNewline(this.index, n);
    const start = block * INDEX_BLOCK_BYTES;
    const data = await this.bytes(start, INDEX_BLOCK_BYTES);
    let at = -1;
    for (let left = n - this.index.blockCounts[block]!; left > 0; left--) at = data.indexOf(10, at + 1);
    return start + at;
  }

  /** Offset of the first byte of `line` (1-based, at most index.lines). */
  async lineStart(line: number): Promise<number> {
    return line === 1 ? 0 : (await this.newlineOffset(line - 1)) + 1;
  }

  private async view(position: number, want: number): Promise<Buffer> {
    const length = Math.min(want, this.index.bytes - position);
    if (position < this.windowStart || position + length > this.windowStart + this.windowLength) {
      this.windowLength = await this.readSmall(this.window, WINDOW_BYTES, position);
      this.windowStart = position;
    }
    const from = position - this.windowStart;
    return this.window.subarray(from, from + Math.min(length, this.windowLength - from));
  }

  /**
   * Reads at most `length` (a window's worth) bytes at `position` into `buffer`, synchronously in
   * slices (see SyncSlice): a grep reads a window for each of thousands of matches.
   */
  private async readSmall(buffer: Buffer, length: number, position: number): Promise<number> {
    if (this.slice.over) await this.slice.next();
    return readSync(this.handle.fd, buffer, 0, length, position);
  }

  /** Decodes line bytes, leaving out a CR before the line feed and line 1's BOM. */
  private decode(n: number, bytes: Buffer, whole: boolean): string {
    let data = bytes;
    if (n === 1 && this.bom && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) data = data.subarray(3);
    if (whole && data[data.length - 1] === 13) data = data.subarray(0, data.length - 1);
    return this.decoder.decode(data);
  }

  /** Line `n`, which starts at `start`. */
  async line(n: number, start: number): Promise<SpoolLine> {
    const data = await this.view(start, LINE_SCAN_BYTES + 1);
    const newline = data.indexOf(10);
    if (newline !== -1 || start + data.length === this.index.bytes) {
      const bytes = newline === -1 ? data : data.subarray(0, newline);
      const full = this.decode(n, bytes, true);
      const text = cutChars(full, MAX_LINE_CHARS);
      return { n, start, end: start + bytes.length, text, cut: text.length < full.length };
    }
    // A long line: show its beginning, and find its end through the index instead of reading it.
    const end = n <= this.index.newlines ? await this.newlineOffset(n) : this.index.bytes;
    const text = cutChars(this.decode(n, data.subarray(0, LINE_SCAN_BYTES), false), MAX_LINE_CHARS);
    return { n, start, end, text, cut: true };
  }

  /**
   * Where the line holding byte `offset` starts, when line `n` is known to hold it: usually a short
   * look back from the offset, else the index.
   */
  async lineStartNear(n: number, offset: number): Promise<number> {
    const from = Math.max(0, offset - BACKSCAN_BYTES);
    // Read through the window, so that the line itself is then served from the same read.
    const data = (await this.view(from, offset - from + LINE_SCAN_BYTES + 1)).subarray(0, offset - from);
    const newline = data.lastIndexOf(10);
    if (newline !== -1) return from + newline + 1;
    return from === 0 ? 0 : this.lineStart(n);
  }

  /**
   * Lines `from` to `to` (inclusive, clamped to the file), in order. `startHint` is line `from`'s
   * first byte, when the caller knows it.
   */
  async *lines(from: number, to: number, startHint?: number): AsyncIterable<SpoolLine> {
    const last = Math.min(to, this.index.lines);
    if (from > last) return;
    let start = startHint ?? (await this.lineStart(from));
    for (let n = from; n <= last; n++) {
      const line = await this.line(n, start);
      yield line;
      start = line.end + 1;
    }
  }

  /**
   * Lines `from` to `to` as `lines` gives them, in batches: each batch is decoded from one read (of
   * a window at first, doubling up to 256 KiB while the run goes on), so a long run costs few reads
   * and no await per line. A line longer than the scan is read alone, as `line` reads it.
   */
  async *lineBatches(from: number, to: number, startHint?: number): AsyncGenerator<SpoolLine[], void, undefined> {
    const last = Math.min(to, this.index.lines);
    if (from > last) return;
    let start = startHint ?? (await this.lineStart(from));
    let n = from;
    let size = WINDOW_BYTES;
    // The last read serves again while it holds `start` (grep's groups are often close together).
    let reuse = true;
    while (n <= last) {
      let base = this.batchStart;
      if (!reuse || this.batch === undefined || start < base || start >= base + this.batchLength) {
        this.batch ??= Buffer.allocUnsafe(BATCH_MAX_BYTES);
        const length = Math.min(size, this.index.bytes - start);
        // A run's first read is a window's worth: read as windows are (see `readSmall`).
        const bytesRead =
          length <= WINDOW_BYTES
            ? await this.readSmall(this.batch, length, start)
            : (await this.handle.read(this.batch, 0, length, start)).bytesRead;
        // The index promised these bytes; a spool cut short (never written so) ends the lines.
        if (bytesRead === 0) return;
        base = this.batchStart = start;
        this.batchLength = bytesRead;
      }
      const data = this.batch.subarray(0, this.batchLength);
      const atEnd = base + data.length >= this.index.bytes;
      const lines: SpoolLine[] = [];
      let pos = start - base;
      let long = false;
      for (; n <= last; n++) {
        const newline = data.indexOf(10, pos);
        const end =
          newline !== -1 && newline - pos <= LINE_SCAN_BYTES
            ? newline
            : atEnd && data.length - pos <= LINE_SCAN_BYTES + 1
              ? data.length
              : -1;
        if (end === -1) {
          // Past the scan with no line feed: a long line. Else the line goes on past this read.
          long = data.length - pos > LINE_SCAN_BYTES;
          break;
        }
        // Buffer's UTF-8 decoding replaces bad bytes as TextDecoder does, with no view made per line.
        const full =
          n === 1
            ? this.decode(n, data.subarray(pos, end), true)
            : data.toString('utf8', pos, end > pos && data[end - 1] === 13 ? end - 1 : end);
        const text = cutChars(full, MAX_LINE_CHARS);
        lines.push({ n, start: base + pos, end: base + end, text, cut: text.length < full.length });
        pos = end + 1;
      }
      start = base + pos;
      // A read that gave no line is too short: read again from here, a larger one.
      reuse = lines.length > 0 || long;
      if (lines.length > 0) yield lines;
      if (long) {
        const line = await this.line(n, start);
        yield [line];
        start = line.end + 1;
        n++;
      }
      size = Math.min(size * 2, BATCH_MAX_BYTES);
    }
  }

  /**
   * Up to MAX_LINE_CHARS characters of the line `[lineStart, lineEnd)` from a little before byte
   * `offset`, for a match that lies past the cut of a long line.
   */
  async around(lineStart: number, lineEnd: number, offset: number): Promise<string> {
    const from = Math.max(lineStart, offset - 200);
    const data = await this.bytes(from, Math.min(LINE_SCAN_BYTES, lineEnd - from));
    // Start on a character boundary.
    let skip = 0;
    while (skip < 3 && skip < data.length && (data[skip]! & 0xc0) === 0x80) skip++;
    return cutChars(this.decoder.decode(data.subarray(skip)), MAX_LINE_CHARS);
  }
}
