import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** One line a command printed, and on which stream. */
export interface ShellLine {
  readonly stream: 'out' | 'err';
  readonly text: string;
}

/** A line longer than this many characters is passed on in pieces of it (nothing is dropped). */
export const LINE_PIECE_CHARS = 64 * 1024;
/** Lines queued before the command's streams are paused until the reader catches up. */
const QUEUE_HIGH = 2_048;

/** How a line is shown: stderr marked. */
export function renderShellLine(line: ShellLine): string {
  return line.stream === 'err' ? `[stderr] ${line.text}` : line.text;
}

/**
 * A command's stdout and stderr as lines, in the order they arrive, in batches. Security: the
 * streams pause while the reader is behind, so memory stays bounded whatever the command prints.
 */
export class LineFeed {
  private queue: ShellLine[] = [];
  private wake: (() => void) | undefined;
  private open = 0;
  private readonly streams: Readable[] = [];

  constructor(sources: readonly (readonly [Readable, ShellLine['stream']])[]) {
    for (const [stream, kind] of sources) this.attach(stream, kind);
  }

  private attach(stream: Readable, kind: ShellLine['stream']): void {
    this.open++;
    this.streams.push(stream);
    const decoder = new StringDecoder('utf8');
    let carry = '';
    const take = (text: string): void => {
      carry += text;
      let start = 0;
      for (let nl = carry.indexOf('\n'); nl !== -1; nl = carry.indexOf('\n', start)) {
        this.push({ stream: kind, text: carry.slice(start, nl).replace(/\r$/, '') });
        start = nl + 1;
      }
      carry = carry.slice(start);
      while (carry.length >= LINE_PIECE_CHARS) {
        this.push({ stream: kind, text: carry.slice(0, LINE_PIECE_CHARS) });
        carry = carry.slice(LINE_PIECE_CHARS);
      }
    };
    stream.on('data', (chunk: Buffer) => take(decoder.write(chunk)));
    let closed = false;
    const end = (): void => {
      if (closed) return;
      closed = true;
      take(decoder.end());
      if (carry !== '') this.push({ stream: kind, text: carry });
      carry = '';
      this.open--;
      this.notify();
    };
    stream.once('end', end);
    stream.once('close', end);
    stream.once('error', end);
  }

  private push(line: ShellLine): void {
    this.queue.push(line);
    if (this.queue.length >= QUEUE_HIGH) for (const s of this.streams) s.pause();
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The lines so far, batch by batch, until both streams ended. */
  async *batches(): AsyncGenerator<ShellLine[]> {
    for (;;) {
      if (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        for (const s of this.streams) s.resume();
        yield batch;
        continue;
      }
      if (this.open === 0) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
