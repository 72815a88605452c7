import { lstat, rename, rm } from 'node:fs/promises';
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import { errnoCode } from '../errors.ts';
import { turnsEvery } from '../turns.ts';

/*
 * A folder a command made whole (a `node_modules`, a `dist/`): moved into the workspace by one
 * rename and taken back by one, its undo record a manifest of what it held rather than a copy of
 * every file. What identifies each entry (inode, size, modification time) changes when anything in
 * it is written, added or removed, so an undo never removes a change made since.
 */

/** What identifies an entry as it was left: a later change to it changes one of these. */
export interface EntryStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export interface TreeStamp extends EntryStamp {
  readonly type: 'file' | 'folder' | 'link';
}

export interface TreeManifest {
  readonly files: number;
  readonly bytes: number;
  /** Every entry by its path below the folder ('' is the folder itself). */
  readonly entries: ReadonlyMap<string, TreeStamp>;
}

/** A manifest of one symbolic link ('' a link): a link a command made, which an undo removes while it is that link. */
export const linkManifest = (stamp: EntryStamp): TreeManifest => ({
  files: 0,
  bytes: 0,
  entries: new Map([['', { type: 'link', ...stamp }]]),
});

/** What a manifest's record made, in a word: a folder, or a symbolic link. */
export const madeThing = (manifest: TreeManifest): 'folder' | 'symbolic link' =>
  manifest.entries.get('')?.type === 'link' ? 'symbolic link' : 'folder';

export const entryStampOf = (stat: Stats): EntryStamp => ({ ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs });

export function treeStampOf(stat: Stats): TreeStamp | undefined {
  const type = stat.isFile() ? 'file' : stat.isDirectory() ? 'folder' : stat.isSymbolicLink() ? 'link' : undefined;
  return type === undefined ? undefined : { type, ...entryStampOf(stat) };
}

/**
 * Why the folder at `abs` is not what `manifest` says (an entry added, removed, or of another type;
 * with `stamps`, also changed: another inode, size or time; undefined: it is exactly that). Read
 * without following a link. The calls are synchronous (a thread-pool round trip for each of tens of
 * thousands of entries took seconds), the event loop given its turn every 500 entries.
 */
export async function treeChange(abs: string, manifest: TreeManifest, stamps = true): Promise<string | undefined> {
  let seen = 0;
  const turn = turnsEvery(500);
  const shown = (rel: string): string => (rel === '' ? 'the folder' : `"${rel}"`);
  const check = (
    rel: string,
    type: TreeStamp['type'] | undefined,
    stat: () => Stats | undefined,
  ): string | undefined => {
    const want = manifest.entries.get(rel);
    if (want === undefined) return `${shown(rel)} was added`;
    if (type !== want.type) return type === undefined ? `${shown(rel)} is gone` : `${shown(rel)} changed`;
    const now = stamps ? stat() : undefined;
    if (stamps && (now === undefined || now.ino !== want.ino || now.size !== want.size || now.mtimeMs !== want.mtimeMs))
      return `${shown(rel)} changed`;
    seen++;
    return undefined;
  };
  const walk = async (rel: string, path: string): Promise<string | undefined> => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      await turn();
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const childPath = `${path}${nodePath.sep}${entry.name}`;
      const type = entry.isFile()
        ? 'file'
        : entry.isDirectory()
          ? 'folder'
          : entry.isSymbolicLink()
            ? 'link'
            : undefined;
      const why =
        check(childRel, type, () => lstatSync(childPath, { throwIfNoEntry: false })) ??
        (type === 'folder' ? await walk(childRel, childPath) : undefined);
      if (why !== undefined) return why;
    }
    return undefined;
  };
  const top = lstatSync(abs, { throwIfNoEntry: false });
  const why =
    check('', top && treeStampOf(top)?.type, () => top) ?? (top?.isDirectory() ? await walk('', abs) : undefined);
  if (why !== undefined) return why;
  return seen === manifest.entries.size ? undefined : `${manifest.entries.size - seen} of its entries are gone`;
}

/**
 * Moves the folder `from` to `to` (which must not exist) by one rename; false where it cannot be
 * renamed there (another filesystem, or something took its place), and nothing moved.
 */
export async function moveTree(from: string, to: string): Promise<boolean> {
  if (
    await lstat(to).then(
      () => true,
      (e: unknown) => errnoCode(e) !== 'ENOENT',
    )
  )
    return false;
  try {
    await rename(from, to);
    return true;
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EXDEV' || code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR')
      return false;
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
