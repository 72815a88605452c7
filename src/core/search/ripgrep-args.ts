import { availableParallelism } from 'node:os';
import type { ContentQuery, PathQuery } from './port.ts';

/**
 * Longest line, in bytes, that ripgrep prints in full; longer lines are cut to a preview of this
 * many characters. Guards minified files with huge lines.
 */
export const MAX_COLUMNS = 2000;
/** Longest line text, in characters, that reaches the model. */
export const MAX_LINE_CHARS = 2000;

/** Flags every run shares. Security: `--no-config` so a RIPGREP_CONFIG_PATH cannot add flags (`--follow`, `--pre`). */
const COMMON = ['--no-config', '--no-ignore-messages', '--color=never'] as const;

/**
 * The policy's exclusions as ripgrep override globs. Security: they are `--iglob`s, because every
 * exclusion comes from a protective rule, which matches in any case (".ENV" is ".env"); and ripgrep
 * applies every `--iglob` after every `--glob`, and the last matching override wins, so a caller's
 * `--glob=.env` or `--iglob=.ENV` (given before them) cannot re-include a secret. A rule `X/**` also
 * excludes the folder `X` itself, anchored like the rule, so ripgrep does not even list it or read
 * the ignore files inside it.
 */
/**
 * For a listing of names (`--files`), only the exclusions that prune folders: ripgrep opens no file
 * there (the ignore files aside, and a denied folder is pruned so it reads none of those), and
 * every listed path passes the policy's own test anyway. A file-name glob per listed path (the
 * secret list's `*.pem`, `.env*` …) would cost ripgrep a tenth of the walk for nothing.
 */
export function folderExclusionArgs(exclusions: readonly string[]): string[] {
  return exclusionArgs(exclusions.filter((glob) => glob.endsWith('/**') && glob.length > 3));
}

export function exclusionArgs(exclusions: readonly string[]): string[] {
  const args: string[] = [];
  for (const glob of exclusions) {
    // A rule glob that is itself a negation cannot be expressed as an override; the frame filter covers it.
    if (glob.startsWith('!')) continue;
    if (glob.endsWith('/**') && glob.length > 3) {
      // The folder alone: ripgrep never enters an excluded folder, so nothing below it needs a glob of
      // its own (every override is tested on every path ripgrep walks, a tenth of a listing's time).
      // A scope inside it never reaches ripgrep (the backend skips a protected scope).
      const folder = glob.slice(0, -3);
      args.push(`--iglob=!${folder.includes('/') ? folder : '/' + folder}`);
    } else {
      args.push(`--iglob=!${glob}`);
    }
  }
  return args;
}

/** Whether a segment of a "/"-separated path is dot-prefixed. */
const hasDotSegment = (path: string): boolean => path.split('/').some((segment) => segment.startsWith('.'));

/** Whether `glob` is a folder exclusion (`X/**`) whose every path passes through a dot-prefixed folder. */
const underDotFolder = (glob: string): boolean => glob.endsWith('/**') && hasDotSegment(glob.slice(0, -3));

/**
 * Where ripgrep runs: whether a folder above the searched one holds ignore rules (`ignoreRulesAbove`).
 * Omitted, they are assumed to.
 */
export interface SearchPlace {
  readonly ignoreRulesAbove: boolean;
}

const RULES_ABOVE: SearchPlace = { ignoreRulesAbove: true };

function traversalArgs(query: ContentQuery | PathQuery, place: SearchPlace): string[] {
  const args: string[] = [];
  // An omitted max_depth passes no flag at all: ripgrep's own default (unbounded) applies.
  if (query.maxDepth !== undefined) args.push(`--max-depth=${query.maxDepth}`);
  if (query.hidden) args.push('--hidden');
  if (query.noIgnore) args.push('--no-ignore');
  else if (!place.ignoreRulesAbove) args.push('--no-ignore-parent');
  return args;
}

/** The search path goes after `--`, so a folder named like a flag is still a path. */
function pathArgs(scopePath: string): string[] {
  return scopePath === '' ? ['--'] : ['--', scopePath];
}

/**
 * Content search with the standard printer: `path NUL line ':' text LF` per matching line. Not
 * `--json`: ripgrep's JSON printer ignores `--max-columns`, so a minified file would stream its
 * whole line through the pipe.
 */
