import { lstat, readdir, rename, rm } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import * as nodePath from 'node:path';
import { errnoCode } from '../errors.ts';

/*
 * A folder a command made whole (a `node_modules`, a `dist/`): moved into the workspace by one
 * rename and taken back by one, its undo record a manifest of what it held rather than a copy of
 * every file. What identifies each entry (inode, size, modification time) changes when anything in
 * it is written, added or removed, so an undo never removes a change made since.
 */

export interface TreeStamp {
  readonly type: 'file' | 'folder' | 'link';
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export interface TreeManifest {
  readonly files: number;
  readonly bytes: number;
  /** Every entry by its path below the folder ('' is the folder itself). */
  readonly entries: ReadonlyMap<string, TreeStamp>;
}

export function treeStampOf(stat: Stats): TreeStamp | undefined {
  const type = stat.isFile() ? 'file' : stat.isDirectory() ? 'folder' : stat.isSymbolicLink() ? 'link' : undefined;
  return type === undefined ? undefined : { type, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
}

const sameStamp = (a: TreeStamp, b: TreeStamp): boolean => a.type === b.type && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

/**
 * Why the folder at `abs` is not what `manifest` says (an entry added, removed or changed; undefined:
 * it is exactly that). Walked with lstat only: no link in it is followed.
 */
export async function treeChange(abs: string, manifest: TreeManifest): Promise<string | undefined> {
  let seen = 0;
  const walk = async (rel: string): Promise<string | undefined> => {
    const stat = await lstat(rel === '' ? abs : nodePath.join(abs, ...rel.split('/'))).catch(() => undefined);
    const want = manifest.entries.get(rel);
    const shown = rel === '' ? 'the folder' : `"${rel}"`;
    if (want === undefined) return `${shown} was added`;
    const now = stat && treeStampOf(stat);
    if (now === undefined) return `${shown} is gone`;
    if (!sameStamp(now, want)) return `${shown} changed`;
    seen++;
    if (now.type !== 'folder') return undefined;
    for (const name of await readdir(rel === '' ? abs : nodePath.join(abs, ...rel.split('/')))) {
      const why = await walk(rel === '' ? name : `${rel}/${name}`);
      if (why !== undefined) return why;
    }
    return undefined;
  };
  const why = await walk('');
  if (why !== undefined) return why;
  return seen === manifest.entries.size ? undefined : `${manifest.entries.size - seen} of its entries are gone`;
}

/**
 * Moves the folder `from` to `to` (which must not exist) by one rename; false where it cannot be
 * renamed there (another filesystem, or something took its place), and nothing moved.
 */
export async function moveTree(from: string, to: string): Promise<boolean> {
  if (await lstat(to).then(() => true, (e: unknown) => errnoCode(e) !== 'ENOENT')) return false;
  try {
    await rename(from, to);
    return true;
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EXDEV' || code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR') return false;
    throw e;
  }
}

/** The hidden name beside a folder that an undo moves it to before removing it. */
export function undoneName(address: string, saveId: string): string {
  const at = address.lastIndexOf('/');
  return `${address.slice(0, at + 1)}.${address.slice(at + 1)}.undone-${saveId}`;
}

/** Removes a folder an undo moved aside (no link in it followed). */
export async function removeTree(abs: string): Promise<void> {
  await rm(abs, { recursive: true, force: true });
}
