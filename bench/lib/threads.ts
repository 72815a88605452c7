/**
 * The arguments our tools give ripgrep, read from the core's own argument builders with the default
 * rules, and the `--threads` among them, so that a peer `rg` can be given the same: what is left of
 * a ratio is then our layer's own cost.
 */
import { parseRules } from '../../src/core/policy.ts';
import { contentArgs, pathArgsFor } from '../../src/core/search/ripgrep-args.ts';
import type { SearchQueryBase } from '../../src/core/search/port.ts';

const base: SearchQueryBase = { scopes: [], policy: parseRules([]).policy, signal: new AbortController().signal };
const exclusions = base.policy.searchExclusions('read');
const threadsOf = (args: readonly string[]): string[] => args.filter((a) => a.startsWith('--threads'));

/** The arguments `search_files` gives ripgrep for `pattern` in the whole workspace. */
export const searchArgs = (pattern: string, ignoreCase = false): string[] => contentArgs({ ...base, pattern, ignoreCase }, exclusions, '');

/** The arguments `find_files` gives ripgrep for `glob` in the whole workspace. */
export const findArgs = (glob: string): string[] => pathArgsFor({ ...base, glob }, exclusions, '');

/** The `--threads` flag find_files gives ripgrep for `glob`, or none (ripgrep's default: one a core). */
export const findThreads = (glob: string): string[] => threadsOf(findArgs(glob));

/** The `--threads` flag search_files gives ripgrep for `pattern`, or none. */
export const searchThreads = (pattern: string, ignoreCase = false): string[] => threadsOf(searchArgs(pattern, ignoreCase));
