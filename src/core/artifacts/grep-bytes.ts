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
// A run's first read: most runs are a matching line and its few context lines, and a read of 256 KiB
// for each of thousands of them was most of a grep's time. Each further read of the run doubles.
const FIRST_READ_BYTES = 16 * 1024;
/** Rendered bytes gathered before one write (two such buffers: one is written while the other fills). */
export const GREP_WRITE_BYTES = 256 * 1024;
// The longest prefix ("--\n", 16 digits, ":" and a tab), a plain line with its CR, and its line feed.
const LINE_ROOM = 24 + PLAIN_LINE_BYTES + 2;

export class GrepBytesWriter {
  private readonly reader: SpoolReader;
  /** The matching lines' numbers, ascending; `nextMatch` is the first not yet passed (lines come in order). */
  private readonly matches: readonly number[];
  private nextMatch = 0;
  private readonly sink: GrepByteSink;
  private readonly renderLine: RenderLine;
  private readonly input = Buffer.allocUnsafe(READ_BYTES);
  // Two buffers: one is rendered into while the other is written.
  private readonly buffers = [Buffer.allocUnsafe(GREP_WRITE_BYTES), Buffer.allocUnsafe(GREP_WRITE_BYTES)] as const;
  private out: Buffer = this.buffers[0];
  /** The write in flight, if any (its failure is reported by the next `flush` or `end`). */
  private writing: Promise<void> | undefined;
  private used = 0;
  /** Where `lines` is: line `n` starts at `pos` in the current read. */
  private readonly at = { pos: 0, n: 0 };
  private usedLines = 0;
  /** The ASCII digits of `previous` once a prefix was written (`digitCount` of them). */
  private readonly digits = new Uint8Array(20);
  private digitCount = 0;
  /** The number of the line written last: a line after a gap gets a `--` line before it. */
  private previous: number | undefined;

  constructor(
    reader: SpoolReader,
    matches: readonly number[],
    sink: GrepByteSink,
    renderLine: RenderLine,
    previous: number | undefined,
  ) {
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
    const at = this.at;
    at.n = from;
    let position = start;
    let size = FIRST_READ_BYTES;
    // The run's first lines may be in the reader's window already, read when their start was found.
    let got = this.reader.fromWindow(this.input.subarray(0, size), position);
    while (at.n <= last) {
      if (signal.aborted) throw cancelled();
      // Less than a plain line's worth, short of the end: read from the file.
      if (got <= PLAIN_LINE_BYTES + 1 && position + got < index.bytes)
        got = await this.reader.readInto(this.input.subarray(0, size), position);
      if (got === 0) return;
      const data = this.input.subarray(0, got);
      const atEnd = position + got >= index.bytes;
      // One check for the whole read: line feeds never fall inside a UTF-8 sequence.
      const allUtf8 = isUtf8(atEnd ? data : data.subarray(0, data.lastIndexOf(10) + 1));
      at.pos = 0;
      while (at.n <= last && at.pos < data.length) {
        this.copyPlain(data, last, atEnd, allUtf8);
        if (at.n > last || at.pos >= data.length) break;
        if (this.used + LINE_ROOM > GREP_WRITE_BYTES) {
          await this.flush();
          continue;
        }
        // Line n is not plain, or goes on past this read: read again from its start unless it is long.
        if (!atEnd && data.indexOf(10, at.pos) === -1 && data.length - at.pos <= PLAIN_LINE_BYTES + 1) break;
        const line = await this.renderLine(at.n, position + at.pos);
        await this.text(at.n, line.text);
        at.pos = line.end + 1 - position;
        at.n++;
      }
      position += at.pos;
      got = 0;
      size = Math.min(size * 2, READ_BYTES);
    }
  }

  /**
   * Copies plain lines from `data` (line `at.n` starts at `at.pos`) behind their prefixes, until a
   * line is not plain, the buffer may not hold the next one, or the read ends; `at` says where.
   * One loop over the bytes: a call per line to find its end and another to copy it cost more.
   */
  private copyPlain(data: Buffer, last: number, atEnd: boolean, allUtf8: boolean): void {
    const { out, at } = this;
    const length = data.length;
    let { pos, n } = at;
    while (n <= last && n !== 1 && this.used + LINE_ROOM <= GREP_WRITE_BYTES) {
      const mark = this.used;
      const previous = this.previous;
      this.prefix(n);
      const textStart = this.used;
      let used = textStart;
      let i = pos;
      const limit = Math.min(length, pos + PLAIN_LINE_BYTES + 1);
      while (i < limit) {
        const b = data[i]!;
        if (b === 10) break;
        out[used++] = b;
        i++;
      }
      const ended = i < length ? data[i] === 10 : atEnd;
      if (ended && used > textStart && out[used - 1] === 13) used--;
      if (!ended || used - textStart > PLAIN_LINE_BYTES || (!allUtf8 && !isUtf8(out.subarray(textStart, used)))) {
        this.used = mark;
        this.usedLines--;
        this.previous = previous;
        this.digitCount = 0;
        break;
      }
      out[used++] = 10;
      this.used = used;
      pos = i + 1;
      n++;
    }
    at.pos = pos;
    at.n = n;
  }

  /** Starts writing what is rendered, once the write before it is done; rendering goes on into the other buffer. */
  private async flush(): Promise<void> {
    if (this.used === 0) return;
    await this.writing;
    const writing = this.sink.write(this.out.subarray(0, this.used), this.usedLines);
    // Awaited by the next flush or by `end`; until then a failure must not count as unhandled.
    writing.catch(() => undefined);
    this.writing = writing;
    this.out = this.out === this.buffers[0] ? this.buffers[1] : this.buffers[0];
    this.used = 0;
    this.usedLines = 0;
  }

  /** Writes what is rendered and waits until every write is done. */
  async end(): Promise<void> {
    await this.flush();
    await this.writing;
  }

  /** Waits for the write in flight, whatever its outcome (before the artifact is ended another way). */
  async settle(): Promise<void> {
    await this.writing?.catch(() => undefined);
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
    const matches = this.matches;
    while (this.nextMatch < matches.length && matches[this.nextMatch]! < n) this.nextMatch++;
    out[this.used++] = matches[this.nextMatch] === n ? 58 : 45;
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
      await this.end();
      await this.sink.write(bytes, 1);
      return;
    }
    this.used += bytes.copy(this.out, this.used);
    this.usedLines++;
  }
}
