import { isCancellation } from '../errors.ts';
import type { Paged } from '../paging/paged.ts';
import type { ResultPager } from './pager.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { Log } from '../ports.ts';
import type { PageBudget } from '../paging/budget.ts';
import type { ProgressReporter } from './progress.ts';

/** What a call that streams its result is given: where a large result goes, one page's budget, progress, the log, its signal. */
export interface StreamingCall {
  readonly artifacts: ArtifactStore;
  readonly page: PageBudget;
  readonly progress?: ProgressReporter;
  readonly log: Log;
  readonly signal: AbortSignal;
}

/** What `streamResult` needs from a tool. */
export interface ResultStream<Small> {
  /** Pulls items into the pager until they end (true), or, with `untilOverflow`, until the pager overflowed (false). */
  readonly pull: (untilOverflow: boolean) => Promise<boolean>;
  /** After the items ended within one page: the result as the model gets it when it fits, else undefined (after `pager.overflow`). */
  readonly small: () => Promise<Small | undefined>;
  /** What the result holds: the final count, or the count so far. */
  readonly summary: (final: boolean) => string;
  /** The artifact's last lines after every item: notes, then `done complete (…)` or `limit N reached (…)`. */
  readonly trailer: () => readonly string[];
  /** The artifact's last line when producing broke off (cancelled, failed) after the model was told of it. */
  readonly brokeOff: (why: string) => string;
  /** The artifact's last line when the store cut it (its disk budget reached): `why` in a few words. Default: `brokeOff`'s. */
  readonly cutOff?: (why: string) => string;
  /** Where a failure after the model was told of the artifact is reported. */
  readonly warn: (message: string) => void;
}

function reason(e: unknown): string {
  if (isCancellation(e)) return 'the call was cancelled';
  return e instanceof Error ? e.message : String(e);
}

/**
 * Drives a tool's items through `pager`. A result that ends within one page is returned whole. One
 * that overflows returns as soon as its first page is full: the model gets that page while the rest
 * keeps spooling into the artifact in the background, which ends with its `trailer`, or, if the work
 * breaks off (cancelled, failed), with what was written and a line that says it is incomplete.
 * With `untilEnd` (work that is bounded, such as a grep of one artifact), the call itself spools the
 * rest and returns the first page of the complete artifact; if the work breaks off after the
 * artifact was started, the artifact ends with that line and the call fails with the cause.
 */
export async function streamResult<T, Small>(
  pager: ResultPager<T>,
  stream: ResultStream<Small>,
  options: { readonly untilEnd?: boolean } = {},
): Promise<Small | Paged<T>> {
  /** The last line of an artifact whose producing broke off with `e`: cut by the store (whatever its producer then threw), or broken off. */
  const brokeOff = (e: unknown): string => {
    const cut = pager.cut;
    if (cut === undefined) return stream.brokeOff(reason(e));
    return stream.cutOff ? stream.cutOff(cut.why) : stream.brokeOff(cut.why);
  };
  /** The last lines of an artifact whose items all came: what is still held is written first, and may be cut. */
  const lastLines = async (): Promise<readonly string[]> => {
    try {
      await pager.written();
    } catch (e) {
      if (pager.cut === undefined) throw e;
      return [brokeOff(e)];
    }
    return stream.trailer();
  };
  let ended: boolean;
  try {
    ended = await stream.pull(options.untilEnd !== true);
  } catch (e) {
    if (options.untilEnd && pager.overflowed)
      await pager
        .complete([brokeOff(e)])
        .catch((f: unknown) => stream.warn(`A result artifact could not be completed: ${reason(f)}`));
    else await pager.discard();
    throw e;
  }
  if (ended) {
    try {
      if (!pager.overflowed) {
        const small = await stream.small();
        if (small !== undefined) return small;
      }
      return await pager.finish(stream.summary(true), await lastLines());
    } catch (e) {
      await pager.discard();
      throw e;
    }
  }
  const rest = (async (): Promise<void> => {
    let trailer: readonly string[];
    try {
      await stream.pull(false);
      trailer = await lastLines();
    } catch (e) {
      trailer = [brokeOff(e)];
    }
    await pager
      .complete(trailer)
      .catch((e: unknown) => stream.warn(`A result artifact could not be completed: ${reason(e)}`));
  })();
  try {
    return await pager.page(stream.summary(false));
  } catch (e) {
    await rest;
    throw e;
  }
}
