import type Picomatch from 'picomatch';
import { lazyModule } from '../lazy-module.ts';
import { backtrackSafeGlob, compileRegex, type StringTest } from '../glob/linear.ts';

/**
 * picomatch guards against "." and ".." segments with look-arounds, which RE2 does not have. Paths
 * reach the policy normalized (no empty, "." or ".." segment), where the dot guards always hold; the
 * "(?=.)" before a star holds except at the very end of the path (after a "**" that matched nothing,
 * "a/**\/*" reaches it on "a"). So a rule run on RE2 matches everything picomatch's does, and at most
 * such a path more: stricter for an ask or deny rule, and for an allow rule only its own folder (a
 * test holds RE2's answers to be a superset of picomatch's).
 */
const ALWAYS_TRUE_HERE = ['(?!(?:^|\\/)\\.{1,2}(?:\\/|$))', '(?!\\.{1,2}(?:\\/|$))', '(?!\\.{0,1}(?:\\/|$))', '(?=.)'];

/** The regex source of a rule glob: picomatch's (dotfiles matched like any file). Throws on an invalid glob. */
export function ruleSource(glob: string): string {
  // picomatch (~25 KB) loads on the policy's first decision, not at activation.
  return lazyModule<typeof Picomatch>('picomatch').makeRe(glob, { dot: true }).source;
}

/** `source` without the look-arounds that always hold for normalized paths; throws when others remain. */
function linearSource(glob: string, source: string): string {
  let out = source;
  for (const lookaround of ALWAYS_TRUE_HERE) out = out.split(lookaround).join('');
  if (/\(\?[=!<]/.test(out))
    throw new Error(`the glob "${glob}" needs a look-around (an extglob such as "!(…)"), which rules do not support`);
  return out;
}

export interface RuleRegex {
  /** The regex source, and whether the host's RegExp may run it (else RE2 does). */
  readonly source: string;
  readonly backtrackSafe: boolean;
}

/**
 * How a rule glob is matched. Security: built-in globs are reviewed constants and run on the host's
 * RegExp; a person's (or a repository's) glob runs there only when `backtrackSafeGlob` says it
 * cannot backtrack hard, and on RE2 otherwise. Throws for a glob that cannot be matched safely.
 */
export function ruleRegex(glob: string, trusted: boolean): RuleRegex {
  const source = ruleSource(glob);
  if (trusted || backtrackSafeGlob(glob)) return { source, backtrackSafe: true };
  return { source: linearSource(glob, source), backtrackSafe: false };
}

/** One test over several rule regexes (any of them matches), each group on its engine. */
export function anyOf(regexes: readonly RuleRegex[], ignoreCase: boolean): StringTest {
  const tests: StringTest[] = [];
  for (const backtrackSafe of [true, false]) {
    const sources = regexes.filter((r) => r.backtrackSafe === backtrackSafe).map((r) => `(?:${r.source})`);
    // dotAll: picomatch builds `**` on `.`, which would stop at a line break in a folder's name.
    if (sources.length) tests.push(compileRegex(sources.join('|'), { ignoreCase, backtrackSafe, dotAll: true }));
  }
  if (tests.length === 0) return () => false;
  if (tests.length === 1) return tests[0]!;
  return (text) => tests.some((t) => t(text));
}
