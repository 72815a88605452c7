import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { SandboxError, cancelled, invalidInput } from '../errors.ts';
import type {
  ContentQuery,
  MatchFrame,
  NoteFrame,
  PathFrame,
  PathQuery,
  SandboxSearch,
  SearchBatch,
  SearchFrame,
  SearchQueryBase,
  SearchScope,
} from './port.ts';
import { ignoreRulesAbove } from './ignore-parents.ts';
import { contentArgs, pathArgsFor, type SearchPlace } from './ripgrep-args.ts';
import { compileGlob } from './ripgrep-glob.ts';
import { ContentParser, NulSplitter, normalizeRgPath, parseStderr } from './ripgrep-output.ts';
import { STDERR_CAP, rejectsPattern, type Ripgrep, type RipgrepExit } from '../ripgrep/process.ts';
import { SearchVisibility } from './visibility.ts';

/**
 * The bundled search backend: one ripgrep process per scope, run in the workspace folder. It does
 * not declare `supportsFollow`, and refuses `follow: true` from any caller.
 */
export function createRipgrepSearch(rg: Ripgrep): SandboxSearch {
  return {
    supportsFollow: false,
    searchContent(query: ContentQuery): AsyncIterable<SearchBatch> {
      checkQuery(query);
      return run(rg, query, {
        what: 'content',
        args: (exclusions, scope, place) => contentArgs(query, exclusions, scope.path, place),
        parser: (scope) => {
          const parser = new ContentParser(scope.path);
          return (chunk) =>
            parser
              .push(chunk)
              .map((r): ResultFrame =>
                r.cut
                  ? { kind: 'match', folder: scope.folder, path: r.path, line: r.line, text: r.text, cut: true }
                  : { kind: 'match', folder: scope.folder, path: r.path, line: r.line, text: r.text },
              );
        },
        callerGlobs: [...(query.globs ?? []), ...(query.iglobs ?? [])],
      });
    },
    findPaths(query: PathQuery): AsyncIterable<SearchBatch> {
      checkQuery(query);
      // "*" and "**" select every file: no test per path (the monorepo's `find_files "*"`).
      const matchesGlob = MATCH_ALL.has(query.glob) ? () => true : compileGlob(query.glob);
      const matchesIglob =
        query.iglob === undefined ? () => true : compileGlob(query.iglob, { caseInsensitive: true, argument: 'iglob' });
      return run(rg, query, {
        what: 'paths',
        args: (exclusions, scope, place) => pathArgsFor(query, exclusions, scope.path, place),
        parser: (scope) => {
          const splitter = new NulSplitter();
          return (chunk) => {
            const out: ResultFrame[] = [];
            for (const path of splitter.push(chunk))
              if (matchesGlob(path, scope.path) && matchesIglob(path, scope.path))
                out.push({ kind: 'path', folder: scope.folder, path });
            return out;
          };
        },
        callerGlobs: [],
      });
    },
  };
}

/** Globs that match every file path. */
const MATCH_ALL = new Set(['*', '**']);

/** Defence in depth: the tools' schemas already rule these out, but a caller may reach the backend directly. */
function checkQuery(query: SearchQueryBase): void {
  if (query.follow === true) {
    throw new SandboxError(
      'E_SANDBOX_UNSUPPORTED',
      'follow: true was refused: the ripgrep search backend does not follow symbolic links until its containment audit is done, because a followed link can lead the search outside the workspace. Search again without follow.',
      '',
    );
  }
  for (const [name, value] of [
    ['limit', query.limit],
    ['max_depth', query.maxDepth],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1)) {
      throw invalidInput(`${name} must be an integer >= 1 (got ${String(value)}); omit it for no bound.`, '');
    }
  }
}

/** A match or a path: what ripgrep's output turns into. */
type ResultFrame = MatchFrame | PathFrame;

interface RunPlan {
  readonly what: 'content' | 'paths';
  readonly args: (exclusions: readonly string[], scope: SearchScope, place: SearchPlace) => string[];
  readonly parser: (scope: SearchScope) => (chunk: Buffer) => ResultFrame[];
  /** The globs the caller gave, so a glob error can be blamed on the right party. */
  readonly callerGlobs: readonly string[];
}

async function* run(
  ripgrep: Ripgrep,
  query: SearchQueryBase,
  plan: RunPlan,
): AsyncGenerator<SearchBatch, void, undefined> {
  const exclusions = query.policy.searchExclusions('read');
  const { limit, signal } = query;
  let emitted = 0;
  for (const scope of query.scopes) {
    if (signal.aborted) throw cancelled();
    const visibility = new SearchVisibility(query.policy, scope.cwd);
    // Security: an explicit path is searched even when an exclusion glob matches it, so a protected
    // scope is skipped before ripgrep starts.
    if (visibility.hides(scope.path)) {
      yield [
        {
          kind: 'note',
          folder: scope.folder,
          path: scope.path,
          message:
            'Skipped: a workspace rule protects this path, and search never reads protected paths (secrets such as environment files and keys, and denied paths). Open the file with open_file, which asks the user.',
        },
      ];
      continue;
    }
    if (plan.what === 'paths') await requireFolder(scope);
    const place: SearchPlace = {
      ignoreRulesAbove: query.noIgnore === true || ignoreRulesAbove(nodePath.join(scope.cwd, scope.path)),
    };
    const rg = ripgrep.run(plan.args(exclusions, scope, place), { cwd: scope.cwd, signal });
    try {
      const parse = plan.parser(scope);
      let limited = false;
      for await (const chunk of rg.stdout) {
        const batch: SearchFrame[] = [];
        for (const frame of parse(chunk as Buffer)) {
          // Security: every result passes the policy, whatever ripgrep was told to exclude.
          if (visibility.hides(frame.path)) continue;
          if (limit !== undefined && emitted >= limit) {
            // The limit is known to be exceeded only once a result past it arrives. Killed before its
            // stdout closes, so ripgrep never reports the closed pipe as a failure to read a file.
            limited = true;
            rg.kill();
            break;
          }
          emitted++;
          batch.push(frame);
        }
        if (batch.length > 0) yield batch;
        if (limited) break;
      }
      const exit = await rg.exited;
      if (signal.aborted) throw cancelled();
      const notes = exitNotes(ripgrep.path, exit, scope, visibility, limited, plan.callerGlobs);
      if (notes.length > 0) yield notes;
      if (limited && limit !== undefined) {
        yield [{ kind: 'limit', limit }];
        return;
      }
    } finally {
      rg.kill();
      await rg.exited;
    }
  }
  yield [{ kind: 'done', complete: true }];
}

