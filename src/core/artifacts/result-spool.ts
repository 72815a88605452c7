import { promises as fsp } from 'node:fs';
import { LineIndexBuilder, type LineIndex } from './line-index.ts';
import { createNewlineCounter } from './newlines.ts';

/** Text gathered before one write (in UTF-16 units: 32 to 96 KiB of UTF-8): large enough that writes cost little. */
const CHUNK_CHARS = 32 * 1024;

/**
 * Appends text lines to a spool file and indexes them as they are written, so a tool's result can
 * become an artifact without ever being held whole. Holds at most one chunk of text in memory. One
 * call at a time: await a returned promise before the next.
 */
export class ResultSpool {
  private readonly handle: fsp.FileHandle;
  private readonly builder = new LineIndexBuilder(createNewlineCounter());
  private readonly onWritten: ((index: LineIndex) => void) | undefined;
  // Lines are joined as a string and encoded once per chunk: far cheaper than encoding each line.
  private pending = '';
  private written = 0;
  private closed = false;

  private constructor(handle: fsp.FileHandle, onWritten: ((index: LineIndex) => void) | undefined) {
    this.handle = handle;
    this.onWritten = onWritten;
  }

  /**
   * Creates the spool file (it must not exist). `onWritten` hears the index of what is on disk after
   * each write, so readers can page the lines written so far. Security: only this user may read it.
   */
  static async create(path: string, onWritten?: (index: LineIndex) => void): Promise<ResultSpool> {
    return new ResultSpool(await fsp.open(path, 'wx', 0o600), onWritten);
  }

  /** Text waiting in memory for the next write, in UTF-16 units. */
  get pendingChars(): number { return this.pending.length; }

  /** Appends `text` and a line feed. Returns a promise only when a chunk was written. */
  line(text: string): Promise<void> | undefined {
    this.pending += text;
    this.pending += '\n';
    return this.pending.length >= CHUNK_CHARS ? this.flush() : undefined;
  }

  /** Appends bytes that are whole lines (they end with a line feed), after what is pending. */
  async bytes(data: Buffer): Promise<void> {
    await this.flush();
    await this.write(data);
  }

  /** Writes what is pending and closes the file; returns the index of everything written. */
  async finish(): Promise<LineIndex> {
    await this.flush();
    await this.close();
    return this.builder.finish();
  }

  /** Closes the file without indexing (the caller removes it). Harmless after `finish`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }

  private async flush(): Promise<void> {
    if (this.pending === '') return;
    const bytes = Buffer.from(this.pending, 'utf8');
    this.pending = '';
    await this.write(bytes);
  }

  private async write(bytes: Buffer): Promise<void> {
    this.builder.feed(bytes);
    for (let done = 0; done < bytes.length;) {
      const { bytesWritten } = await this.handle.write(bytes, done, bytes.length - done, this.written + done);
      done += bytesWritten;
    }
    this.written += bytes.length;
    // A chunk ends at a line feed, so the index counts whole lines only.
    // (`finish` indexes what was fed so far; feeding goes on.)
    this.onWritten?.(this.builder.finish());
  }
}
