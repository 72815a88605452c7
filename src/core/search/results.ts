import { SandboxError } from '../errors.ts';
import { displayOf } from '../paths.ts';
import { fits } from '../paging/budget.ts';
import { ResultPager } from '../results/pager.ts';
import { isPaged, renderPaged, type ItemRenderer, type Paged } from '../paging/paged.ts';
import { streamResult } from '../results/stream.ts';
import { plural } from '../text/format.ts';
import type { GatedPath, ResolveGated, WorkspaceRoot } from '../paths.ts';
import type { ResolvedFs } from '../fs/resolved-fs.ts';
import type { StreamingCall } from '../results/stream.ts';
import type { MatchFrame, PathFrame, SandboxSearch, SearchBatch, SearchScope } from './port.ts';

/** A result frame as the model and the CLI see it: paths are display paths (folder-prefixed in multi-root). */
export type ResultFrame =
  | { readonly kind: 'match'; readonly path: string; readonly line: number; readonly text: string; readonly cut?: true }
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'note'; readonly message: string; readonly path?: string }
  | { readonly kind: 'limit'; readonly limit: number }
  | { readonly kind: 'done'; readonly complete: true };

/** One result: a matching line or a path. */
export type SearchHit = Extract<ResultFrame, { kind: 'match' | 'path' }>;

/** What a search tool's result is when it fits one page: the frame list, ending with a `limit` or `done` frame. */
export type SearchResult = readonly ResultFrame[];

/** A search tool's result: the frames, or past one page, the first page of hits and the artifact holding all. */
export type SearchOutput = SearchResult | Paged<SearchHit>;

export interface SearchRun {
  /** The tool's name, for messages. */
  readonly tool: string;
  /** What the search finds: matching lines (counted in files too) or paths. */
  readonly finds: 'lines' | 'paths';
  readonly limit: number | undefined;
  /** Runs the backend's query over the gated, resolved scopes; `signal` stops it. */
  readonly query: (
    search: SandboxSearch,
    scopes: readonly SearchScope[],
    signal: AbortSignal,
  ) => AsyncIterable<SearchBatch>;
  /** The zero-results note: what might have hidden matches. */
  readonly emptyNote: string;
  /** The thing `limit` counts, singular and plural: ["matching line", "matching lines"]. */
  readonly noun: readonly [string, string];
  /** What a result artifact is the result of: `search_files "todo" in src`. */
  readonly label: string;
}

/** A hit with what sorting needs: the folder's place among the workspace folders, and the folder-relative path. */
interface Held {
  readonly hit: SearchHit;
  readonly order: number;
  readonly rel: string;
}

const renderHeld: ItemRenderer<Held> = (h, previous) => renderHit(h.hit, previous?.hit);

/**
 * Resolves each target through the gate's translation, runs the backend's query and returns the
 * frames with display paths, plus the tool's notes (zero results, result limited) before the
 * terminal frame. A result within one page is sorted (folder by folder, then by path). A larger one
 * streams into a result artifact as it arrives (each file's lines together), nothing of it held in
 * memory, and the model gets its first page as soon as that page is full.
 */
/** What a search is given: the backend, the folders, the call's targets and their translation, and where its result streams. */
export interface SearchCall extends StreamingCall {
  readonly search: SandboxSearch | undefined;
  readonly roots: readonly WorkspaceRoot[];
  readonly fs: ResolvedFs;
  readonly targets: readonly GatedPath[];
  readonly resolve: ResolveGated;
}

