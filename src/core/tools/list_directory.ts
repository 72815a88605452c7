import * as z from 'zod';
import { defineTool, type ToolContext } from '../contract/tool.ts';
import type { GatedPath } from '../paths.ts';
import { boundArgument } from '../contract/schema.ts';
import { SandboxError, cancelled, fromFsError } from '../errors.ts';
import type { ListedEntry } from '../list/port.ts';
import { fits } from '../paging/budget.ts';
import { ResultPager } from '../results/pager.ts';
import { isPaged, renderPaged, type ItemRenderer, type Paged } from '../paging/paged.ts';
import { streamResult } from '../results/stream.ts';

export type { ListedEntry } from '../list/port.ts';

export const listDirectorySchema = () =>
  z.strictObject({
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Folder to list, relative to the workspace (default: the workspace folder; in a multi-root workspace, every folder).',
      ),
    max_depth: boundArgument(
      "How many folder levels to descend (1 = only the folder's own entries). Omit for the whole tree.",
    ).optional(),
  });

export interface ListDirectoryResult {
  readonly path: string;
  readonly entries: readonly ListedEntry[];
}

/** A listing as it streams: each listed folder's name, then its entries. */
export type ListItem = { readonly kind: 'folder'; readonly path: string } | EntryItem;

/**
 * A listed entry as an item of the result, made by a constructor: an object literal's allocation site
 * is pretenured by V8 once the first page's items survive a few GCs, and every later item is then
 * made in old space, with its entry (see `Listed` in fs-lister.ts).
 */
class EntryItem {
  readonly kind = 'entry';
  readonly entry: ListedEntry;
  constructor(entry: ListedEntry) {
    this.entry = entry;
  }
}

/** The listings, or past one page, the first page of them and the result artifact holding all. */
export type ListDirectoryOutput = ListDirectoryResult[] | Paged<ListItem>;

/** One folder's listing as items, a run at a time: its name, then its entries in display order (denied ones left out). */
async function* listTree(
  ctx: ToolContext<'fs' | 'policy' | 'lister'>,
  target: GatedPath,
  maxDepth: number | undefined,
  signal: AbortSignal,
): AsyncGenerator<ListItem[], void, undefined> {
  const { fs, policy, lister } = ctx;
  const resolved = await ctx.resolve(target);
  if (!resolved.exists)
    throw new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `"${target.display}" does not exist.`,
      `List its parent folder, or use find_files to locate it.`,
    );
  const stat = await fs.stat(resolved.address).catch((e: unknown) => {
    throw fromFsError(e, target.display, 'list');
  });
  if (stat.type !== 'directory')
    throw new SandboxError(
      'E_SANDBOX_INVALID_INPUT',
      `"${target.display}" is a ${stat.type}, not a folder.`,
      `Open it with open_file instead.`,
    );
  // Security: denied entries vanish without a trace (no name, no placeholder); the order of the rest is
  // unchanged. Entries are judged by where they really are (a listing through a link to an ancestor
  // must not show what the rules deny there). The backend only prunes (it never enters a denied
  // folder); every entry it yields is judged here.
  const root = resolved.realRoot ?? target.root.localPath;
  const prefix = resolved.realRel ? `${resolved.realRel}/` : '';
  const hidden = (realRel: string): boolean => policy.decide(realRel, 'read', root).action === 'deny';
  yield [{ kind: 'folder', path: target.display }];
  for await (const frame of lister.list({
    folder: resolved,
    ...(maxDepth !== undefined ? { maxDepth } : {}),
    hidden,
    signal,
  })) {
    if (frame.kind === 'limit') {
      throw new SandboxError(
        'E_SANDBOX_IO',
        `The directory backend "${lister.name}" cut the listing of "${target.display}" at ${frame.limit} entries, but list_directory has no limit: that is a protocol violation, so the partial listing was discarded.`,
        `Retry with a smaller max_depth or a deeper path; if it happens again, tell the user.`,
      );
    }
    if (frame.kind === 'done') return;
    const items: ListItem[] = [];
    for (const entry of frame.entries) if (!hidden(prefix + entry.path)) items.push(new EntryItem(entry));
    yield items;
  }
  throw new SandboxError(
    'E_SANDBOX_IO',
    `The directory backend "${lister.name}" ended the listing of "${target.display}" without saying it was complete, so it was discarded.`,
    `Retry; if it happens again, tell the user.`,
  );
}

/** Indents by depth, made once: a listing indents every entry. */
const indents: string[] = [''];

function entryLine(e: ListedEntry): string {
  const name = e.path.slice(e.path.lastIndexOf('/') + 1);
  while (indents.length < e.depth) indents.push(`${indents[indents.length - 1]!}  `);
  const indent = indents[e.depth - 1]!;
  switch (e.type) {
    case 'directory':
      return `${indent}${name}/`;
    case 'symlink':
      return `${indent}${name}@ (symlink, not followed)`;
    case 'other':
      return `${indent}${name} (special file)`;
    case 'file':
      return `${indent}${name}  ${e.size ?? '?'} B`;
  }
}