export function contentArgs(
  query: ContentQuery,
  exclusions: readonly string[],
  scopePath: string,
  place: SearchPlace = RULES_ABOVE,
): string[] {
  const iglobs = query.iglobs ?? [];
  return [
    ...COMMON,
    '--no-heading',
    '--with-filename',
    '--line-number',
    '--null',
    `--max-columns=${MAX_COLUMNS}`,
    '--max-columns-preview',
    query.ignoreCase ? '--ignore-case' : '--case-sensitive',
    ...(query.literal ? ['--fixed-strings'] : []),
    ...traversalArgs(query, place),
    ...(query.globs ?? []).map((g) => `--glob=${g}`),
    ...iglobs.map((g) => `--iglob=${g}`),
    ...exclusionArgs(exclusions),
    `--regexp=${query.pattern}`,
    ...pathArgs(scopePath),
  ];
}

const CORES = availableParallelism();

/**
 * ripgrep's threads for a path listing on `cores` cores, or undefined for ripgrep's default (one a
 * core), which is slow on small machines: on 2 vCPUs two threads walk a large tree slower than one.
 * - Narrowed inside ripgrep (`narrowed`: a name glob given as a file type), a listing spends its
 *   time walking, in the kernel (directory reads, stats), and two threads more than the cores keep
 *   the cores busy: on 2 vCPUs `find_files "*.ts"` over 100,000 files in 10,000 folders (20,081
 *   hits) took about 390 ms with 4 threads against 650-700 ms with 2 (`rg --files` alone: 600-780 ms
 *   with 2, 440 with 1, 265 with 4).
 * - Not narrowed, every file crosses the pipe and our processing of each path is the slower side:
 *   one core is left to it. `find_files "*"` over 300,000 files took about 700 ms with 1 thread
 *   against 790 with 3, 830 with 4 and 850 with 2.
 * With one core, more threads gained nothing: ripgrep's default.
 */
export function walkThreads(narrowed: boolean, cores: number = CORES): number | undefined {
  if (cores < 2) return undefined;
  return Math.min(narrowed ? cores + 2 : cores - 1, 12);
}

/** The flag for `threads`, or none for ripgrep's default. */
export const threadArgs = (threads: number | undefined): string[] =>
  threads === undefined ? [] : [`--threads=${threads}`];

/**
 * Path listing: `--files`, NUL-separated. The caller's glob is not passed: it is matched on each
 * listed path (see `compileGlob`), so it narrows the walk without re-including hidden or ignored files.
 */
export function pathArgsFor(
  query: PathQuery,
  exclusions: readonly string[],
  scopePath: string,
  place: SearchPlace = RULES_ABOVE,
): string[] {
  const prefilter = prefilterArgs(query);
  // `--glob=!.*` prunes every dot-prefixed folder below the scope, and the exclusions of such folders
  // with it; a scope that is itself inside one keeps them all.
  const dotsPruned = prefilter.includes(NO_DOT_NAMES) && !hasDotSegment(scopePath);
  return [
    ...COMMON,
    '--files',
    '--null',
    ...threadArgs(walkThreads(prefilter.length > 0)),
    ...prefilter,
    ...traversalArgs(query, place),
    ...folderExclusionArgs(dotsPruned ? exclusions.filter((glob) => !underDotFolder(glob)) : exclusions),
    ...pathArgs(scopePath),
  ];
}

const NO_DOT_NAMES = '--glob=!.*';

/**
 * A name-only glob of literals, `*` and `?` is also given to ripgrep as a file type: that narrows
 * the listing inside ripgrep and, unlike a --glob override, keeps ignore files in force. A type
 * does re-include dot-prefixed files, so without `hidden` they are excluded by an override. The
 * caller's glob is still matched on every listed path: this only shrinks what crosses the pipe.
 */
function prefilterArgs(query: PathQuery): string[] {
  // "*" and "**" narrow nothing: a type that takes every file would only cost ripgrep time.
  if (!/^[^/\\![\]{}:,]+$/.test(query.glob) || /^\*\*?$/.test(query.glob)) return [];
  return [`--type-add=wtfind:${query.glob}`, '--type=wtfind', ...(query.hidden ? [] : [NO_DOT_NAMES])];
}
