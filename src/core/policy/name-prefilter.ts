import { anyOf, type RuleRegex } from './rule-glob.ts';

/** A name glob with its regex, as a rule list holds it. */
export interface NameGlob {
  readonly glob: string;
  readonly regex: RuleRegex;
}

/** Whether a name glob might match a path's last segment, or its segment `[from, end)`. */
export type NameTest = (path: string, from?: number, end?: number) => boolean;

/** Globs of plain name characters, `*` and `?`: each of their other characters is a literal. */
const SIMPLE = /^[\w.\-~ *?]*$/;

/**
 * A quick test that a file name (a path's last segment) might match one of several name globs, whatever the case: true for
 * every name one of them matches (and for some more). Most names in a tree match no rule, and a
 * few character comparisons per name say so, where the globs' RegExp tries every glob at every position.
 *
 * A glob of ASCII letters, digits, `_.-~ `, `*` and `?` needs its leading literal as the name's
 * prefix, else its trailing literal as the suffix, else its longest literal somewhere; only the
 * literals that start (end) with the name's first (last) character are compared. Security: this must
 * never say false for a matching name. Such a glob runs on the host's RegExp, whose case-insensitive
 * match (no `u` flag) pairs an ASCII letter only with its other case and every other character only
 * with itself, and the literals are compared exactly so, in place. Any other glob (classes, braces,
 * extglobs, non-ASCII, or run on RE2, whose case folding pairs more characters) keeps its RegExp.
 */
export function namePrefilter(globs: readonly NameGlob[]): NameTest {
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const inner: string[] = [];
  const others: RuleRegex[] = [];
  let anyName = false;
  for (const { glob, regex } of globs) {
    // picomatch leaves the character after a run of three stars unescaped ("***~." matches "~a"): its literals are not literal.
    if (!regex.backtrackSafe || !SIMPLE.test(glob) || glob.includes('***')) {
      others.push(regex);
      continue;
    }
    const parts = glob.toLowerCase().split(/[*?]+/);
    const first = parts[0]!;
    const last = parts[parts.length - 1]!;
    const longest = parts.reduce((a, b) => (b.length > a.length ? b : a), '');
    if (first !== '') prefixes.push(first);
    else if (last !== '') suffixes.push(last);
    else if (longest !== '') inner.push(longest);
    else anyName = true;
  }
  if (anyName) return () => true;
  const rest = others.length === 0 ? undefined : anyOf(others, true);
  const byFirst = byCharCode(prefixes, (p) => p.charCodeAt(0));
  const byLast = byCharCode(suffixes, (p) => p.charCodeAt(p.length - 1));
  // The name is tested in place: a path's last segment, or the segment [from, end) a caller names.
  return (path, from = path.lastIndexOf('/') + 1, end = path.length) => {
    const length = end - from;
    const starting = byFirst[asciiLower(path.charCodeAt(from))];
    if (starting !== undefined) {
      for (const prefix of starting) if (length >= prefix.length && foldedAt(path, from, prefix)) return true;
    }
    const ending = byLast[asciiLower(path.charCodeAt(end - 1))];
    if (ending !== undefined) {
      for (const suffix of ending)
        if (length >= suffix.length && foldedAt(path, end - suffix.length, suffix)) return true;
    }
    for (const text of inner) {
      const first = text.charCodeAt(0);
      for (let at = from, last = end - text.length; at <= last; at++)
        if (asciiLower(path.charCodeAt(at)) === first && foldedAt(path, at, text)) return true;
    }
    return rest !== undefined && rest(path.slice(from, end));
  };
}

/** The literals by a character code of theirs (ASCII: the tests above fold only ASCII letters), an array to index. */
function byCharCode(literals: readonly string[], key: (literal: string) => number): (string[] | undefined)[] {
  const table: (string[] | undefined)[] = new Array<string[] | undefined>(128).fill(undefined);
  for (const literal of literals) {
    const k = key(literal);
    if (k < 128) (table[k] ??= []).push(literal);
  }
  return table;
}

/** An ASCII capital letter's code lower-cased; any other code as it is. */
function asciiLower(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

/** Whether `path` holds `literal` (lower-case ASCII) at `at`, ASCII letters in either case. */
function foldedAt(path: string, at: number, literal: string): boolean {
  for (let i = 0; i < literal.length; i++)
    if (asciiLower(path.charCodeAt(at + i)) !== literal.charCodeAt(i)) return false;
  return true;
}
