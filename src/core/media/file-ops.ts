import { cancelled, errnoCode, fromFsError, invalidInput, refused, SandboxError } from '../errors.ts';
import type { GatedPath, ResolvedAddress, ResolveOptions } from '../paths.ts';
import type { ResolvedPinned } from '../fs/resolved-fs.ts';
import { hashBytes } from './hash.ts';
import { metaOf, metaOptions, type FileMeta } from './file-meta.ts';
import { isInWriteRoots } from './write-roots.ts';
import type { SaveContext } from './save.ts';

/* The file steps of a change set other than a write: read what a path holds, remove a file, put bytes back. */

/** A file's bytes and the mode and owner it had (what `removeFile` removed). */
export interface FileBytes {
  readonly bytes: Uint8Array;
  readonly meta: FileMeta | undefined;
  /** The later of its modification and status-change times once read (ms), where the backend has them. */
  readonly changedAt?: number;
}

/** What a path holds now: a file's bytes, or nothing. Security: a link or a folder is refused, never followed. */
export async function readDisk(
  ctx: Pick<SaveContext, 'fs' | 'signal' | 'resolve'>,
  path: GatedPath,
  verb: string,
): Promise<Uint8Array | undefined> {
  return (await readFileAt(ctx, path, verb))?.bytes;
}

/** What a path holds now: a file's bytes with its mode and owner, or nothing (as `readDisk`). */
export async function readFileAt(
  ctx: Pick<SaveContext, 'fs' | 'signal' | 'resolve'>,
  path: GatedPath,
  verb: string,
): Promise<FileBytes | undefined> {
  if (ctx.signal.aborted) throw cancelled();
  const resolved = await ctx.resolve(path, { forWrite: true });
  if (!resolved.exists) return undefined;
  const opened = await ctx.fs.open(resolved);
  try {
    const stat = opened.stat ?? (await ctx.fs.lstat(opened.address));
    if (stat.type === 'directory')
      throw invalidInput(
        `"${path.display}" is a folder; only files can be ${verb} (folders are out of scope: stage each file).`,
        `Stage the files inside it one by one (list_directory shows them).`,
      );
    if (stat.type !== 'file')
      throw refused(
        `"${path.display}" is a ${stat.type === 'symlink' ? 'symbolic link' : 'special file'}, and only regular files can be ${verb}.`,
        `Use the real file path.`,
      );
    const bytes = await ctx.fs.readFile(opened.address, ctx.signal);
    // Taken after the read: a write before it or during it shows in these times.
    const after = await ctx.fs.stat(opened.address).catch(() => undefined);
    return {
      bytes,
      meta: metaOf(stat),
      ...(after ? { changedAt: Math.max(after.mtimeMs, after.ctimeMs ?? 0) } : {}),
    };
  } catch (e) {
    throw fromFsError(e, path.display, 'read');
  } finally {
    await opened.release();
  }
}

/** The mode and owner of the file at `path` now (undefined: no file, or the backend has none), read without following a link. */
export async function metaAt(ctx: Pick<SaveContext, 'fs' | 'resolve'>, path: GatedPath): Promise<FileMeta | undefined> {
  const resolved = await ctx.resolve(path, { forWrite: true });
  if (!resolved.exists) return undefined;
  const stat = await (
    ctx.fs.capabilities.symlinks ? ctx.fs.lstat(resolved.address) : ctx.fs.stat(resolved.address)
  ).catch((e: unknown) => {
    throw fromFsError(e, path.display, 'inspect');
  });
  return stat.type === 'file' ? metaOf(stat) : undefined;
}

/** Runs `fn` on the address of `path` in its folder pinned with no link followed (created when `create`; `linkAtEnd`: `path` may be a link itself, never followed). */
export async function inPinned<T>(
  ctx: SaveContext,
  path: GatedPath,
  create: boolean,
  fn: (address: ResolvedAddress) => Promise<T>,
  options: Pick<ResolveOptions, 'linkAtEnd'> = {},
): Promise<T> {
  const resolved = await ctx.resolve(path, { forWrite: true, ...options });
  let pinned: ResolvedPinned | undefined;
  try {
    pinned = await ctx.fs.pinFolderOf(resolved, create);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ELOOP' || code === 'ENOTDIR')
      throw refused(
        `"${path.display}" was refused: a folder on its path became a symbolic link, and writes never go through links.`,
        `Check the folder, stage the file again and save.`,
      );
    throw fromFsError(e, path.display, 'open the folder of');
  }
  try {
    const name = path.rel.slice(path.rel.lastIndexOf('/') + 1);
    return await fn(pinned ? ctx.fs.join(pinned.address, name) : resolved.address);
  } finally {
    await pinned?.release();
  }
}