export async function runSearch(ctx: SearchCall, spec: SearchRun): Promise<SearchOutput> {
  const search = ctx.search;
  if (!search)
    throw new SandboxError(
      'E_SANDBOX_UNSUPPORTED',
      `${spec.tool} is not available: this workspace has no search backend.`,
      `Use list_directory instead.`,
    );
  const scopes: SearchScope[] = [];
  for (const target of ctx.targets) {
    const resolved = await ctx.resolve(target);
    if (!resolved.exists)
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `"${target.display}" does not exist.`,
        `Check the folder with list_directory or find_files; paths are relative to the workspace folder.`,
      );
    const cwd = ctx.fs.rootLocalPath(resolved);
    if (cwd === undefined)
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        `${spec.tool} cannot search "${target.root.name}": the folder is not on the local disk.`,
        `Use list_directory instead.`,
      );
    // The real path (not the lexical one): a link inside the workspace must not carry the search past rules anchored at its real place.
    scopes.push({ folder: target.root.name, cwd, path: resolved.realRel });
  }

  const multiRoot = ctx.roots.length > 1;
  const folderOrder = new Map(ctx.roots.map((root, i) => [root.name, i]));
  // The search runs on past the call's return when its result overflows a page: the store stops it if it goes first.
  const stop = new AbortController();
  const pager = new ResultPager<Held>({
    store: ctx.artifacts,
    budget: ctx.page,
    ...(ctx.progress ? { progress: ctx.progress } : {}),
    label: spec.label,
    source: ctx.targets[0]!,
    render: renderHeld,
    stop: () => stop.abort(),
  });
  const batches = spec.query(search, scopes, AbortSignal.any([ctx.signal, stop.signal]))[Symbol.asyncIterator]();
  // Results arrive file by file: a file's display path is built once.
  let lastFolder: string | undefined;
  let lastPath: string | undefined;
  let lastDisplay = '';
  let order = 0;
  let found = 0;
  let files = 0;
  const notes: ResultFrame[] = [];
  let terminal: Extract<ResultFrame, { kind: 'limit' | 'done' }> | undefined;
  const [one, many] = spec.noun;
  // The batch being taken in, and where: a pull that stops at the page's overflow resumes there.
  let batch: SearchBatch = [];
  let at = 0;

  /** Takes one result: held while the result fits a page, then written straight to the artifact. */
  const take = (frame: MatchFrame | PathFrame): Promise<void> | undefined => {
    const newFile = frame.path !== lastPath || frame.folder !== lastFolder;
    if (newFile) {
      lastFolder = frame.folder;
      lastPath = frame.path;
      lastDisplay = displayOf(frame.folder, frame.path, multiRoot);
      order = folderOrder.get(frame.folder) ?? 0;
      files++;
    }
    found++;
    if (pager.overflowed) {
      // The hot path of a large result: renderHit's lines as text, no object per hit.
      if (frame.kind === 'path') return pager.addText(lastDisplay);
      const line = matchLine(frame.line, frame.text, frame.cut);
      return pager.addText(newFile ? `${lastDisplay}\n${line}` : line);
    }
    const hit: SearchHit =
      frame.kind === 'path'
        ? { kind: 'path', path: lastDisplay }
        : frame.cut
          ? { kind: 'match', path: lastDisplay, line: frame.line, text: frame.text, cut: true }
          : { kind: 'match', path: lastDisplay, line: frame.line, text: frame.text };
    return pager.add({ hit, order, rel: frame.path });
  };

  const pull = async (untilOverflow: boolean): Promise<boolean> => {
    for (;;) {
      while (at < batch.length) {
        const frame = batch[at++]!;
        if (terminal)
          throw new SandboxError(
            'E_SANDBOX_IO',
            `The search backend sent a frame after its final one; the results of ${spec.tool} cannot be trusted.`,
            `Retry once; if it fails again, tell the user.`,
          );
        switch (frame.kind) {
          case 'match':
          case 'path': {
            const writing = take(frame);
            if (writing) {
              await writing;
              if (untilOverflow && pager.overflowed) return false;
            }
            break;
          }
          case 'note':
            notes.push(
              frame.path === undefined
                ? { kind: 'note', message: frame.message }
                : { kind: 'note', message: frame.message, path: displayOf(frame.folder, frame.path, multiRoot) },
            );
            break;
          case 'limit':
            if (spec.limit === undefined)
              throw new SandboxError(
                'E_SANDBOX_IO',
                `The search backend cut the results of ${spec.tool} at ${frame.limit} although no limit was given; the results are incomplete.`,
                `Tell the user.`,
              );
            terminal = frame;
            break;
          case 'done':
            terminal = frame;
            break;
        }
      }
      const next = await batches.next();
      if (next.done) break;
      batch = next.value;
      at = 0;
    }
    if (!terminal)
      throw new SandboxError(
        'E_SANDBOX_IO',
        `The search backend ended ${spec.tool} without saying whether the results are complete.`,
        `Retry once; if it fails again, tell the user.`,
      );
    if (terminal.kind === 'limit') {
      notes.push({
        kind: 'note',
        message: `Result limited to ${terminal.limit} ${terminal.limit === 1 ? one : many}; more exist. Call again with a larger limit (now ${terminal.limit}) to see more, or narrow the search.`,
      });
    }
    return true;
  };
  const counted = (): string =>
    `${plural(found, one, many)}${spec.finds === 'lines' ? ` in ${plural(files, 'file', 'files')}` : ''}`;

  const output = await streamResult<Held, SearchResult>(pager, {
    pull,
    small: async () => {
      // ripgrep searches files in parallel, so its order varies from run to run; the model gets a stable
      // one: folder by folder, then by path, each file's lines in order (the sort is stable).
      const sorted = [...pager.items].sort((a, b) => a.order - b.order || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
      const result: ResultFrame[] = sorted.map((h) => h.hit);
      if (found === 0) result.push({ kind: 'note', message: spec.emptyNote });
      result.push(...notes, terminal!);
      if (await fits(spec.finds === 'lines' ? renderMatches(result) : renderPaths(result), ctx.page)) return result;
      await pager.overflow(sorted);
      return undefined;
    },
    summary: (final) =>
      final ? `${counted()}${terminal?.kind === 'limit' ? ' (limited)' : ''}` : `${counted()} so far`,
    trailer: () => [
      ...renderNotes(notes),
      terminal?.kind === 'limit'
        ? `limit ${terminal.limit} reached (${counted()}; more exist)`
        : `done complete (${counted()})`,
    ],
    brokeOff: (why) => `incomplete: ${why} after ${counted()}; the lines above are all that was found`,
    cutOff: (why) =>
      `cut: ${why}, so the search was stopped after ${counted()}; the lines above are those that fit. Narrow the search (a path, a glob, a limit), or ask the user to raise the artifact budget.`,
    // A session that ends while its result is still written stops it on purpose: nothing to report.
    warn: (message) => {
      if (!stop.signal.aborted) ctx.log.warn(message);
    },
  });
  return isPaged<Held>(output) ? { ...output, page: output.page.map((h) => h.hit) } : output;
}

