/**
 * The arguments our tools give ripgrep, read from the core's own argument builders with the default
 * rules, and the `--threads` among them, so that a peer `rg` can be given the same: what is left of
 * a ratio is then our layer's own cost.
 */
import { parseRules } from '../../src/core/policy/policy.ts';
import { ignoreRulesAbove } from '../../src/core/search/ignore-parents.ts';
import { contentArgs, pathArgsFor, type SearchPlace } from '../../src/core/search/ripgrep-args.ts';
import type { SearchQueryBase } from '../../src/core/search/port.ts';

const base: SearchQueryBase = { scopes: [], policy: parseRules([]).policy, signal: new AbortController().signal };
const exclusions = base.policy.searchExclusions('read');
const threadsOf = (args: readonly string[]): string[] => args.filter((a) => a.startsWith('--threads'));

/** Where ripgrep runs when it searches the whole of `dir`, as the backend finds it before each run. */
export const placeOf = (dir: string): SearchPlace => ({ ignoreRulesAbove: ignoreRulesAbove(dir) });

/** The arguments `search_files` gives ripgrep for `pattern` in the whole workspace at `place`. */
export const searchArgs = (pattern: string, ignoreCase = false, place?: SearchPlace): string[] =>
  contentArgs({ ...base, pattern, ignoreCase }, exclusions, '', place);

/** The arguments `find_files` gives ripgrep for `glob` in the whole workspace at `place`. */
export const findArgs = (glob: string, place?: SearchPlace): string[] =>
  pathArgsFor({ ...base, glob }, exclusions, '', place);

/** The `--threads` flag find_files gives ripgrep for `glob`, or none (ripgrep's default: one a core). */
export const findThreads = (glob: string): string[] => threadsOf(findArgs(glob));

/** The `--threads` flag search_files gives ripgrep for `pattern`, or none. */
export const searchThreads = (pattern: string, ignoreCase = false): string[] =>
  threadsOf(searchArgs(pattern, ignoreCase));
