import { invalidInput } from '../errors.ts';
import { backtrackSafeGlob, compileRegex } from '../glob/linear.ts';

/**
 * A glob with ripgrep's `--glob` syntax and gitignore-style anchoring, matched against
 * folder-relative file paths: without "/" it matches the file name at any depth, with "/" (or a
 * leading "/") the whole path; a leading "!" negates; a trailing "/" names folders, so no file.
 * Syntax: `?`, `*` (never across "/"), `**` (any folders), `[a-z]`, `[!a]` / `[^a]`, `{a,b}` (nestable), `\` escapes.
 *
 * Why not `--glob` itself: a glob given to ripgrep is an override, and an override re-includes the
 * dot-prefixed and git-ignored files it matches, so `hidden` and `no_ignore` would lose their meaning.
 * Why not picomatch (which the policy uses): find_files promises ripgrep's glob semantics, and the two
 * differ (in ripgrep `[!a]` also matches "/", so `[!a][!a]*` selects `src/b/ab.md`); the parity tests
 * against the real `rg -g` pin this translation. The RegExp runs on a linear-time engine unless the
 * glob is too simple to backtrack (see `compileRegex`).
 */
export function compileGlob(
  glob: string,
  options: { readonly caseInsensitive?: boolean; readonly argument?: string } = {},
): GlobMatcher {
  const argument = options.argument ?? 'glob';
  let body = glob;
  const negated = body.startsWith('!');
  if (negated) body = body.slice(1);
  const anchored = body.startsWith('/');
  if (anchored) body = body.slice(1);
  const foldersOnly = body.endsWith('/');
  if (foldersOnly) body = body.slice(0, -1);
  if (body === '')
    throw invalidInput(
      `The ${argument} ${JSON.stringify(glob)} has no pattern left after its "!" or "/".`,
      `Give a pattern such as "*.ts".`,
    );
  const wholePath = anchored || body.includes('/');
  const source = `^${wholePath ? '' : '(?:.*/)?'}${translate(body, glob, argument)}$`;
  const test = compileRegex(source, {
    ignoreCase: options.caseInsensitive === true,
    dotAll: true,
    backtrackSafe: backtrackSafeGlob(body),
  });
  // A positive glob selects files only (ripgrep does not extend it to what a matching folder holds).
  if (!negated) return (relPath) => !foldersOnly && test(relPath);
  // A negated glob is an ignore rule: it also drops everything inside a folder it matches, counting
  // the folders below the searched path (ripgrep never tests the path it was given itself).
  return (relPath, searched = '') => {
    if (!foldersOnly && test(relPath)) return false;
    const start = searched === '' ? 0 : searched.length + 1;
    for (let slash = relPath.indexOf('/', start); slash !== -1; slash = relPath.indexOf('/', slash + 1)) {
      if (test(relPath.slice(0, slash))) return false;
    }
    return true;
  };
}

/** True when the folder-relative file path is selected; `searched` is the folder the walk started from ("" = the root). */
export type GlobMatcher = (relPath: string, searched?: string) => boolean;

function bad(glob: string, argument: string, why: string): Error {
  return invalidInput(
    `The ${argument} ${JSON.stringify(glob)} is not valid: ${why}.`,
    `Fix it and call again (escape a literal character with "\\").`,
  );
}

function escapeChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c;
}

function translate(body: string, glob: string, argument: string): string {
  let out = '';
  let alternation = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    switch (c) {
      case '\\': {
        const next = body[i + 1];
        if (next === undefined) throw bad(glob, argument, 'it ends with a lone "\\"');
        out += escapeChar(next);
        i++;
        break;
      }
      case '?':
        out += '[^/]';
        break;
      case '*': {
        if (body[i + 1] !== '*') {
          out += '[^/]*';
          break;
        }
        const atStart = i === 0 || body[i - 1] === '/';
        const after = body[i + 2];
        if (!atStart || (after !== undefined && after !== '/')) {
          out += '[^/]*';
          i++;
          break;
        } // "a**b" acts as "*"
        if (after === undefined) {
          out += '.*';
          i++;
          break;
        } // a trailing "**": everything below
        out += '(?:.*/)?'; // "**/": any folders, possibly none
        i += 2;
        break;
      }
      case '[': {
        const close = findClass(body, i);
        if (close === -1) throw bad(glob, argument, 'a "[" has no closing "]"');
        let inner = body.slice(i + 1, close);
        let negate = false;
        if (inner.startsWith('!') || inner.startsWith('^')) {
          negate = true;
          inner = inner.slice(1);
        }
        out += `[${negate ? '^' : ''}${inner.replace(/\\/g, '\\\\').replace(/\]/g, '\\]').replace(/\[/g, '\\[')}]`;
        i = close;
        break;
      }
      case '{':
        alternation++;
        out += '(?:';
        break;
      case '}':
        if (alternation === 0) throw bad(glob, argument, 'a "}" has no opening "{"');
        alternation--;
        out += ')';
        break;
      case ',':
        out += alternation > 0 ? '|' : ',';
        break;
      default:
        out += escapeChar(c);
    }
  }
  if (alternation > 0) throw bad(glob, argument, 'a "{" has no closing "}"');
  return out;
}

/** Index of the "]" closing the class opened at `open`; a "]" right after "[" or "[!" is literal. */
function findClass(body: string, open: number): number {
  let i = open + 1;
  if (body[i] === '!' || body[i] === '^') i++;
  if (body[i] === ']') i++;
  for (; i < body.length; i++) if (body[i] === ']') return i;
  return -1;
}
