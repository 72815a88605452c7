import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { chmodSync, constants, lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { mergedNames, type LayerFolder } from './layer.ts';
import { entryStampOf, type EntryStamp } from '../media/tree.ts';
import { turnsEvery } from '../turns.ts';

/** What a path held on disk (the layer's lower side) when the command ended. */
export interface Below {
  readonly type: 'file' | 'folder' | 'link' | 'special' | 'none';
  readonly mode?: number;
  /** A file's size in bytes. */
  readonly size?: number;
  /** The later of its modification and status-change times (ms): later than the command's start, the file changed under it. */
  readonly changedAt?: number;
}

/** One change a command made in a folder, read from the upper layer (never through a link). */
export type LayerEntry =
  /** Bytes written (new or changed file), in the upper layer at `from`. */
  | {
      readonly kind: 'file';
      readonly rel: string;
      readonly from: string;
      readonly size: number;
      readonly mode: number;
      readonly below: Below;
      readonly stamp: EntryStamp;
    }
  /** The file (or link) at `rel` was removed. */
  | { readonly kind: 'delete'; readonly rel: string; readonly below: Below }
  /** A folder that was on disk is gone (its files are `delete` entries of their own). */
  | { readonly kind: 'rmdir'; readonly rel: string }
  /** A folder made where none was, in the upper layer at `from`. */
  | {
      readonly kind: 'mkdir';
      readonly rel: string;
      readonly from: string;
      readonly mode: number;
      readonly stamp: EntryStamp;
    }
  /** A symbolic link made or changed. */
  | {
      readonly kind: 'link';
      readonly rel: string;
      readonly target: string;
      readonly below: Below;
      readonly stamp: EntryStamp;
    }
  /** A pipe, socket or device, or an entry whose name is not UTF-8 (`rel` shows it escaped): never applied. */
  | { readonly kind: 'special'; readonly rel: string; readonly below: Below; readonly nameNotUtf8?: true };

const join = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

/** A name's printable ASCII as it is, its other bytes as `\xNN`. */
export const escapedName = (name: Uint8Array): string =>
  [...name]
    .map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`))
    .join('');
/** `rel` ("/"-separated) below an absolute folder; the layer exists on Linux only, where "/" is the separator. */
const under = (folder: string, rel: string): string => (rel === '' ? folder : `${folder}/${rel}`);

// The walks below call the file system synchronously, the event loop given its turn every 500 entries.
const turn = turnsEvery(500);

function entryAt(abs: string): Stats | undefined {
  return lstatSync(abs, { throwIfNoEntry: false });
}

function belowOf(stat: Stats | undefined): Below {
  if (stat === undefined) return { type: 'none' };
  const type = stat.isFile() ? 'file' : stat.isDirectory() ? 'folder' : stat.isSymbolicLink() ? 'link' : 'special';
  return {
    type,
    mode: stat.mode & 0o7777,
    ...(type === 'file' ? { size: stat.size } : {}),
    changedAt: Math.max(stat.mtimeMs, stat.ctimeMs),
  };
}

/**
 * The upper layer is ours, but the command chose its modes (`chmod 311 .` copies the folder up
 * unreadable): what it holds is made readable to us before it is read; the mode the command gave a
 * file was taken before (`LayerEntry.mode`).
 */
function readable(path: string, stat: Stats): void {
  const needed = stat.isDirectory() ? 0o700 : 0o600;
  if ((stat.mode & needed) !== needed) chmodSync(path, (stat.mode & 0o7777) | needed);
}

/** Whether two files of `size` bytes hold the same bytes (read side by side in chunks, never through a link). */
async function sameBytes(a: string, b: string, size: number): Promise<boolean> {
  const opened = await Promise.allSettled([
    open(a, constants.O_RDONLY | constants.O_NOFOLLOW),
    open(b, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK),
  ]);
  const [fa, fb] = opened.map((o) => (o.status === 'fulfilled' ? o.value : undefined));
  if (fa === undefined || fb === undefined) {
    await fa?.close();
    await fb?.close();
    return false;
  }
  try {
    // Only what each read fills is compared: no need to zero them, nor to make them larger than the files.
    const chunk = Math.min(1 << 16, size + 1);
    const [ba, bb] = [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)];
    for (let at = 0; ; at += ba.length) {
      const [ra, rb] = await Promise.all([fa.read(ba, 0, ba.length, at), fb.read(bb, 0, bb.length, at)]);
      if (ra.bytesRead !== rb.bytesRead || !ba.subarray(0, ra.bytesRead).equals(bb.subarray(0, rb.bytesRead)))
        return false;
      if (ra.bytesRead === 0) return true;
    }
  } finally {
    await fa.close();
    await fb.close();
  }
}

const isWhiteout = (stat: Stats): boolean => stat.isCharacterDevice() && stat.rdev === 0;

/** Every file, link and folder below a folder on disk, deepest first, for a removal of the folder; links are not followed. */
async function removalOf(lowerRoot: string, rel: string, out: LayerEntry[]): Promise<void> {
  const abs = under(lowerRoot, rel);
  let names: string[];
  try {
    names = readdirSync(abs);
  } catch {
    names = [];
  }
  for (const name of names) {
    await turn();
    const child = join(rel, name);
    const stat = entryAt(under(lowerRoot, child));
    if (stat === undefined) continue;
    if (stat.isDirectory()) await removalOf(lowerRoot, child, out);
    else out.push({ kind: 'delete', rel: child, below: belowOf(stat) });
  }
  out.push({ kind: 'rmdir', rel });
}

/**
 * The change set a command left in one folder's upper layer: what it wrote, removed, linked and made.
 * The upper layer is ours (the command has ended and everything it started with it), and it is
 * walked with lstat only, so no link in it is followed. Removals come first (deepest first), so
 * applying the entries in order can replace a folder with a file and a file with a folder.
 */
export async function readUpper(folder: LayerFolder): Promise<LayerEntry[]> {
  const removals: LayerEntry[] = [];
  const made: LayerEntry[] = [];
  /** Folders of the upper layer that were folders on disk too: they may hide what they replaced (opaque). */
  const sharedFolders: string[] = [];
  /** `lowerFolder`: the folder is on disk too (below a folder made by the command, nothing is). */
  const walk = async (rel: string, lowerFolder: boolean, folderStat: Stats): Promise<void> => {
    readable(under(folder.upper, rel), folderStat);
    const names: string[] = [];
    for (const raw of readdirSync(under(folder.upper, rel), { encoding: 'buffer' })) {
      // A name that is not UTF-8 cannot be judged by the rules, nor reached by its decoded name: held, with all it holds.
      if (isUtf8(raw)) names.push(raw.toString('utf8'));
      else made.push({ kind: 'special', rel: join(rel, escapedName(raw)), below: { type: 'none' }, nameNotUtf8: true });
    }
    for (const name of names.sort()) {
      await turn();
      const child = join(rel, name);
      const at = under(folder.upper, child);
      const stat = lstatSync(at);
      if (stat.isFile()) readable(at, stat);
      const belowStat = lowerFolder ? entryAt(under(folder.lower, child)) : undefined;
      const below = belowOf(belowStat);
      if (isWhiteout(stat)) {
        if (below.type === 'folder') await removalOf(folder.lower, child, removals);
        else if (below.type !== 'none') removals.push({ kind: 'delete', rel: child, below });
        continue;
      }
      // Anything but a folder in the upper layer hides a folder below it whole.
      if (!stat.isDirectory() && below.type === 'folder') await removalOf(folder.lower, child, removals);
      if (stat.isDirectory()) {
        if (below.type === 'folder') sharedFolders.push(child);
        else {
          if (below.type !== 'none') removals.push({ kind: 'delete', rel: child, below });
          made.push({
            kind: 'mkdir',
            rel: child,
            from: at,
            mode: stat.mode & 0o7777,
            stamp: entryStampOf(stat),
          });
        }
        await walk(child, below.type === 'folder', stat);
      } else if (stat.isFile()) {
        // Copied up but not changed (a touch, a hard link made to it, a chmod to the same mode): nothing to apply.
        if (
          below.type === 'file' &&
          below.mode === (stat.mode & 0o7777) &&
          belowStat?.size === stat.size &&
          (await sameBytes(at, under(folder.lower, child), stat.size))
        )
          continue;
        made.push({
          kind: 'file',
          rel: child,
          from: at,
          size: stat.size,
          mode: stat.mode & 0o7777,
          below: below.type === 'folder' ? { type: 'none' } : below,
          stamp: entryStampOf(stat),
        });
      } else if (stat.isSymbolicLink()) {
        made.push({
          kind: 'link',
          rel: child,
          target: readlinkSync(at),
          below: below.type === 'folder' ? { type: 'none' } : below,
          stamp: entryStampOf(stat),
        });
      } else {
        made.push({ kind: 'special', rel: child, below });
      }
    }
  };
  await walk('', true, lstatSync(folder.upper));
  await hiddenBelow(folder, sharedFolders, removals);
  return [...removals, ...made];
}

/**
 * What folders removed and made again hid of the disk below them (overlayfs marks such a folder
 * opaque): each name on disk that the command's own view of the folder no longer has is removed.
 */
async function hiddenBelow(folder: LayerFolder, shared: readonly string[], removals: LayerEntry[]): Promise<void> {
  const candidates: { dir: string; lower: string[] }[] = [];
  for (const dir of shared) {
    const upperNames = new Set(readdirSync(under(folder.upper, dir)));
    const lower = (() => {
      try {
        return readdirSync(under(folder.lower, dir));
      } catch {
        return [];
      }
    })().filter((n) => !upperNames.has(n));
    if (lower.length > 0) candidates.push({ dir, lower });
  }
  if (candidates.length === 0) return;
  const merged = await mergedNames(
    folder,
    candidates.map((c) => c.dir),
  );
  for (const { dir, lower } of candidates) {
    const seen = merged.get(`./${dir}`) ?? merged.get(dir);
    if (seen === undefined) continue;
    for (const name of lower) {
      if (seen.has(name)) continue;
      const child = join(dir, name);
      const stat = entryAt(under(folder.lower, child));
      if (stat?.isDirectory()) await removalOf(folder.lower, child, removals);
      else if (stat !== undefined) removals.push({ kind: 'delete', rel: child, below: belowOf(stat) });
    }
  }
}
