import * as z from 'zod';
import { defineTool, type ToolContext } from '../tool.ts';
import { boundArgument } from '../schema.ts';
import { SandboxError, cancelled, fromFsError } from '../errors.ts';
import type { EntryType } from '../ports.ts';
import type { ModelPath } from '../paths.ts';

export const listDirectorySchema = () => z.strictObject({
  path: z.string().min(1).optional().describe('Folder to list, relative to the workspace (default: the workspace folder; in a multi-root workspace, every folder).'),
  max_depth: boundArgument('How many folder levels to descend (1 = only the folder\'s own entries). Omit for the whole tree.').optional(),
});

export interface ListedEntry {
  /** Relative to the listed folder, "/"-separated. */
  readonly path: string;
  readonly type: EntryType;
  readonly size?: number;
  readonly depth: number;
}

export interface ListDirectoryResult {
  readonly path: string;
  readonly entries: readonly ListedEntry[];
}

const typeOrder: Record<EntryType, number> = { directory: 0, file: 1, symlink: 1, other: 1 };

async function listTree(ctx: ToolContext, target: ModelPath, maxDepth: number | undefined): Promise<ListedEntry[]> {
  const { fs, policy } = ctx.session;
  const resolved = await ctx.resolve(target);
  if (!resolved.exists) throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${target.display}" does not exist. List its parent folder, or use find_files to locate it.`);
  const stat = await fs.stat(resolved.address).catch((e: unknown) => { throw fromFsError(e, target.display, 'list'); });
  if (stat.type !== 'directory') throw new SandboxError('E_SANDBOX_INVALID_INPUT', `"${target.display}" is a ${stat.type}, not a folder. Open it with open_file instead.`);

  const out: ListedEntry[] = [];
  const walk = async (address: string, relFromRoot: string, relFromTarget: string, depth: number): Promise<void> => {
    if (ctx.signal.aborted) throw cancelled();
    const entries = await fs.readDirectory(address).catch((e: unknown) => { throw fromFsError(e, relFromTarget || target.display, 'list'); });
    // Security: denied entries vanish without a trace (no name, no placeholder); order of the rest is unchanged.
    const visible = entries
      .map((entry) => ({ entry, rel: relFromRoot ? `${relFromRoot}/${entry.name}` : entry.name }))
      .filter(({ rel }) => policy.decide(rel, 'read').action !== 'deny')
      .sort((a, b) => typeOrder[a.entry.type] - typeOrder[b.entry.type] || (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0));
    const sizes = await Promise.all(visible.map(({ entry }) =>
      entry.type === 'directory' ? Promise.resolve(undefined) : fs.lstat(fs.join(address, entry.name)).then((s) => s.size, () => undefined)));
    for (const [i, { entry, rel }] of visible.entries()) {
      const path = relFromTarget ? `${relFromTarget}/${entry.name}` : entry.name;
      const size = sizes[i];
      out.push({ path, type: entry.type, depth, ...(size !== undefined ? { size } : {}) });
      if (entry.type === 'directory' && (maxDepth === undefined || depth < maxDepth)) {
        await walk(fs.join(address, entry.name), rel, path, depth + 1);
      }
    }
  };
  await walk(resolved.address, target.rel, '', 1);
  return out;
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
    paths: input.path === undefined ? session.allRoots() : [session.normalize(input.path)],
    summary: `list ${input.path ?? 'the workspace'}${input.max_depth !== undefined ? ` (depth ${input.max_depth})` : ''}`,
  }),
  run: async (input, ctx): Promise<ListDirectoryResult[]> => {
    const targets = input.path === undefined ? ctx.session.allRoots() : [ctx.session.normalize(input.path)];
    const results: ListDirectoryResult[] = [];
    for (const target of targets) results.push({ path: target.display, entries: await listTree(ctx, target, input.max_depth) });
    return results;
  },
  render: (results) => results.map(renderListing).join('\n\n'),
});
