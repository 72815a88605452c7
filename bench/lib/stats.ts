/** Timing and summary helpers shared by every case. */

export interface Sample {
  readonly label: string;
  /** Milliseconds (or the case's unit), one per timed run. */
  readonly values: number[];
}

export interface Summary {
  readonly label: string;
  readonly runs: number;
  readonly min: number;
  readonly median: number;
  readonly values: readonly number[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(sample: Sample): Summary {
  return {
    label: sample.label,
    runs: sample.values.length,
    min: Math.min(...sample.values),
    median: median(sample.values),
    values: sample.values.map(round),
  };
}

export function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Milliseconds spent in `f`. */
export async function time(f: () => unknown): Promise<number> {
  const start = performance.now();
  await f();
  return performance.now() - start;
}

/** One side of a comparison (`check` and `elapsed` are methods, so sides of any output fit one `Side[]`). */
export interface Side<T = unknown> {
  readonly label: string;
  /** Untimed, once before each timed run of this side (restore a file, drop a copy, `sync`). */
  readonly before?: () => Promise<void> | void;
  readonly run: () => Promise<T>;
  /** Checks a run's output (throws when it is wrong), outside the timing. */
  check?(out: T): void;
  /** The run's time taken from its output (a child process that times itself), instead of the wall time around `run`. */
  elapsed?(out: T): number;
}

/**
 * Runs two sides back to back, `runs` times, alternating which goes first, after one untimed
 * warm-up of each. Both sides see the same machine state; on a shared machine that is what makes
 * the ratio of medians meaningful while the absolute times drift.
 */
export async function compare<A, B>(ours: Side<A>, peer: Side<B>, runs: number, warmup = 1): Promise<[Sample, Sample]> {
  const [a, [b]] = await compareAll(ours, [peer], runs, warmup);
  return [a, b!];
}

/**
 * `compare` with several peers (ripgrep as is and given our threads): ours and every peer once a
 * round, the order rotated every round, so each side goes first in turn; one untimed warm-up of each.
 */
export async function compareAll<A>(
  ours: Side<A>,
  peers: readonly Side[],
  runs: number,
  warmup = 1,
): Promise<[Sample, Sample[]]> {
  const sides: readonly Side[] = [ours, ...peers];
  const values: number[][] = sides.map(() => []);
  const one = async (k: number, timed: boolean): Promise<void> => {
    const side = sides[k]!;
    await side.before?.();
    let out: unknown;
    const ms = await time(async () => {
      out = await side.run();
    });
    side.check?.(out);
    if (timed) values[k]!.push(side.elapsed ? side.elapsed(out) : ms);
  };
  for (let i = 0; i < warmup; i++) for (let k = 0; k < sides.length; k++) await one(k, false);
  for (let i = 0; i < runs; i++) for (let j = 0; j < sides.length; j++) await one((i + j) % sides.length, true);
  const samples = sides.map((side, k) => ({ label: side.label, values: values[k]! }));
  return [samples[0]!, samples.slice(1)];
}

/** One side alone (no peer), `runs` timed runs after `warmup` untimed ones. */
export async function measure<T>(side: Side<T>, runs: number, warmup = 1): Promise<Sample> {
  const values: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    await side.before?.();
    let out: T | undefined;
    const ms = await time(async () => {
      out = await side.run();
    });
    side.check?.(out as T);
    if (i >= warmup) values.push(side.elapsed ? side.elapsed(out as T) : ms);
  }
  return { label: side.label, values };
}
