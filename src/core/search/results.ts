import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { ToolContext } from '../tool.ts';
import type { SandboxSearch, SearchFrame, SearchScope } from './port.ts';

/** A result frame as the model and the CLI see it: paths are display paths (folder-prefixed in multi-root). */
export type ResultFrame =
  | { readonly kind: 'match'; readonly path: string; readonly line: number; readonly text: string; readonly cut?: true }
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'note'; readonly message: string; readonly path?: string }
  | { readonly kind: 'limit'; readonly limit: number }
  | { readonly kind: 'done'; readonly complete: true };

/** What a search tool's result is: the frame list, ending with a `limit` or `done` frame. */
export type SearchResult = readonly ResultFrame[];

export interface SearchRun {
  /** The tool's name, for messages. */
  readonly tool: 'search_files' | 'find_files';
  readonly targets: readonly ModelPath[];
  readonly limit: number | undefined;
  /** Runs the backend's query over the gated, resolved scopes. */
  readonly query: (search: SandboxSearch, scopes: readonly SearchScope[]) => AsyncIterable<SearchFrame>;
  /** The zero-results note: what might have hidden matches. */
  readonly emptyNote: string;
  /** The thing `limit` counts, singular and plural: ["matching line", "matching lines"]. */
  readonly noun: readonly [string, string];
}

/**
 * Resolves each target through the gate's translation, runs the backend's query and returns the
 * frames with display paths, plus the tool's notes (zero results, result limited) before the
 * terminal frame.
 */
