/** What the bomb tests (hardening-load.test.ts) and their child process (hardening-bombs-child.ts) share. */

export type BombScenario =
  'glob-bombs' | 'grep-max-results' | 'replace-all' | 'markdown-hashes' | 'deep-json' | 'json-brackets';

export interface BombReport {
  readonly scenario: BombScenario;
  /** The slowest call's CPU time in this process (ripgrep's own time is not counted). */
  readonly maxCallCpuMs: number;
  /** Peak resident memory above what the process held before the first call, in MiB. */
  readonly rssGrowthMiB: number;
  /** The largest result (JSON and rendered text) or error message, in bytes. */
  readonly maxResultBytes: number;
  /** Each call's outcome: "ok" or its error code. */
  readonly outcomes: readonly string[];
  readonly calls: number;
}

/** Globs whose backtracking RegExp ran for minutes on one 30-character name. */
export const BOMB_GLOBS: readonly string[] = [
  `${'{*a,*a}'.repeat(9)}b`,
  `${'{*a,*b}'.repeat(12)}c`,
  `${'*a'.repeat(12)}b`,
  `**/${'*a'.repeat(10)}*b`,
  `${'{{a,*a},{*a,a*}}'.repeat(6)}z`,
  `${'[!b]*'.repeat(10)}b`,
];
