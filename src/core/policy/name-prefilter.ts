import { anyOf, type RuleRegex } from './rule-glob.ts';

/** A name glob with its regex, as a rule list holds it. */
export interface NameGlob {
  readonly glob: string;
  readonly regex: RuleRegex;
}

/** Globs of plain name characters, `*` and `?`: each of their other characters is a literal. */
const SIMPLE = /^[\w.\-~ *?]*$/;

/**
 * A quick test that a file name might match one of several name globs, whatever the case: true for
 * every name one of them matches (and for some more). Most names in a tree match no rule, and a
 * few string comparisons per name say so, where the globs' RegExp tries every glob at every position.
 *
 * A glob of ASCII letters, digits, `_.-~ `, `*` and `?` needs its leading literal as the name's prefix, else its
 * trailing literal as the suffix, else its longest literal somewhere. Security: this must never say
 * false for a matching name. Compared lower-cased: such a glob runs on the host's RegExp, whose
 * case-insensitive match pairs an ASCII letter only with its other case, and lower-casing a name
 * maps those to the same letter (and non-ASCII characters, which never match an ASCII literal, at
 * most to more matches). Any other glob (classes, braces, extglobs, non-ASCII, or run on RE2, whose
 * case folding pairs more characters) keeps its RegExp.
 */
export function namePrefilter(globs: readonly NameGlob[]): (name: string) => boolean {
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const inner: string[] = [];
  const others: RuleRegex[] = [];
  let anyName = false;
  for (const { glob, regex } of globs) {
    if (!regex.backtrackSafe || !SIMPLE.test(glob)) {
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
  const rest = anyOf(others, true);
  return (name) => {
    const lower = name.toLowerCase();
    for (const prefix of prefixes) if (lower.startsWith(prefix)) return true;
    for (const suffix of suffixes) if (lower.endsWith(suffix)) return true;
    for (const text of inner) if (lower.includes(text)) return true;
    return rest(name);
  };
}
