import { lstat, rmdir, symlink } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { errnoCode, fromFsError, refused, SandboxError } from '../errors.ts';
import type { GatedPath } from '../paths.ts';
import type { SaveContext } from '../media/save.ts';
import { holdsNow, inPinned, readFileAt, type FileBytes } from '../media/file-ops.ts';
import { entryStampOf, type EntryStamp } from '../media/tree.ts';
import type { LayerEntry } from './upper.ts';

/*
 * The steps that put one change of a command's change set on disk, each through the save's checks
 * (no link followed, the folder pinned) and only while the place is as the command saw it.
 */

/**
 * What the file where a change lands holds, while it is as the command saw it (`entry.below`: no
 * file, or a file of that size not changed since); else a narrated conflict. A new file below what is
 * a file now (`rm f; mkdir f; echo > f/x`) finds nothing: the set removes `f` first.
 */
export async function asSeen(
  ctx: SaveContext,
  at: GatedPath,
  entry: LayerEntry & { readonly kind: 'file' | 'delete' },
): Promise<FileBytes | undefined> {
  const before = await readFileAt(ctx, at, entry.kind === 'file' ? 'written' : 'deleted').catch((e: unknown) => {
    if (entry.below.type === 'none' && e instanceof SandboxError && e.code === 'E_SANDBOX_NOT_FOUND') return undefined;
    throw e;
  });
  const { below } = entry;
  const seen =
    below.type === 'file'
      ? before === undefined
        ? entry.kind === 'delete'
        : before.bytes.byteLength === below.size &&
          (before.changedAt === undefined || before.changedAt === below.changedAt)
      : before === undefined;
  if (!seen) throw changedMeanwhile(at);
  return before;
}

const changedMeanwhile = (path: GatedPath): SandboxError =>
  new SandboxError(
    'E_SANDBOX_CONFLICT',
    `"${path.display}" changed on disk while the command's changes were landing: yours is kept, and the command's version is staged for review`,
    '',
  );

/**
 * Writes bytes at `path` with the mode the command gave the file, only while it holds `expected`
 * (undefined: while there is no file): an edit made since the journal read it is never overwritten.
 * Never through a link, its folder pinned (made where missing).
 */
export async function writeInPlace(
  ctx: SaveContext,
  path: GatedPath,
  expected: Uint8Array | undefined,
  bytes: Uint8Array,
  mode: number,
): Promise<void> {
  await inPinned(ctx, path, true, async (address) => {
    if (expected !== undefined && !(await holdsNow(ctx, address, expected))) throw changedMeanwhile(path);
    try {
      await ctx.fs.writeFile(address, bytes, { noFollow: true, exclusive: expected === undefined, mode: mode & 0o777 });
    } catch (e) {
      if (expected === undefined && errnoCode(e) === 'EEXIST') throw changedMeanwhile(path);
      throw fromFsError(e, path.display, 'write');
    }
  });
}

/** Removes the file at `path` only while it holds `expected`; never a link or a folder, its folder pinned. */
export async function removeInPlace(ctx: SaveContext, path: GatedPath, expected: Uint8Array): Promise<void> {
  await inPinned(ctx, path, false, async (address) => {
    if (!(await holdsNow(ctx, address, expected))) throw changedMeanwhile(path);
    await ctx.fs.delete(address).catch((e: unknown) => {
      throw fromFsError(e, path.display, 'remove');
    });
  });
}

/** Makes the folder where there is none; whether it made it. */
export async function makeFolder(ctx: SaveContext, path: GatedPath): Promise<boolean> {
  const resolved = await ctx.resolve(path, { forWrite: true });
  if (resolved.exists) {
    if (resolved.checked?.type !== 'directory')
      throw refused(`"${path.display}" exists and is not a folder.`, 'Look at it.');
    return false;
  }
  await inPinned(ctx, path, true, (address) => ctx.fs.mkdir(address));
  return true;
}

/** The local path of `path`, when no link lies on the way to it (else a narrated refusal). */
async function localOf(
  ctx: SaveContext,
  path: GatedPath,
): Promise<{ readonly abs: string; readonly exists: boolean; readonly type: string | undefined }> {
  const resolved = await ctx.resolve(path, { forWrite: true });
  const root = resolved.realRoot ?? path.root.localPath;
  if (root === undefined || resolved.realRel !== path.rel)
    throw refused(
      `"${path.display}" lies behind a symbolic link now, and a change set never goes through links.`,
      'Look at the folder.',
    );
  return { abs: nodePath.join(root, ...path.rel.split('/')), exists: resolved.exists, type: resolved.checked?.type };
}

export async function removeFolderIfEmpty(ctx: SaveContext, path: GatedPath): Promise<void> {
  const { abs, exists, type } = await localOf(ctx, path);
  if (!exists || type !== 'directory') return;
  try {
    await rmdir(abs);
  } catch (e) {
    // Something the change set did not remove is still in it (the person's file, a held change).
    if (errnoCode(e) !== 'ENOTEMPTY' && errnoCode(e) !== 'EEXIST') throw e;
  }
}

/** Makes the link; what identifies it as made (an undo removes it only while it is this link). */
export async function makeLink(ctx: SaveContext, path: GatedPath, target: string): Promise<EntryStamp> {
  const { abs, exists } = await localOf(ctx, path);
  if (exists) throw refused(`"${path.display}" exists, and a link is not made over it.`, 'Look at it.');
  await symlink(target, abs);
  return entryStampOf(await lstat(abs));
}