/**
 * Removes the file at `path` when it still holds the bytes hashed `expected`; returns them.
 * Security: in its pinned folder, never a link or a folder, never recursively.
 */
export async function removeFile(ctx: SaveContext, path: GatedPath, expected: string | undefined): Promise<FileBytes> {
  return inPinned(ctx, path, false, async (address) => {
    const stat = await (ctx.fs.capabilities.symlinks ? ctx.fs.lstat(address) : ctx.fs.stat(address)).catch(
      (e: unknown) => {
        throw fromFsError(e, path.display, 'remove');
      },
    );
    if (stat.type !== 'file')
      throw invalidInput(
        `"${path.display}" is not a file (it is a ${stat.type === 'symlink' ? 'symbolic link' : stat.type}); only files can be deleted.`,
        `Stage the files one by one.`,
      );
    const bytes = await ctx.fs.readFile(address, ctx.signal).catch((e: unknown) => {
      throw fromFsError(e, path.display, 'read');
    });
    if (expected !== undefined && hashBytes(bytes) !== expected) {
      throw refused(`"${path.display}" changed on disk since it was staged, so it was not deleted.`, `Stage it again.`);
    }
    await ctx.fs.delete(address).catch((e: unknown) => {
      throw fromFsError(e, path.display, 'remove');
    });
    return { bytes, meta: metaOf(stat) };
  });
}

/** Whether the file at `address` (never through a link) holds `expected`, compared as it is read. */
export async function holdsNow(
  ctx: Pick<SaveContext, 'fs' | 'signal'>,
  address: ResolvedAddress,
  expected: Uint8Array,
): Promise<boolean> {
  const stat = await ctx.fs.lstat(address).catch(() => undefined);
  return stat?.type === 'file' && stat.size === expected.byteLength && ctx.fs.holds(address, expected, ctx.signal);
}

/**
 * Puts `bytes` back at `path` (undefined: removes the file there), for a rollback or an undo: the
 * file must not exist when `fresh` (a deleted file recreated), and is written in place otherwise,
 * only while it holds `expected` where given (what was checked before the set began: a change made
 * since is never overwritten); either way with the mode and owner it had (`meta`, where known).
 */
export async function putBack(
  ctx: SaveContext,
  path: GatedPath,
  bytes: Uint8Array | undefined,
  fresh: boolean,
  meta: FileMeta | undefined,
  expected?: Uint8Array,
): Promise<void> {
  if (bytes === undefined) {
    await removeFile(ctx, path, undefined);
    return;
  }
  await inPinned(ctx, path, true, async (address) => {
    if (!fresh && expected !== undefined && !(await holdsNow(ctx, address, expected)))
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `"${path.display}" changed on disk after it was checked, and that change is not overwritten.`,
        '',
      );
    try {
      await ctx.fs.writeFile(address, bytes, {
        noFollow: true,
        ...(fresh ? { exclusive: true } : {}),
        ...metaOptions(meta),
      });
    } catch (e) {
      throw fromFsError(e, path.display, 'write');
    }
  });
}

/**
 * After the file at `path` was removed: removes the folders that this leaves empty (at most `limit`), innermost first,
 * below its workspace folder and inside the write roots (never a write root itself); returns them as
 * displayed ("src/legacy/"). An undo puts them back with the file. Security: each folder is removed
 * from its parent pinned with no link followed, and only while it is empty (never recursively).
 */
export async function removeEmptiedFolders(ctx: SaveContext, path: GatedPath, limit = Infinity): Promise<string[]> {
  const resolved = await ctx.resolve(path, { forWrite: true });
  const segments = path.rel.split('/');
  const shown = path.display.split('/');
  const writeRoots = ctx.saveGuard.current();
  const removed: string[] = [];
  for (let up = 1; up < segments.length && up <= limit; up++) {
    const rel = segments.slice(0, segments.length - up).join('/');
    const inside =
      writeRoots === undefined ||
      (isInWriteRoots({ ...path, rel }, writeRoots) &&
        !writeRoots.some((r) => r.root.name === path.root.name && r.rel === rel));
    if (!inside || ctx.signal.aborted) break;
    let pinned: ResolvedPinned | undefined;
    try {
      pinned = await ctx.fs.pinFolderOf(resolved, false, up);
      const folder = pinned
        ? ctx.fs.join(pinned.address, segments[segments.length - 1 - up]!)
        : ctx.fs.folderAbove(resolved, up - 1);
      if ((await ctx.fs.readDirectory(folder)).length > 0) break;
      await ctx.fs.removeEmptyFolder(folder);
    } catch {
      // A folder that changed meanwhile (a new file, a link) stays: the file's removal stands.
      break;
    } finally {
      await pinned?.release();
    }
    removed.push(`${shown.slice(0, shown.length - up).join('/')}/`);
  }
  return removed;
}
