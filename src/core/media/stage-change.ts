import { SandboxError, cancelled, fromFsError, invalidInput } from '../errors.ts';
import type { GatedPath } from '../paths.ts';
import { readDisk } from './file-ops.ts';
import type { SaveContext } from './save.ts';
import { mediaTaint, type StagedMedia } from './types.ts';

/** What staging a delete or a move is given (a tool's call context has it all). */
export type StageContext = Pick<SaveContext, 'fs' | 'signal' | 'resolve' | 'readProtection' | 'media'>;

/** A write staged: its media, and how many names the file has (hard links). */
export interface StagedWrite {
  readonly media: StagedMedia;
  readonly links: number;
}

/**
 * Stages writing `path`: its current bytes (to patch), or `content` (a new or replaced file).
 * Security: staged for writing, so a symlinked component is refused now rather than at save time.
 */
export async function stageWrite(
  ctx: StageContext,
  path: GatedPath,
  content: string | undefined,
): Promise<StagedWrite> {
  if (path.rel === '')
    throw invalidInput(`"${path.display}" is a workspace folder, not a file.`, `Give stage_file the path of a file.`);
  const resolved = await ctx.resolve(path, { forWrite: true });
  const contentBytes = content === undefined ? 0 : Buffer.byteLength(content);
  let disk: Uint8Array | undefined;
  let links = 1;
  if (resolved.exists) {
    if (ctx.signal.aborted) throw cancelled();
    const opened = await ctx.fs.open(resolved);
    try {
      const stat = opened.stat ?? (await ctx.fs.stat(opened.address));
      if (stat.type !== 'file')
        throw invalidInput(
          `"${path.display}" is a ${stat.type === 'directory' ? 'directory' : 'special file'}, not a file; only files can be staged.`,
          `Use list_directory to see what it holds.`,
        );
      ctx.media.ensureRoom(path.display, stat.size + contentBytes);
      links = stat.nlink ?? 1;
      disk = await ctx.fs.readFile(opened.address, ctx.signal);
    } catch (e) {
      throw fromFsError(e, path.display, 'read');
    } finally {
      await opened.release();
    }
  } else if (content === undefined) {
    throw new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `"${path.display}" does not exist, so there is nothing to stage. To create it, call stage_file with content (the full text of the new file).`,
      '',
    );
  }
  return { media: ctx.media.stage(path, disk, content, mediaTaint(path.display, ctx.readProtection(resolved))), links };
}

/**
 * Stages deleting the file at `path`: the media holds no bytes, its base is the disk it was staged
 * against (kept for undo). Folders are out of scope: a folder delete is not bounded or reviewable as
 * one diff, so only files can be staged for deletion (narrated E_SANDBOX_INVALID_INPUT).
 */
export async function stageDelete(ctx: StageContext, path: GatedPath): Promise<StagedMedia> {
  if (path.rel === '')
    throw invalidInput(
      `"${path.display}" is a workspace folder; only files can be staged for deletion.`,
      `Stage each file to delete with action "delete".`,
    );
  const disk = await readDisk(ctx, path, 'staged for deletion');
  if (disk === undefined)
    throw new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `"${path.display}" does not exist, so there is nothing to delete.`,
      '',
    );
  ctx.media.ensureRoom(path.display, disk.byteLength);
  const resolved = await ctx.resolve(path, { forWrite: true });
  return ctx.media.stage(path, disk, undefined, mediaTaint(path.display, ctx.readProtection(resolved)), 'model', {
    kind: 'delete',
  });
}

/**
 * Stages moving `from` to `to`, holding `content` (or `from`'s bytes). The destination must not exist
 * unless `replace` (the person is asked about replacing it); checked again when saved.
 */
export async function stageMove(
  ctx: StageContext,
  from: GatedPath,
  to: GatedPath,
  content: string | undefined,
  replace: boolean,
): Promise<StagedMedia> {
  for (const p of [from, to])
    if (p.rel === '')
      throw invalidInput(`"${p.display}" is a workspace folder; only files can be moved.`, `Give the path of a file.`);
  if (from.root.name === to.root.name && from.rel === to.rel)
    throw invalidInput(
      `A move needs two different paths; "${from.display}" was given as both.`,
      `Give the new path in to.`,
    );
  const disk = await readDisk(ctx, from, 'moved');
  if (disk === undefined)
    throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${from.display}" does not exist, so there is nothing to move.`, '');
  const there = await readDisk(ctx, to, 'replaced by a move');
  if (there !== undefined && !replace) {
    throw new SandboxError(
      'E_SANDBOX_CONFLICT',
      `"${to.display}" already exists; nothing was staged. A move replaces an existing file only with replace: true (the user is asked to confirm replacing it).`,
      `Pick another destination, or stage the move again with replace: true.`,
    );
  }
  ctx.media.ensureRoom(to.display, disk.byteLength + (content === undefined ? 0 : Buffer.byteLength(content)));
  const resolved = await ctx.resolve(from, { forWrite: true });
  return ctx.media.stage(to, disk, content, mediaTaint(from.display, ctx.readProtection(resolved)), 'model', {
    kind: 'move',
    from,
    replace: there !== undefined && replace,
  });
}

/** A file's folder, as a key: its workspace folder and relative path. */
const folderKey = (path: GatedPath): string =>
  `${path.root.name}\u0000${path.rel.slice(0, Math.max(0, path.rel.lastIndexOf('/')))}`;

/**
 * The folders that the removals staged together (deletes, and moves' sources) leave with nothing in
 * them, as displayed ("src/legacy/"): a save removes them with the files. A folder that one of the
 * changes writes into (`written`: writes, moves' destinations) is not left empty. Only the files' own
 * folders are looked at (a save also removes the parents that then hold nothing), never a workspace folder.
 */
export async function foldersLeftEmpty(
  ctx: StageContext,
  removed: readonly GatedPath[],
  written: readonly GatedPath[],
): Promise<string[]> {
  const filled = new Set(written.map(folderKey));
  const byFolder = new Map<string, { path: GatedPath; names: Set<string> }>();
  for (const path of removed) {
    const cut = path.rel.lastIndexOf('/');
    const key = folderKey(path);
    if (cut < 0 || filled.has(key)) continue;
    const entry = byFolder.get(key) ?? { path, names: new Set<string>() };
    entry.names.add(path.rel.slice(cut + 1));
    byFolder.set(key, entry);
  }
  const empty: string[] = [];
  for (const { path, names } of byFolder.values()) {
    try {
      const entries = await ctx.fs.readDirectory(ctx.fs.folderOf(await ctx.resolve(path, { forWrite: true })));
      if (entries.every((e) => names.has(e.name)))
        empty.push(`${path.display.slice(0, path.display.lastIndexOf('/'))}/`);
    } catch {
      // Unreadable now: the save looks again.
    }
  }
  return empty;
}
