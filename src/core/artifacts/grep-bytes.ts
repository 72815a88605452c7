import { isUtf8 } from 'node:buffer';
import { cancelled } from '../errors.ts';
import { MAX_LINE_CHARS, type SpoolReader } from './reader.ts';

/*
 * artifact_grep's lines written as bytes, for a result past its first page (issue 26: 50 lines of
 * context around matches every 101 lines is every line of the file). A plain line is copied from the
 * spool behind its rendered prefix (`12:\t` or `12-\t`) with no string made of it; a line the string
 * path would change (cut, not UTF-8, line 1 after a BOM) is rendered by that path instead, so the
 * bytes are exactly what `grepLineRenderer` writes.
 */

/** Where rendered lines go: the result artifact, once the result is past its first page. */
export interface GrepByteSink {
  /** True once lines should come as bytes. */
  readonly ready: boolean;
  /** `bytes` holds `lines` lines of the result (`--` lines not counted). */
  write(bytes: Buffer, lines: number): Promise<void>;
}

/** One line rendered by the string path (`12:\ttext`, no separator) and the offset just past it. */
export type RenderLine = (n: number, start: number) => Promise<{ readonly text: string; readonly end: number }>;

// A line of at most this many bytes has at most MAX_LINE_CHARS characters: it is never cut.
const PLAIN_LINE_BYTES = MAX_LINE_CHARS;
const READ_BYTES = 256 * 1024;
/** Rendered bytes gathered before one write: the most a grep holds past its first page. */
export const GREP_WRITE_BYTES = 256 * 1024;
// The longest prefix: "--\n", 16 digits, ":" and a tab; and the line feed after the line.
const PREFIX_BYTES = 24;

export class GrepBytesWriter {
  private readonly reader: SpoolReader;
  private readonly matches: ReadonlyMap<number, number>;
  private readonly sink: GrepByteSink;
  private readonly renderLine: RenderLine;
  private readonly input = Buffer.allocUnsafe(READ_BYTES);
  private readonly out = Buffer.allocUnsafe(GREP_WRITE_BYTES);
  private used = 0;
  private usedLines = 0;
  /** The ASCII digits of `previous` once a prefix was written (`digitCount` of them). */
  private readonly digits = new Uint8Array(20);
  private digitCount = 0;
  /** The number of the line written last: a line after a gap gets a `--` line before it. */
  private previous: number | undefined;

  constructor(reader: SpoolReader, matches: ReadonlyMap<number, number>, sink: GrepByteSink, renderLine: RenderLine, previous: number | undefined) {
    this.reader = reader;
    this.matches = matches;
    this.sink = sink;
    this.renderLine = renderLine;
    this.previous = previous;
  }

  /** Writes lines `from` to `to` (clamped to the file); line `from` starts at byte `start`. */
  async lines(from: number, to: number, start: number, signal: AbortSignal): Promise<void> {
    const { index } = this.reader;
    const last = Math.min(to, index.lines);
    let n = from;
    let position = start;
    while (n <= last) {
      if (signal.aborted) throw cancelled();
      const got = await this.reader.readInto(this.input, position);
      if (got === 0) return;
      const data = this.input.subarray(0, got);
      const atEnd = position + got >= index.bytes;
      const lastNewline = data.lastIndexOf(10);
      // One check for the whole read: line feeds never fall inside a UTF-8 sequence.
      const allUtf8 = isUtf8(atEnd ? data : data.subarray(0, lastNewline + 1));
      let pos = 0;
      for (; n <= last; n++) {
        const newline = data.indexOf(10, pos);
        const end = newline !== -1 ? newline : atEnd ? data.length : -1;
        if (end === -1 && data.length - pos <= PLAIN_LINE_BYTES) break; // goes on past this read: read again from its start
        const stop = end > pos && data[end - 1] === 13 ? end - 1 : end;
        if (end === -1 || stop - pos > PLAIN_LINE_BYTES || n === 1 || (!allUtf8 && !isUtf8(data.subarray(pos, stop)))) {
          const line = await this.renderLine(n, position + pos);
          await this.text(n, line.text);
          pos = line.end + 1 - position;
          if (pos >= data.length) { n++; break; }
          continue;
        }
        if (this.used + PREFIX_BYTES + (stop - pos) > GREP_WRITE_BYTES) await this.flush();
        this.prefix(n);
        this.used += data.copy(this.out, this.used, pos, stop);
        this.out[this.used++] = 10;
        pos = end + 1;
      }
      position += pos;
    }
  }

  /** Writes what is rendered and not yet written. */
  async flush(): Promise<void> {
    if (this.used === 0) return;
    const lines = this.usedLines;
    const used = this.used;
    this.used = 0;
    this.usedLines = 0;
    // Written before it is filled again: no copy.
    await this.sink.write(this.out.subarray(0, used), lines);
  }

  private prefix(n: number): void {
    const out = this.out;
    if (this.previous !== undefined && n > this.previous + 1) {
      out[this.used++] = 45;
      out[this.used++] = 45;
      out[this.used++] = 10;
    }
    this.usedLines++;
    this.setDigits(n);
    for (let i = 0; i < this.digitCount; i++) out[this.used++] = this.digits[i]!;
    this.previous = n;
    out[this.used++] = this.matches.has(n) ? 58 : 45;
    out[this.used++] = 9;
  }

  /** Sets `digits` to `n` in ASCII: the next line's number is the last one's plus one, counted up in place. */
  private setDigits(n: number): void {
    const digits = this.digits;
    if (n === this.previous! + 1 && this.digitCount > 0) {
      let i = this.digitCount - 1;
      while (i >= 0 && digits[i] === 57) digits[i--] = 48;
      if (i >= 0) {
        digits[i]!++;
        return;
      }
      digits.copyWithin(1, 0, this.digitCount);
      digits[0] = 49;
      this.digitCount++;
      return;
    }
    const text = String(n);
    this.digitCount = text.length;
    for (let i = 0; i < text.length; i++) digits[i] = text.charCodeAt(i);
  }

  private async text(n: number, rendered: string): Promise<void> {
    const separator = this.previous !== undefined && n > this.previous + 1;
    this.previous = n;
    this.digitCount = 0;
    const bytes = Buffer.from(`${separator ? '--\n' : ''}${rendered}\n`, 'utf8');
    if (this.used + bytes.length > GREP_WRITE_BYTES) await this.flush();
    if (bytes.length > GREP_WRITE_BYTES) {
      await this.sink.write(bytes, 1);
      return;
    }
    this.used += bytes.copy(this.out, this.used);
    this.usedLines++;
  }
}
