import { anyOf, type RuleRegex } from './rule-glob.ts';

/** A name glob with its regex, as a rule list holds it. */
export interface NameGlob {
  readonly glob: string;
  readonly regex: RuleRegex;
}

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
export function namePrefilter(globs: readonly NameGlob[]): (path: string) => boolean {
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
  return (path) => {
    // The name is the path's last segment, tested in place.
    const from = path.lastIndexOf('/') + 1;
    const starting = byFirst.get(asciiLower(path.charCodeAt(from)));
    if (starting?.some((prefix) => path.length - from >= prefix.length && foldedAt(path, from, prefix))) return true;
    const ending = byLast.get(asciiLower(path.charCodeAt(path.length - 1)));
    if (ending?.some((suffix) => path.length - from >= suffix.length && foldedAt(path, path.length - suffix.length, suffix))) return true;
    for (const text of inner) {
      for (let at = from, end = path.length - text.length; at <= end; at++) if (foldedAt(path, at, text)) return true;
    }
    return rest !== undefined && rest(path.slice(from));
  };
}

function byCharCode(literals: readonly string[], key: (literal: string) => number): Map<number, string[]> {
  const map = new Map<number, string[]>();
  for (const literal of literals) {
    const k = key(literal);
    const list = map.get(k);
    if (list) list.push(literal);
    else map.set(k, [literal]);
  }
  return map;
}

/** An ASCII capital letter's code lower-cased; any other code as it is. */
function asciiLower(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

/** Whether `path` holds `literal` (lower-case ASCII) at `at`, ASCII letters in either case. */
function foldedAt(path: string, at: number, literal: string): boolean {
  for (let i = 0; i < literal.length; i++) if (asciiLower(path.charCodeAt(at + i)) !== literal.charCodeAt(i)) return false;
  return true;
}