/** What may have hidden matches, for the zero-results note. Names no protected path. */
export function hiddenBy(options: {
  hidden?: boolean | undefined;
  noIgnore?: boolean | undefined;
  maxDepth?: number | undefined;
  globs?: readonly string[];
}): string {
  const reasons: string[] = [];
  if (!options.hidden) reasons.push('dot-prefixed files and folders were skipped (pass hidden: true)');
  if (!options.noIgnore)
    reasons.push('files excluded by .gitignore and similar files were skipped (pass no_ignore: true)');
  if (options.maxDepth !== undefined)
    reasons.push(
      `only ${options.maxDepth} folder level${options.maxDepth === 1 ? '' : 's'} deep were searched (raise or omit max_depth)`,
    );
  if (options.globs && options.globs.length > 0)
    reasons.push(`only files matching ${options.globs.map((g) => JSON.stringify(g)).join(', ')} were searched`);
  reasons.push(
    'paths that the workspace rules in force protect (secrets such as environment files and keys, and denied paths) are never searched',
  );
  return reasons.join('; ');
}

function renderNotes(frames: readonly ResultFrame[]): string[] {
  return frames.flatMap((f) =>
    f.kind === 'note' ? [`Note: ${f.path !== undefined ? `${f.path}: ` : ''}${f.message}`] : [],
  );
}

/** A hit's lines: a path alone, or a matching line under its file's path when the file changes. */
export function renderHit(hit: SearchHit, previous: SearchHit | undefined): string {
  if (hit.kind === 'path') return hit.path;
  const line = matchLine(hit.line, hit.text, hit.cut);
  return previous?.path === hit.path ? line : `${hit.path}\n${line}`;
}

/** A matching line under its file's path. */
function matchLine(line: number, text: string, cut: boolean | undefined): string {
  return cut ? `  ${line}: ${text} [line cut]` : `  ${line}: ${text}`;
}

/** Matches grouped by file: a header line, then each file and its `line: text` lines. */
export function renderMatches(output: SearchOutput): string {
  if (isPaged<SearchHit>(output)) return renderPaged(output, renderHit);
  const frames = output;
  // runSearch emits each file's matches together, so a file starts wherever the path changes.
  const body: string[] = [];
  let files = 0;
  let count = 0;
  let previous: SearchHit | undefined;
  for (const f of frames) {
    if (f.kind !== 'match') continue;
    if (f.path !== previous?.path) files++;
    count++;
    body.push(renderHit(f, previous));
    previous = f;
  }
  const limited = frames.some((f) => f.kind === 'limit');
  // (No spread of `body` into a call: a huge result would overflow the argument limit.)
  // One whole hit speaks for itself; a count helps from two on.
  const head =
    count > 1 || limited
      ? [
          `${plural(count, 'matching line', 'matching lines')} in ${plural(files, 'file', 'files')}${limited ? ' (limited)' : ''}:`,
        ]
      : [];
  return head.concat(body, renderNotes(frames)).join('\n');
}

/** One path a line, after a header. */
export function renderPaths(output: SearchOutput): string {
  if (isPaged<SearchHit>(output)) return renderPaged(output, renderHit);
  const frames = output;
  const paths = frames.flatMap((f) => (f.kind === 'path' ? [f.path] : []));
  const limited = frames.some((f) => f.kind === 'limit');
  const head = paths.length > 0 ? [`${plural(paths.length, 'file', 'files')}${limited ? ' (limited)' : ''}:`] : [];
  return head.concat(paths, renderNotes(frames)).join('\n');
}