/** A listing item's lines in a result artifact: each folder under its name, a blank line between folders. */
export const renderListItem: ItemRenderer<ListItem> = (item, previous) =>
  item.kind === 'entry' ? entryLine(item.entry) : `${previous ? '\n' : ''}${item.path}:`;

export function renderListing(result: ListDirectoryResult): string {
  if (result.entries.length === 0) return `${result.path}: empty folder`;
  return `${result.path}: ${result.entries.length} entries\n${result.entries.map(entryLine).join('\n')}`;
}

function renderOutput(output: ListDirectoryOutput): string {
  return isPaged<ListItem>(output) ? renderPaged(output, renderListItem) : output.map(renderListing).join('\n\n');
}

/** The listings the items make, one a folder. */
export function listingsOf(items: readonly ListItem[]): ListDirectoryResult[] {
  const out: { path: string; entries: ListedEntry[] }[] = [];
  for (const item of items) {
    if (item.kind === 'folder') out.push({ path: item.path, entries: [] });
    else out[out.length - 1]!.entries.push(item.entry);
  }
  return out;
}

export const listDirectory = defineTool({
  name: 'list_directory',
  displayName: 'List Directory',
  userDescription: 'List a workspace folder with entry types and sizes.',
  description:
    'Lists a workspace folder: each entry with its type (file, directory, symlink, other) and size, folders first, as an indented tree. max_depth bounds how deep it descends (omit for the whole tree); there is no other bound. A listing larger than one page (50 KiB, or your token budget) is not cut: you get its first page and the callId of a result artifact holding all of it, ending with a "done complete" line; page it with artifact_read and search it with artifact_grep. Symlinks are shown, not followed.',
  risk: 'read',
  requires: [],
  needs: ['fs', 'policy', 'lister', 'artifacts', 'log'],
  icon: 'list-tree',
  schema: listDirectorySchema,
  targets: (input, scope) => ({
    paths: scope.folderScope(input.path),
    summary: `list ${input.path ?? 'the workspace'}${input.max_depth !== undefined ? ` (depth ${input.max_depth})` : ''}`,
  }),
  run: async (input, ctx): Promise<ListDirectoryOutput> => {
    const targets = ctx.targets;
    const label = `list_directory ${input.path ?? '.'}${input.max_depth !== undefined ? ` (max_depth ${input.max_depth})` : ''}`;
    // The walk runs on past the call's return when the listing overflows a page: the store stops it if it goes first.
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.signal, stop.signal]);
    const pager = new ResultPager<ListItem>({
      store: ctx.artifacts,
      budget: ctx.page,
      ...(ctx.progress ? { progress: ctx.progress } : {}),
      label,
      source: targets[0]!,
      render: renderListItem,
      stop: () => stop.abort(),
    });
    const runs = (async function* (): AsyncGenerator<ListItem[], void, undefined> {
      for (const target of targets) yield* listTree(ctx, target, input.max_depth, signal);
    })();
    let run: { readonly items: readonly ListItem[]; next: number } = { items: [], next: 0 };
    let entries = 0;
    const counted = (): string =>
      `${entries} ${entries === 1 ? 'entry' : 'entries'} in ${targets.map((t) => t.display).join(', ')}`;
    return streamResult<ListItem, ListDirectoryResult[]>(pager, {
      pull: async (untilOverflow) => {
        // A run is taken item by item, so a pull that stops at the overflow leaves the rest of its run to the next.
        for (;;) {
          while (run.next < run.items.length) {
            const item = run.items[run.next++]!;
            if (item.kind === 'entry') entries++;
            const writing = pager.add(item);
            if (writing) {
              await writing;
              if (untilOverflow && pager.overflowed) return false;
            }
          }
          if (signal.aborted) throw cancelled();
          const next = await runs.next();
          if (next.done) return true;
          run = { items: next.value, next: 0 };
        }
      },
      small: async () => {
        const listings = listingsOf(pager.items);
        if (await fits(renderOutput(listings), ctx.page)) return listings;
        await pager.overflow();
        return undefined;
      },
      summary: (final) => `${counted()}${final ? '' : ' so far'}`,
      trailer: () => [`done complete (${counted()})`],
      brokeOff: (why) => `incomplete: ${why} after ${counted()}; the entries above are all that was listed`,
      // A session that ends while its listing is still written stops it on purpose: nothing to report.
      warn: (message) => {
        if (!stop.signal.aborted) ctx.log.warn(message);
      },
    });
  },
  render: renderOutput,
});
