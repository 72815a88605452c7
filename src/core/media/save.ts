import { SandboxError, cancelled, fromFsError, invalidInput, refused, errnoCode } from '../errors.ts';
import type { GatedPath, ModelPath, ResolvedAddress, ResolvedPath, ResolveOptions } from '../paths.ts';
import type { Clock, FileStat, WriteOptions } from '../ports.ts';
import type { ResolvedFs, ResolvedPinned } from '../fs/resolved-fs.ts';
import type { ReadProtection } from '../gate.ts';
import type { MediaStore } from './store.ts';
import type { SaveGuard } from './save-guard.ts';
import { lineCounts, type LineCounts } from '../text/line-counts.ts';
import { diskText, textOf } from './lineage.ts';
import { sameBytes } from '../text/bytes.ts';
import { pathKey, type PersonChange, type StagedMedia } from './types.ts';
import type { FileIdentity } from './history.ts';
import { metaOf, metaOptions, type FileMeta } from './file-meta.ts';
import { removeStaleTemps, STALE_TEMP_MS, tempName } from './save-temps.ts';

/** How the bytes reached the file. */
export type WriteMethod = 'rename' | 'direct';

export interface SaveOutcome extends LineCounts {
  readonly mediaId: string;
  readonly path: ModelPath;
  readonly bytes: number;
  /** The file did not exist before. */
  readonly created: boolean;
  readonly method: WriteMethod;
  /** Why the bytes were written in place rather than through a temp file and a rename. */
  readonly inPlaceBecause: string | undefined;
  /** Unsaved media of the same file that now conflict with disk. */
  readonly stale: readonly string[];
  /** Media derived from the saved one, still saveable. */
  readonly rebased: readonly string[];
  /** The person's edit included in what was saved, if any. */
  readonly personChange: PersonChange | undefined;
  /** What the file held before (undefined: it did not exist), and what was written: for undo. */
  readonly replaced: Uint8Array | undefined;
  /** The mode and owner of the file it replaced, where known: an undo gives them back. */
  readonly replacedMeta: FileMeta | undefined;
  readonly written: Uint8Array;
  /** The file a save created, as written (device and inode), where the backend has them. */
  readonly file: FileIdentity | undefined;
}

/** Rename errors after which a direct write may still work (other device, uid-mismatched mounts). */
const RENAME_FALLBACK = new Set(['EXDEV', 'EPERM', 'NoPermissions']);
/** Temp-file errors after which a direct write may still work (a folder we may not create files in). */
const TEMP_FALLBACK = new Set(['EACCES', 'EPERM', 'NoPermissions']);

function conflict(what: string, next: string): SandboxError {
  return new SandboxError('E_SANDBOX_CONFLICT', what, next);
}

function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function removeQuietly(fs: ResolvedFs, address: ResolvedAddress): Promise<void> {
  try {
    await fs.delete(address);
  } catch {
    /* best effort: the temp file has a recognisable name */
  }
}

interface WriteTarget {
  readonly fs: ResolvedFs;
  readonly folder: ResolvedAddress;
  readonly name: string;
  readonly address: ResolvedAddress;
  readonly display: string;
  /** The file being replaced (undefined for a new file). */
  readonly stat: FileStat | undefined;
  /** The mode and owner the file gets instead of the replaced one's: a moved file keeps its source's. */
  readonly carried: FileMeta | undefined;
  readonly signal: AbortSignal;
  readonly now: number;
}

interface Written {
  readonly method: WriteMethod;
  readonly inPlaceBecause: string | undefined;
}

/**
 * Security: the permission bits (and owner, where the process may set it) a save gives the file: the
 * original's (a moved file's source's), less setuid and setgid (new bytes must not run with another's
 * rights). A private file stays private when it is moved.
 */
function finalMeta(t: WriteTarget): Pick<WriteOptions, 'mode' | 'owner'> {
  return metaOptions(t.carried ?? metaOf(t.stat));
}

/**
 * Why a rename would change more than the bytes: it replaces the file with a new one, which splits
 * hard links (the other names keep the old bytes) and belongs to whoever saves it.
 */
