import { BugError, SandboxError } from '../errors.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { ResultArtifactWriter } from '../artifacts/types.ts';
import { ResultSpool } from '../artifacts/result-spool.ts';
import type { ModelPath } from '../paths.ts';
import { largestFitting, type PageBudget } from '../paging/budget.ts';
import type { ProgressReporter } from './progress.ts';
import { footer, header, linesIn, renderItems, type ItemRenderer, type Paged } from '../paging/paged.ts';

/** How often a result reports its progress at most. */
const PROGRESS_EVERY_MS = 100;

export interface PagerSpec<T> {
  readonly store: ArtifactStore;
  readonly budget: PageBudget;
  /** What the artifact is the result of, for its title: `search_files "todo"`. */
  readonly label: string;
  /** The path the call was gated on: reading the artifact is gated on it again. */
  readonly source: ModelPath;
  readonly render: ItemRenderer<T>;
  /** Stops whatever produces the items (the store calls it when it is disposed mid-result). */
  readonly stop?: () => void;
  /** Told the count of items so far as they come (the host throttles it). */
  readonly progress?: ProgressReporter;
}

/**
 * A result on its way to the model, item by item: held in memory while it fits one page, written
 * to a result artifact once it does not. Beyond the page nothing is held: items go to disk as they
 * come (`maxHeldBytes` counts what was held at most). Ends with `finish`/`complete`, or `discard`.
 */
export class ResultPager<T> {
  private readonly spec: PagerSpec<T>;
  private held: T[] = [];
  private heldChars = 0;
  private artifact: { readonly spool: ResultSpool; readonly writer: ResultArtifactWriter } | undefined;
  private last: T | undefined;
  private ended: { readonly lines: number; readonly bytes: number } | undefined;
  private peak = 0;
  private count = 0;
  private reported = Number.NEGATIVE_INFINITY;
  private cutBy: { readonly error: SandboxError; readonly why: string } | undefined;

  constructor(spec: PagerSpec<T>) {
    this.spec = spec;
  }

  /** True once the result went past one page: it is being written to an artifact. */
  get overflowed(): boolean {
    return this.artifact !== undefined;
  }

  /**
   * Once the artifact was cut short (its disk budget reached, or the artifact gone): why, in a few
   * words for its last line, and the error that adding more fails with. What produced the items was stopped.
   */
  get cut(): { readonly error: SandboxError; readonly why: string } | undefined {
    return this.cutBy;
  }

  /** Every item, while the result fits one page; after that, the first page's worth. */
  get items(): readonly T[] {
    return this.held;
  }

  /** The most this pager held in memory at once: the page's items (as text, in UTF-16 units) and the spool's pending chunk (bytes). */
  get maxHeldBytes(): number {
    return this.peak;
  }

  /** Takes one item. Returns a promise only when it had to write to disk: await it before the next call. */
  add(item: T): Promise<void> | undefined {
    this.count++;
    if (this.spec.progress) this.report(this.spec.progress);
    if (this.artifact) return this.write(item);
    this.held.push(item);
    // String length never exceeds the UTF-8 size, so this never overflows a result that would fit.
    this.heldChars += this.spec.render(item, this.held[this.held.length - 2]).length + 1;
    this.peak = Math.max(this.peak, this.heldChars);
    return this.heldChars > this.spec.budget.bytes ? this.overflow() : undefined;
  }

  /**
   * Tells the host how far the result got: the first item at once, then at most every
   * PROGRESS_EVERY_MS (the host throttles too; the message, a string, is made only when sent).
   */
  private report(progress: ProgressReporter): void {
    const now = Date.now();
    if (this.count > 1 && now - this.reported < PROGRESS_EVERY_MS) return;
    this.reported = now;
    progress(this.count, `${this.count.toLocaleString('en-US')} so far: ${this.spec.label}`);
  }

  /** Starts the artifact with the items held so far, in `order` when given (the same items, re-sorted). */
  async overflow(order?: T[]): Promise<void> {
    if (this.artifact) return;
    if (order) this.held = order;
    const writer = await this.spec.store.openResult({
      label: this.spec.label,
      source: this.spec.source,
      stop: this.spec.stop ?? (() => undefined),
    });
    let spool: ResultSpool;
    try {
      spool = await ResultSpool.create(writer.spoolPath, {
        onWritten: (index) => writer.grow(index),
        admit: (bytes) => this.admit(writer, bytes),
      });
    } catch (e) {
      await writer.remove();
      throw e;
    }
    this.artifact = { spool, writer };
    for (const item of this.held) await this.write(item);
  }