export async function runSearch(ctx: ToolContext, spec: SearchRun): Promise<SearchResult> {
  const { session } = ctx;
  const search = session.search;
  if (!search) throw new SandboxError('E_SANDBOX_UNSUPPORTED', `${spec.tool} is not available: this workspace has no search backend. Use list_directory instead.`);
  const scopes: SearchScope[] = [];
  for (const target of spec.targets) {
    const resolved = await ctx.resolve(target);
    if (!resolved.exists) throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${target.display}" does not exist. Check the folder with list_directory or find_files; paths are relative to the workspace folder.`);
    const cwd = target.root.localPath ?? session.fs.localPath(target.root.address);
    if (cwd === undefined) throw new SandboxError('E_SANDBOX_UNSUPPORTED', `${spec.tool} cannot search "${target.root.name}": the folder is not on the local disk. Use list_directory instead.`);
    // The real path (not the lexical one): a link inside the workspace must not carry the search past rules anchored at its real place.
    scopes.push({ folder: target.root.name, cwd, path: resolved.realRel });
  }

  const multiRoot = session.roots.length > 1;
  const display = (folder: string | undefined, path: string): string => (multiRoot && folder !== undefined ? [folder, path].filter(Boolean).join('/') : path || '.');
  const folderOrder = new Map(session.roots.map((root, i) => [root.name, i]));
  // Results arrive file by file; each file's frames are kept together as one group.
  interface Group { readonly order: number; readonly folder: string; readonly path: string; readonly display: string; readonly frames: ResultFrame[] }
  const groups: Group[] = [];
  let group: Group | undefined;
  let found = 0;
  const groupFor = (folder: string, path: string): Group => {
    if (group?.path !== path || group.folder !== folder) {
      group = { order: folderOrder.get(folder) ?? 0, folder, path, display: display(folder, path), frames: [] };
      groups.push(group);
    }
    found++;
    return group;
  };
  const notes: ResultFrame[] = [];
  let terminal: ResultFrame | undefined;
  for await (const frame of spec.query(search, scopes)) {
    if (terminal) throw new SandboxError('E_SANDBOX_IO', `The search backend sent a frame after its final one; the results of ${spec.tool} cannot be trusted. Retry once; if it fails again, tell the user.`);
    switch (frame.kind) {
      case 'match': {
        const g = groupFor(frame.folder, frame.path);
        g.frames.push(frame.cut ? { kind: 'match', path: g.display, line: frame.line, text: frame.text, cut: true } : { kind: 'match', path: g.display, line: frame.line, text: frame.text });
        break;
      }
      case 'path': { const g = groupFor(frame.folder, frame.path); g.frames.push({ kind: 'path', path: g.display }); break; }
      case 'note': notes.push(frame.path === undefined ? { kind: 'note', message: frame.message } : { kind: 'note', message: frame.message, path: display(frame.folder, frame.path) }); break;
      case 'limit':
        if (spec.limit === undefined) throw new SandboxError('E_SANDBOX_IO', `The search backend cut the results of ${spec.tool} at ${frame.limit} although no limit was given; the results are incomplete. Tell the user.`);
        terminal = frame; break;
      case 'done': terminal = frame; break;
    }
  }
  if (!terminal) throw new SandboxError('E_SANDBOX_IO', `The search backend ended ${spec.tool} without saying whether the results are complete. Retry once; if it fails again, tell the user.`);
  // ripgrep searches files in parallel, so its order varies from run to run; the model gets a stable
  // one: folder by folder, then by path, each file's lines in order.
  groups.sort((a, b) => a.order - b.order || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const frames: ResultFrame[] = [];
  for (const g of groups) for (const f of g.frames) frames.push(f);
  for (const n of notes) frames.push(n);
  if (found === 0) frames.push({ kind: 'note', message: spec.emptyNote });
  if (terminal.kind === 'limit') {
    const [one, many] = spec.noun;
    frames.push({ kind: 'note', message: `Result limited to ${terminal.limit} ${terminal.limit === 1 ? one : many}; more exist. Call again with a larger limit (now ${terminal.limit}) to see more, or narrow the search.` });
  }
  frames.push(terminal);
  return frames;
}

/** What may have hidden matches, for the zero-results note. Names no protected path. */
export function hiddenBy(options: { hidden?: boolean | undefined; noIgnore?: boolean | undefined; maxDepth?: number | undefined; globs?: readonly string[] }): string {
  const reasons: string[] = [];
  if (!options.hidden) reasons.push('dot-prefixed files and folders were skipped (pass hidden: true)');
  if (!options.noIgnore) reasons.push('files excluded by .gitignore and similar files were skipped (pass no_ignore: true)');
  if (options.maxDepth !== undefined) reasons.push(`only ${options.maxDepth} folder level${options.maxDepth === 1 ? '' : 's'} deep were searched (raise or omit max_depth)`);
  if (options.globs && options.globs.length > 0) reasons.push(`only files matching ${options.globs.map((g) => JSON.stringify(g)).join(', ')} were searched`);
  reasons.push('paths that the workspace rules in force protect (secrets such as environment files and keys, and denied paths) are never searched');
  return reasons.join('; ');
}

function renderNotes(frames: SearchResult): string[] {
  return frames.flatMap((f) => (f.kind === 'note' ? [`Note: ${f.path !== undefined ? `${f.path}: ` : ''}${f.message}`] : []));
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Matches grouped by file: a header line, then each file and its `line: text` lines. */
export function renderMatches(frames: SearchResult): string {
  // runSearch emits each file's matches together, so a file starts wherever the path changes.
  const body: string[] = [];
  let files = 0;
  let count = 0;
  let current: string | undefined;
  for (const f of frames) {
    if (f.kind !== 'match') continue;
    if (f.path !== current) { current = f.path; files++; body.push(f.path); }
    count++;
    body.push(f.cut ? `  ${f.line}: ${f.text} [line cut]` : `  ${f.line}: ${f.text}`);
  }
  const limited = frames.some((f) => f.kind === 'limit');
  // (No spread of `body` into a call: a huge result would overflow the argument limit.)
  const head = count > 0 ? [`${plural(count, 'matching line', 'matching lines')} in ${plural(files, 'file', 'files')}${limited ? ' (limited)' : ''}:`] : [];
  return head.concat(body, renderNotes(frames)).join('\n');
}

/** One path a line, after a header. */
export function renderPaths(frames: SearchResult): string {
  const paths = frames.flatMap((f) => (f.kind === 'path' ? [f.path] : []));
  const limited = frames.some((f) => f.kind === 'limit');
  const head = paths.length > 0 ? [`${plural(paths.length, 'file', 'files')}${limited ? ' (limited)' : ''}:`] : [];
  return head.concat(paths, renderNotes(frames)).join('\n');
}