function renameSideEffect(t: WriteTarget): string | undefined {
  const s = t.stat;
  if (s === undefined) return undefined;
  if ((s.nlink ?? 1) > 1) return `the file has ${s.nlink} names (hard links), which a rename would split`;
  const uid = process.geteuid?.();
  const gid = process.getegid?.();
  if (s.uid !== undefined && uid !== undefined && (s.uid !== uid || s.gid !== gid))
    return `the file belongs to another owner or group (${s.uid}:${s.gid}), which a rename would change`;
  return undefined;
}

async function writeDirect(t: WriteTarget, data: Uint8Array, replacing: boolean, because: string): Promise<Written> {
  try {
    // Security: in place through no link (the final component was checked link-free; it must not become one now).
    await t.fs.writeFile(t.address, data, { noFollow: true, ...finalMeta(t) });
  } catch (e) {
    const code = errnoCode(e);
    if (replacing && (code === 'ENOSPC' || code === 'EDQUOT')) {
      throw new SandboxError(
        'E_SANDBOX_IO',
        `The disk is full while writing "${t.display}" in place (this filesystem does not allow a temp-file save), so the file may be incomplete.`,
        `Ask the user to free space and check the file, then stage it again.`,
        { cause: e },
      );
    }
    throw fromFsError(e, t.display, 'save');
  }
  return { method: 'direct', inPlaceBecause: because };
}

/**
 * Writes `data` to the target through a temp file in the same folder and a rename, so a failure at
 * any step leaves the original intact. Writes in place (after the conflict check) where a rename
 * would change more than the bytes (hard links, owner), and where the backend has no atomic rename
 * or refuses it (other device, a folder we may not create files in).
 */
async function writeSafely(t: WriteTarget, data: Uint8Array, replacing: boolean): Promise<Written> {
  if (!t.fs.capabilities.atomicRename) return writeDirect(t, data, replacing, 'this filesystem has no atomic rename');
  const sideEffect = renameSideEffect(t);
  if (sideEffect !== undefined) return writeDirect(t, data, replacing, sideEffect);
  await removeStaleTemps(t.fs, t.folder, t.name, (mtimeMs) => t.now - mtimeMs > STALE_TEMP_MS);
  const temp = t.fs.join(t.folder, tempName(t.name));
  try {
    // Security: created exclusively (nothing planted there is written through) with the final mode
    // from the start, so no other user can read the new bytes of a private file meanwhile.
    await t.fs.writeFile(temp, data, { exclusive: true, noFollow: true, ...finalMeta(t) });
  } catch (e) {
    await removeQuietly(t.fs, temp);
    if (TEMP_FALLBACK.has(errnoCode(e)))
      return writeDirect(t, data, replacing, `a temp file could not be created in the folder (${errnoCode(e)})`);
    throw fromFsError(e, t.display, 'save');
  }
  if (t.signal.aborted) {
    await removeQuietly(t.fs, temp);
    throw cancelled();
  }
  try {
    await t.fs.rename(temp, t.address);
  } catch (e) {
    await removeQuietly(t.fs, temp);
    if (RENAME_FALLBACK.has(errnoCode(e)))
      return writeDirect(t, data, replacing, `the rename was refused (${errnoCode(e)})`);
    throw new SandboxError(
      'E_SANDBOX_IO',
      `Could not save "${t.display}": moving the written temp file into place failed (${reasonOf(e)}), so the file on disk is unchanged.`,
      `Retry once; if it fails again, tell the user.`,
      { cause: e },
    );
  }
  return { method: 'rename', inPlaceBecause: undefined };
}

/**
 * The commit step of save_media: write roots, the gated translation (which refuses any symlinked
 * component for a write), the conflict check against the disk the media was staged from, then a
 * safe write to the call's gated `target` (the media's own path, or where it is saved as a new file).
 * Reaches disk only through `ctx.resolve` and the call's fs.
 */
export async function commitMedia(
  ctx: SaveContext,
  mediaId: string,
  target: GatedPath,
  expect?: Expectation,
  carried?: FileMeta,
): Promise<SaveOutcome> {
  const store = ctx.media;
  const media: StagedMedia = store.get(mediaId);
  const samePath = pathKey(target) === pathKey(media.path);
  if (target.rel === '')
    throw invalidInput(
      `"${target.display}" is a workspace folder, not a file.`,
      `Give save_media the path of a file to write.`,
    );
  ctx.saveGuard.checkWriteRoot(target);
  return ctx.saveGuard.exclusive(target, () => checkAndWrite(ctx, media, target, samePath, { expect, carried }));
}

