import * as z from 'zod';
import { defineTool, type ToolContext } from '../tool.ts';
import { boundArgument } from '../schema.ts';
import { SandboxError, fromFsError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { ListedEntry } from '../list/port.ts';

export type { ListedEntry } from '../list/port.ts';

export const listDirectorySchema = () => z.strictObject({
  path: z.string().min(1).optional().describe('Folder to list, relative to the workspace (default: the workspace folder; in a multi-root workspace, every folder).'),
  max_depth: boundArgument('How many folder levels to descend (1 = only the folder\'s own entries). Omit for the whole tree.').optional(),
});

export interface ListDirectoryResult {
  readonly path: string;
  readonly entries: readonly ListedEntry[];
}

async function listTree(ctx: ToolContext, target: ModelPath, maxDepth: number | undefined): Promise<ListedEntry[]> {
  const { fs, policy, lister } = ctx.session;
  const resolved = await ctx.resolve(target);
  if (!resolved.exists) throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${target.display}" does not exist. List its parent folder, or use find_files to locate it.`);
  const stat = await fs.stat(resolved.address).catch((e: unknown) => { throw fromFsError(e, target.display, 'list'); });
  if (stat.type !== 'directory') throw new SandboxError('E_SANDBOX_INVALID_INPUT', `"${target.display}" is a ${stat.type}, not a folder. Open it with open_file instead.`);
  // Security: denied entries vanish without a trace (no name, no placeholder); the order of the rest is
  // unchanged. Entries are judged by where they really are (a listing through a link to an ancestor
  // must not show what the rules deny there).
  const hidden = (realRel: string): boolean => policy.decide(realRel, 'read', resolved.realRoot ?? target.root.localPath).action === 'deny';
  const out: ListedEntry[] = [];
  for await (const frame of lister.list({ folder: resolved, ...(maxDepth !== undefined ? { maxDepth } : {}), hidden, signal: ctx.signal })) {
    if (frame.kind === 'limit') {
      throw new SandboxError('E_SANDBOX_IO', `The directory backend "${lister.name}" cut the listing of "${target.display}" at ${frame.limit} entries, but list_directory has no limit: that is a protocol violation, so the partial listing was discarded. Retry with a smaller max_depth or a deeper path; if it happens again, tell the user.`);
    }
    if (frame.kind === 'done') return out;
    const rel = [resolved.realRel, frame.entry.path].filter(Boolean).join('/');
    if (!hidden(rel)) out.push(frame.entry);
  }
  throw new SandboxError('E_SANDBOX_IO', `The directory backend "${lister.name}" ended the listing of "${target.display}" without saying it was complete, so it was discarded. Retry; if it happens again, tell the user.`);
}

export function renderListing(result: ListDirectoryResult): string {
  if (result.entries.length === 0) return `${result.path}: empty folder`;
  const lines = result.entries.map((e) => {
    const name = e.path.slice(e.path.lastIndexOf('/') + 1);
    const indent = '  '.repeat(e.depth - 1);
    switch (e.type) {
      case 'directory': return `${indent}${name}/`;
      case 'symlink': return `${indent}${name}@ (symlink, not followed)`;
      case 'other': return `${indent}${name} (special file)`;
      case 'file': return `${indent}${name}  ${e.size ?? '?'} B`;
    }
  });
  return `${result.path}: ${result.entries.length} entries\n${lines.join('\n')}`;
}

export const listDirectory = defineTool({
  name: 'list_directory',
  displayName: 'List Directory',
  userDescription: 'List a workspace folder with entry types and sizes.',
  description: 'Lists a workspace folder: each entry with its type (file, directory, symlink, other) and size, folders first, as an indented tree. max_depth bounds how deep it descends (omit for the whole tree); there is no other bound, so give max_depth on big trees. Symlinks are shown, not followed.',
  risk: 'read',
  requires: [],
  icon: 'list-tree',
  schema: listDirectorySchema,
  targets: (input, session) => ({
    paths: session.folderScope(input.path),
    summary: `list ${input.path ?? 'the workspace'}${input.max_depth !== undefined ? ` (depth ${input.max_depth})` : ''}`,
  }),
  run: async (input, ctx): Promise<ListDirectoryResult[]> => {
    const targets = ctx.session.folderScope(input.path);
    const results: ListDirectoryResult[] = [];
    for (const target of targets) results.push({ path: target.display, entries: await listTree(ctx, target, input.max_depth) });
    return results;
  },
  render: (results) => results.map(renderListing).join('\n\n'),
});
