/**
 * The `--threads` our tools give ripgrep, read from the core's own argument builders, so that a
 * peer `rg` can be given the same: what is left of a ratio is then our layer's own cost.
 */
import { parseRules } from '../../src/core/policy.ts';
import { contentArgs, pathArgsFor } from '../../src/core/search/ripgrep-args.ts';
import type { SearchQueryBase } from '../../src/core/search/port.ts';

const base: SearchQueryBase = { scopes: [], policy: parseRules([]).policy, signal: new AbortController().signal };
const threadsOf = (args: readonly string[]): string[] => args.filter((a) => a.startsWith('--threads'));

/** The `--threads` flag find_files gives ripgrep for `glob`, or none (ripgrep's default: one a core). */
export const findThreads = (glob: string): string[] => threadsOf(pathArgsFor({ ...base, glob }, [], ''));

/** The `--threads` flag search_files gives ripgrep for `pattern`, or none. */
export const searchThreads = (pattern: string, ignoreCase = false): string[] => threadsOf(contentArgs({ ...base, pattern, ignoreCase }, [], ''));