async function requireFolder(scope: SearchScope): Promise<void> {
  if (scope.path === '') return;
  let isFolder: boolean;
  try {
    isFolder = (await fsp.stat(nodePath.join(scope.cwd, scope.path))).isDirectory();
  } catch {
    throw new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `"${scope.path}" does not exist.`,
      `Check the folder with list_directory.`,
    );
  }
  if (!isFolder)
    throw invalidInput(
      `"${scope.path}" is a file, not a folder: find_files lists the files under a folder.`,
      `Give its folder as path, or open the file with open_file.`,
    );
}

/** Unreadable paths named one by one; the rest are counted in one note. */
const MAX_UNREADABLE_NOTES = 20;

const NOTHING_SEARCHED = /^(rg: )?No files were searched|^Running with --debug will show why files are being skipped/;

/** Interprets ripgrep's exit: 0 and 1 are success (1 = nothing matched); 2 with only per-path read errors is a partial result. */
function exitNotes(
  rgPath: string,
  exit: RipgrepExit,
  scope: SearchScope,
  visibility: SearchVisibility,
  killedByUs: boolean,
  callerGlobs: readonly string[],
): NoteFrame[] {
  if (exit.spawnError) {
    throw new SandboxError(
      'E_SANDBOX_IO',
      `ripgrep could not be started (${rgPath}): ${exit.spawnError.message}. Search is unavailable; tell the user, and use list_directory meanwhile.`,
      '',
      { cause: exit.spawnError },
    );
  }
  const diagnostics = parseStderr(exit.stderr);
  // Security: a read error about a protected path is dropped, not narrated.
  const unreadable = diagnostics.unreadable.filter((u) => !visibility.hides(u.path));
  const notes: NoteFrame[] = unreadable.slice(0, MAX_UNREADABLE_NOTES).map((u) => ({
    kind: 'note',
    folder: scope.folder,
    path: u.path,
    message: `ripgrep could not read this path (${u.reason}); any results in it are missing.`,
  }));
  if (unreadable.length > MAX_UNREADABLE_NOTES) {
    notes.push({
      kind: 'note',
      message: `ripgrep could not read ${unreadable.length - MAX_UNREADABLE_NOTES} more paths in "${scope.folder}"${exit.stderr.length >= STDERR_CAP ? ' (at least)' : ''}; results in them are missing.`,
    });
  }
  if (killedByUs || exit.code === 0 || exit.code === 1) return notes;
  const other = diagnostics.other.filter((line) => {
    // Every candidate file was filtered out (by the caller's globs or the policy's exclusions): no matches, not a failure.
    if (NOTHING_SEARCHED.test(line)) return false;
    const m = /^rg: (.+?): /.exec(line);
    return !(m && visibility.hides(normalizeRgPath(m[1]!)));
  });
  if (exit.code === 2 && other.length === 0) return notes;
  const said = other
    .map((l) => l.replace(/^rg: /, ''))
    .join('\n')
    .trim();
  if (exit.code === 2 && rejectsPattern(said)) {
    throw invalidInput(
      `The pattern is not a valid regular expression; ripgrep says:\n${said}\nFix the pattern, or pass literal: true to search for the text as written.`,
      '',
    );
  }
  const glob = /error parsing glob '(.*?)'/.exec(said);
  if (exit.code === 2 && glob) {
    const bad = glob[1]!;
    if (callerGlobs.some((g) => g === bad || g === `!${bad}` || g.replace(/^!/, '') === bad)) {
      throw invalidInput(
        `The glob ${JSON.stringify(bad)} is not valid; ripgrep says: ${said}.`,
        `Fix the glob and call again.`,
      );
    }
    throw new SandboxError(
      'E_SANDBOX_IO',
      'One of the workspace rules is not a glob ripgrep accepts, so search cannot run safely.',
      'Tell the user to check the rules.',
    );
  }
  const how =
    exit.code === null ? `was stopped by signal ${exit.signal ?? 'unknown'}` : `failed with exit code ${exit.code}`;
  throw new SandboxError(
    'E_SANDBOX_IO',
    `ripgrep ${how}${said ? `; it says: ${said.slice(0, 500)}` : ''}.`,
    `Retry once; if it fails again, tell the user.`,
  );
}
