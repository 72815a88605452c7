import type { CaseResult } from './report.ts';

/** What run.ts hands every case group. */
export interface BenchContext {
  readonly log: (message: string) => void;
  /** The number of timed runs for a case whose default is `n` (BENCH_RUNS overrides every default). */
  readonly runs: (n: number) => number;
  /** Records a result (printed as it arrives, and in the final table). */
  readonly add: (result: CaseResult) => void;
}
