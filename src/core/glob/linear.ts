import type * as Re2js from 're2js';
import { lazyModule } from '../lazy-module.ts';

/** A compiled whole-string test. */
export type StringTest = (text: string) => boolean;

export interface RegexOptions {
  readonly ignoreCase?: boolean;
  /** "." also matches a line break. */
  readonly dotAll?: boolean;
  /**
   * The source is known not to backtrack more than polynomially in a small degree (see
   * `backtrackSafeGlob`), so the host's own, faster RegExp engine may run it.
   */
  readonly backtrackSafe?: boolean;
}

/**
 * Security: a glob is the model's (find_files) or a repository's (workspace rules) text, and a
 * RegExp built from it runs on the host's thread (in VS Code, the extension host every extension
 * shares). `{*a,*a}` repeated and a long name make a backtracking engine run for minutes, so any
 * source not known to be safe runs on RE2 (re2js), whose matching time is linear in the input.
 */
export function compileRegex(source: string, options: RegexOptions = {}): StringTest {
  if (options.backtrackSafe) {
    const regex = new RegExp(source, `${options.ignoreCase ? 'i' : ''}${options.dotAll ? 's' : ''}`);
    return (text) => regex.test(text);
  }
  // re2js (~150 KB) loads on the first glob that needs it, not at activation.
  const { RE2JS } = lazyModule<typeof Re2js>('re2js');
  const flags = (options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (options.dotAll ? RE2JS.DOTALL : 0);
  const regex = RE2JS.compile(source, flags);
  return (text) => regex.test(text);
}

/**
 * True when a glob cannot make a backtracking matcher work hard: no alternation (`{`, or an
 * extglob's `(`) and at most one run of `*`. Its RegExp then has at most one unbounded loop, so a
 * test costs at most (positions) × (glob length) steps. Anything else is matched by RE2.
 */
export function backtrackSafeGlob(glob: string): boolean {
  if (/[{(]/.test(glob)) return false;
  return (glob.match(/\*+/g) ?? []).length <= 1;
}