  /** A write of `bytes` to the artifact, if the store has room for it; the first refusal cuts the result and stops its producer. */
  private admit(writer: ResultArtifactWriter, bytes: number): SandboxError | undefined {
    if (this.cutBy) return this.cutBy.error;
    const why = writer.room(bytes);
    if (why === undefined) return undefined;
    const error = new SandboxError(
      'E_SANDBOX_TOO_LARGE',
      `The result of ${this.spec.label} was stopped: ${why}.`,
      'Narrow it (a path, a glob, a limit) and call again, or ask the user to raise the artifact budget.',
    );
    this.cutBy = { error, why };
    this.spec.stop?.();
    return error;
  }

  private write(item: T): Promise<void> | undefined {
    const pending = this.addText(this.spec.render(item, this.last));
    this.last = item;
    return pending;
  }

  /**
   * Once overflowed: writes one item already rendered (exactly as `render` would, given the item
   * before it), for a producer whose items are many: no object per item.
   */
  addText(text: string): Promise<void> | undefined {
    if (this.cutBy) return Promise.reject(this.cutBy.error);
    const { spool } = this.artifact!;
    const pending = spool.line(text);
    if (this.heldChars + spool.pendingBytes > this.peak) this.peak = this.heldChars + spool.pendingBytes;
    return pending;
  }

  /**
   * Once overflowed: writes items already rendered as UTF-8 bytes (whole lines, exactly as `render`
   * would write them, separators included), for a producer that renders them faster than strings.
   * Items come this way to the end: `render` is not asked about what came before them.
   */
  async addBytes(bytes: Buffer): Promise<void> {
    if (this.cutBy) throw this.cutBy.error;
    const { spool } = this.artifact!;
    if (this.heldChars + spool.pendingBytes + bytes.length > this.peak)
      this.peak = this.heldChars + spool.pendingBytes + bytes.length;
    await spool.bytes(bytes);
  }

  /**
   * Once overflowed: writes the items still held in memory, within the disk budget (it fails with
   * `cut`'s error when they do not fit): so a result that ends knows whether it was cut.
   */
  async written(): Promise<void> {
    if (this.cutBy) throw this.cutBy.error;
    await this.artifact?.spool.flushed();
  }

  /** Ends the artifact with `trailer` lines (notes, then the line that says whether it is complete). */
  async complete(trailer: readonly string[]): Promise<void> {
    const artifact = this.artifact;
    if (!artifact) throw new BugError('ResultPager.complete: the result fits one page; nothing was spooled');
    try {
      if (!this.cutBy) await artifact.spool.flushed();
      // The store keeps room for these (RESULT_TRAILER_ROOM), also after a cut.
      artifact.spool.lastLines();
      for (const line of trailer) await artifact.spool.line(line);
      const index = await artifact.spool.finish();
      this.ended = { lines: index.lines, bytes: index.bytes };
      await artifact.writer.end(index, this.peak);
    } catch (e) {
      await this.discard();
      throw e;
    }
  }

  /** The first page that fits the budget under the header naming the artifact (complete or still being written). */
  async page(summary: string): Promise<Paged<T>> {
    const artifact = this.artifact;
    if (!artifact) throw new BugError('ResultPager.page: the result fits one page; there is no artifact');
    // Each item is rendered and measured once; every page size tried is then a lookup, never a copy.
    const rendered = renderItems(this.held, this.spec.render);
    const offsets = [1];
    const sizes = [0];
    for (const text of rendered) {
      offsets.push(offsets[offsets.length - 1]! + linesIn(text));
      sizes.push(sizes[sizes.length - 1]! + Buffer.byteLength(text) + 1);
    }
    const ref = {
      callId: artifact.writer.callId,
      lines: this.ended?.lines ?? 0,
      bytes: this.ended?.bytes ?? 0,
      complete: this.ended !== undefined,
    };
    const frame = (k: number): Pick<Paged<T>, 'summary' | 'artifact'> => ({
      summary,
      artifact: { ...ref, nextOffset: offsets[k]! },
    });
    const bytesOf = (k: number): number =>
      Buffer.byteLength(header(frame(k))) + Buffer.byteLength(footer(frame(k))) + 1 + sizes[k]!;
    const textOf = (k: number): string => [header(frame(k)), ...rendered.slice(0, k), footer(frame(k))].join('\n');
    const k = await largestFitting(this.held.length, bytesOf, textOf, this.spec.budget);
    return { ...frame(k), page: this.held.slice(0, k) };
  }

  /** `complete`, then `page`: for a result that ended before the model is told of it. */
  async finish(summary: string, trailer: readonly string[]): Promise<Paged<T>> {
    await this.complete(trailer);
    return this.page(summary);
  }

  /** Drops the artifact being written (the call failed before anyone was told of it). */
  async discard(): Promise<void> {
    const artifact = this.artifact;
    this.artifact = undefined;
    if (!artifact) return;
    await artifact.spool.close();
    await artifact.writer.remove();
  }
}