/**
 * What the target must hold for the write to go ahead, when not the media's base (a move's
 * destination): `absent`, nothing; `any`, a file the person agreed to replace, or nothing.
 */
export type Expectation = 'absent' | 'any';

/** What a save is given (plain values; a tool's call context has them all): the media store, the call's fs, path checks and the clock. */
export interface SaveContext {
  readonly media: MediaStore;
  readonly saveGuard: SaveGuard;
  readonly fs: ResolvedFs;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  resolve(path: GatedPath, options?: ResolveOptions): Promise<ResolvedPath>;
  readProtection(resolved: ResolvedPath): ReadProtection | undefined;
}

/** How a write is checked and what it carries: what the target must hold (`Expectation`), and a move's source's mode and owner. */
interface WriteTerms {
  readonly expect: Expectation | undefined;
  readonly carried: FileMeta | undefined;
}

async function checkAndWrite(
  ctx: SaveContext,
  media: StagedMedia,
  target: GatedPath,
  samePath: boolean,
  terms: WriteTerms,
): Promise<SaveOutcome> {
  const fs = ctx.fs;
  const resolved = await ctx.resolve(target, { forWrite: true });
  const segments = target.rel.split('/');
  const name = segments[segments.length - 1]!;
  // Security: pin the folder (no link followed, missing folders created) so that the checks below and
  // the write name the same folder even if a component is swapped for a link in between.
  let pinned: ResolvedPinned | undefined;
  try {
    pinned = await fs.pinFolderOf(resolved, !resolved.exists);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ELOOP' || code === 'ENOTDIR')
      throw refused(
        `"${target.display}" was refused: a folder on its path became a symbolic link while saving, and writes never go through links.`,
        `Check the folder, stage the file again and save.`,
      );
    throw fromFsError(e, target.display, 'open the folder of');
  }
  try {
    const folder = pinned?.address ?? fs.folderOf(resolved);
    const address = pinned ? fs.join(pinned.address, name) : resolved.address;
    return await checkAndWriteIn(ctx, media, target, samePath, terms, {
      folder,
      address,
      name,
      exists: resolved.exists,
      pinned: pinned !== undefined,
    });
  } finally {
    await pinned?.release();
  }
}

interface Placement {
  readonly folder: ResolvedAddress;
  readonly address: ResolvedAddress;
  readonly name: string;
  readonly exists: boolean;
  /** The folder was pinned and already created. */
  readonly pinned: boolean;
}

