import { promises as fsp } from 'node:fs';
import { LineIndexBuilder, type LineIndex } from './line-index.ts';
import { createNewlineCounter } from './newlines.ts';

/** Bytes gathered before one write: large enough that writes cost little. */
const CHUNK_BYTES = 64 * 1024;

/** What a result spool is told and asked as it writes. */
export interface ResultSpoolHooks {
  /** Hears the index of what is on disk after each write, so readers can page the lines written so far. */
  readonly onWritten?: (index: LineIndex) => void;
  /**
   * Asked before each write of `bytes`: undefined lets it through; an error refuses it (nothing of it
   * is written, and the write fails with that error). After `lastLines` nothing is asked.
   */
  readonly admit?: (bytes: number) => Error | undefined;
}

/**
 * Appends text lines to a spool file and indexes them as they are written, so a tool's result can
 * become an artifact without ever being held whole. Holds at most one chunk of text in memory. One
 * call at a time: await a returned promise before the next.
 */
export class ResultSpool {
  private readonly handle: fsp.FileHandle;
  private readonly builder = new LineIndexBuilder(createNewlineCounter());
  private readonly onWritten: ((index: LineIndex) => void) | undefined;
  private admit: ((bytes: number) => Error | undefined) | undefined;
  // Each line is encoded into the chunk as it comes, so no line's string outlives its call: strings
  // held until a chunk is full would survive young-generation GCs, and V8 grows its heap for them.
  private readonly chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private filled = 0;
  private written = 0;
  private closed = false;

  private constructor(handle: fsp.FileHandle, hooks: ResultSpoolHooks) {
    this.handle = handle;
    this.onWritten = hooks.onWritten;
    this.admit = hooks.admit;
  }

  /** Creates the spool file (it must not exist). Security: only this user may read it. */
  static async create(path: string, hooks: ResultSpoolHooks = {}): Promise<ResultSpool> {
    return new ResultSpool(await fsp.open(path, 'wx', 0o600), hooks);
  }

  /** What comes from now on are the result's last lines (its trailer): written without asking `admit`. */
  lastLines(): void {
    this.admit = undefined;
  }

  /** Bytes waiting in memory for the next write. */
  get pendingBytes(): number {
    return this.filled;
  }

  /** Appends `text` and a line feed. Returns a promise only when a chunk was written. */
  line(text: string): Promise<void> | undefined {
    if (this.fits(text)) {
      this.append(text);
      return undefined;
    }
    return this.flush().then(() =>
      this.fits(text) ? this.append(text) : this.write(Buffer.from(`${text}\n`, 'utf8')),
    );
  }

  /** Appends bytes that are whole lines (they end with a line feed), after what is pending. */
  async bytes(data: Buffer): Promise<void> {
    await this.flush();
    await this.write(data);
  }

  /** Writes what is pending (asking `admit`). */
  flushed(): Promise<void> {
    return this.flush();
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
    if (this.filled === 0) return;
    const bytes = this.chunk.subarray(0, this.filled);
    this.filled = 0;
    await this.write(bytes);
  }

  /** Whether `text` and its line feed surely fit what is left of the chunk (at most 3 bytes a UTF-16 unit). */
  private fits(text: string): boolean {
    return text.length * 3 + 1 <= CHUNK_BYTES - this.filled;
  }

  private append(text: string): void {
    this.filled += this.chunk.write(text, this.filled, 'utf8');
    this.chunk[this.filled++] = 10;
  }

  private async write(bytes: Buffer): Promise<void> {
    const refused = this.admit?.(bytes.length);
    if (refused !== undefined) throw refused;
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