async function checkAndWriteIn(
  ctx: SaveContext,
  media: StagedMedia,
  target: ModelPath,
  samePath: boolean,
  terms: WriteTerms,
  place: Placement,
): Promise<SaveOutcome> {
  const { expect, carried } = terms;
  const store = ctx.media;
  const fs = ctx.fs;
  if (ctx.signal.aborted) throw cancelled();
  let stat: FileStat | undefined;
  try {
    stat = fs.capabilities.symlinks ? await fs.lstat(place.address) : await fs.stat(place.address);
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT' && errnoCode(e) !== 'FileNotFound') throw fromFsError(e, target.display, 'read');
  }
  // Security: never overwrite bytes the model has not seen. The disk must still be what the media was staged from
  // (`base`, compared byte for byte, not hashed; undefined: no file). A move's destination: 'any', whatever it holds now; 'absent', none.
  const base = expect === undefined && !media.isNew ? media.base.bytes : undefined;
  if (stat !== undefined) {
    if (stat.type === 'symlink')
      throw refused(
        `"${target.display}" was refused: it is a symbolic link, and writes never go through links.`,
        `Write to the real file path instead.`,
      );
    if (stat.type !== 'file')
      throw invalidInput(
        `"${target.display}" is a ${stat.type === 'directory' ? 'directory' : 'special file'}, not a file; save_media cannot replace it.`,
        `Save to a file path instead.`,
      );
  }
  const staleNote = media.stale?.kind === 'saved' ? ` (media ${media.stale.by} was saved to it since)` : '';
  if (samePath && stat !== undefined && base === undefined && expect !== 'any') {
    throw conflict(
      `"${target.display}" did not exist when ${media.id} was staged, but it exists now${staleNote}; saving would overwrite it.`,
      `Stage it again with stage_file to see its content, re-apply your change, and save the new media.`,
    );
  }
  if (samePath && stat === undefined && base !== undefined) {
    throw conflict(
      `"${target.display}" was deleted after ${media.id} was staged; saving would recreate it. If it should exist again, stage it with stage_file and content, then save that media.`,
      '',
    );
  }
  if (!samePath && stat !== undefined) {
    throw conflict(
      `"${target.display}" already exists, and save_media writes ${media.id} (staged for "${media.path.display}") to another path only as a new file. To replace "${target.display}", stage it with stage_file and content, then save that media.`,
      '',
    );
  }
  // What the file holds now: its base, compared in chunks as it is read (a second copy of a large file in fresh memory costs
  // more than the read), or read whole where the person agreed to replace whatever is there.
  let disk: Uint8Array | undefined;
  if (stat !== undefined) {
    try {
      disk =
        base === undefined
          ? await fs.readFile(place.address, ctx.signal)
          : stat.size === base.byteLength && (await fs.holds(place.address, base, ctx.signal))
            ? base
            : undefined;
    } catch (e) {
      throw fromFsError(e, target.display, 'read');
    }
    if (disk === undefined)
      throw conflict(
        `"${target.display}" changed on disk after ${media.id} was staged${staleNote}; saving would overwrite that change.`,
        `Stage the file again with stage_file, re-apply your edits to the new media, and save it.`,
      );
  }

  if (ctx.signal.aborted) throw cancelled();
  if (disk === undefined && !place.pinned && target.rel.includes('/')) {
    // The existing part of this chain was just checked link-free by ctx.resolve; mkdir creates the rest.
    try {
      await fs.mkdir(place.folder);
    } catch (e) {
      throw fromFsError(e, target.display, 'create the folder of');
    }
  }
  const written = await writeSafely(
    {
      fs,
      folder: place.folder,
      name: place.name,
      address: place.address,
      display: target.display,
      stat,
      carried,
      signal: ctx.signal,
      now: ctx.clock.now(),
    },
    media.bytes,
    disk !== undefined,
  );
  const file = disk === undefined ? await identityOf(fs, place.address) : undefined;

  const counts = savedCounts(store, media, disk);
  const personChange = store.personChange(media.id);
  // The person may have discarded the media while it was being written; the file is written all the same.
  const effects = store.find(media.id) ? store.markSaved(media.id, target, media.bytes) : { stale: [], rebased: [] };
  return {
    mediaId: media.id,
    path: target,
    bytes: media.bytes.byteLength,
    ...counts,
    created: disk === undefined,
    method: written.method,
    inPlaceBecause: written.inPlaceBecause,
    stale: effects.stale,
    rebased: effects.rebased,
    personChange,
    replaced: disk,
    replacedMeta: disk === undefined ? undefined : metaOf(stat),
    written: media.bytes,
    file,
  };
}

/** `+added −removed` from what the disk held to what was written: the media's own counts when the disk held its base (known, not diffed again). */
function savedCounts(store: SaveContext['media'], media: StagedMedia, disk: Uint8Array | undefined): LineCounts {
  if (disk === undefined ? media.isNew : sameBytes(disk, media.base.bytes)) return store.changes(media.id);
  const before = disk === undefined ? '' : diskText(disk, media);
  const after = media.encoding === 'binary' ? undefined : textOf(media.bytes, media.encoding);
  return before === undefined || after === undefined ? { added: 0, removed: 0 } : lineCounts(before, after);
}

/** The device and inode of the file just written (in the pinned folder, no link followed); undefined where the backend has none. */
async function identityOf(fs: ResolvedFs, address: ResolvedAddress): Promise<FileIdentity | undefined> {
  const stat = fs.capabilities.symlinks ? await fs.lstat(address).catch(() => undefined) : undefined;
  return stat?.dev !== undefined && stat.ino !== undefined && stat.type === 'file'
    ? { dev: stat.dev, ino: stat.ino }
    : undefined;
}
