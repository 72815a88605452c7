import { SandboxError, cancelled, errnoCode, fromFsError, invalidInput, refused } from '../errors.ts';
import type { GatedPath, ResolvedPath } from '../paths.ts';
import type { Log } from '../ports.ts';
import type { OpenEditors } from './editors.ts';
import { refuseUnsavedEditor } from './editors.ts';
import type { SaveHistory, SaveRecord } from './history.ts';
import type { SetJournal } from './journal.ts';
import { commitMedia, type SaveContext, type SaveOutcome } from './save.ts';
import { hashBytes } from './hash.ts';
import { mediaTaint } from './types.ts';

/** Keeps what a save replaced, for undo. Failing to keep it never fails the save: the log says why. */
export async function recordSave(
  services: { readonly saves: SaveHistory; readonly log: Log },
  outcome: SaveOutcome,
): Promise<SaveRecord | undefined> {
  try {
    return await services.saves.record({
      path: outcome.path,
      mediaId: outcome.mediaId,
      replaced: outcome.replaced,
      replacedMeta: outcome.replacedMeta,
      written: outcome.written,
      file: outcome.file,
      added: outcome.added,
      removed: outcome.removed,
    });
  } catch (e) {
    services.log.warn(
      `The save of "${outcome.path.display}" cannot be undone: its previous bytes could not be kept (${e instanceof Error ? e.message : String(e)}).`,
    );
    return undefined;
  }
}

export type UndoAction =
  /** The file holds its previous bytes again. */
  | { readonly kind: 'restored'; readonly saveId: string | undefined; readonly bytes: number }
  /** The file the save created is gone. */
  | { readonly kind: 'removed' }
  /** The file changed since the save: the previous bytes are staged for review, nothing was written. */
  | { readonly kind: 'staged'; readonly mediaId: string; readonly because: 'changed' | 'deleted' };

/**
 * Undoes one save. When the file still holds exactly what the save wrote, writes back what it
 * replaced (through save_media's own checked write) or removes the file it created. Otherwise it
 * never overwrites the newer change: the previous bytes are staged as a media for review.
 */
export interface UndoContext extends SaveContext {
  readonly saves: SaveHistory;
  /** Where an undo of several files is journaled before its first write (as a set is). */
  readonly journal: SetJournal;
  readonly log: Log;
  readonly editors: OpenEditors | undefined;
}

/** `target`: the call's gated path, the record's own. */
export async function undoSave(ctx: UndoContext, record: SaveRecord, target: GatedPath): Promise<UndoAction> {
  if (record.undone)
    throw invalidInput(
      `Save ${record.id} of "${record.path.display}" was already undone${record.undone.kind === 'staged' ? ` (staged as ${record.undone.mediaId} for review)` : ''}. Nothing was changed.`,
      '',
    );
  const previous = await ctx.saves.before(record.id);
  ctx.saveGuard.checkWriteRoot(record.path);
  const step = await ctx.saveGuard.exclusive(record.path, () => decide(ctx, record, target, previous));
  if (step.kind !== 'restore') return step;
  // Outside `exclusive`: the save takes the file's turn itself, and checks again that the file still
  // holds what the undo media was staged from (what the save wrote).
  const outcome = await commitMedia(ctx, step.mediaId, target);
  const undo = await recordSave(ctx, outcome);
  ctx.saves.markUndone(record.id, { kind: 'restored', by: undo?.id ?? outcome.mediaId });
  return { kind: 'restored', saveId: undo?.id, bytes: outcome.bytes };
}

/** Reads the file and does what needs no save: remove a created file, or stage the undo for review. */
async function decide(
  ctx: UndoContext,
  record: SaveRecord,
  target: GatedPath,
  previous: Uint8Array | undefined,
): Promise<UndoAction | { readonly kind: 'restore'; readonly mediaId: string }> {
  const resolved = await ctx.resolve(target, { forWrite: true });
  let disk: Uint8Array | undefined;
  if (resolved.exists) {
    const opened = await ctx.fs.open(resolved);
    try {
      const stat = opened.stat ?? (await ctx.fs.lstat(opened.address));
      if (stat.type !== 'file')
        throw invalidInput(
          `"${record.path.display}" is no longer a file (it is a ${stat.type}), so save ${record.id} cannot be undone. Nothing was changed.`,
          '',
        );
      disk = await ctx.fs.readFile(opened.address, ctx.signal);
    } catch (e) {
      throw fromFsError(e, record.path.display, 'read');
    } finally {
      await opened.release();
    }
  }
  // Security: the bytes of a path the rules protect stay tainted as a media, as stage_file's do.
  const taint = mediaTaint(record.path.display, ctx.readProtection(resolved));
  if (ctx.signal.aborted) throw cancelled();
  if (disk === undefined || hashBytes(disk) !== record.savedHash) {
    if (previous === undefined) {
      if (disk === undefined)
        throw new SandboxError(
          'E_SANDBOX_NOT_FOUND',
          `"${record.path.display}", which save ${record.id} created, no longer exists; there is nothing to undo.`,
          '',
        );
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `"${record.path.display}" was created by save ${record.id} and has changed since; undoing would delete that newer change, so nothing was changed.`,
        `Ask the user whether to delete the file.`,
      );
    }
    const media = ctx.media.stage(record.path, disk, previous, taint);
    ctx.saves.markUndone(record.id, { kind: 'staged', mediaId: media.id });
    return { kind: 'staged', mediaId: media.id, because: disk === undefined ? 'deleted' : 'changed' };
  }
  refuseUnsavedEditor(ctx.editors, record.path, 'undo_save');
  if (previous === undefined) {
    await removeCreated(ctx, record, resolved);
    ctx.saves.markUndone(record.id, { kind: 'removed' });
    return { kind: 'removed' };
  }
  return { kind: 'restore', mediaId: ctx.media.stage(record.path, disk, previous, taint, 'undo').id };
}

/**
 * Security: removes exactly the file the save created, as reads are pinned: in its folder opened
 * with no link followed, the same device and inode as saved, never a folder, never recursively.
 */
async function removeCreated(ctx: UndoContext, record: SaveRecord, resolved: ResolvedPath): Promise<void> {
  const display = record.path.display;
  const name = resolved.rel.slice(resolved.rel.lastIndexOf('/') + 1);
  let pinned;
  try {
    pinned = await ctx.fs.pinFolderOf(resolved, false);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ELOOP' || code === 'ENOTDIR')
      throw refused(
        `"${display}" was not removed: a folder on its path became a symbolic link while undoing save ${record.id}, and undo never goes through links.`,
        `Check the folder, then ask the user whether to delete the file.`,
      );
    throw fromFsError(e, display, 'open the folder of');
  }
  try {
    const address = pinned ? ctx.fs.join(pinned.address, name) : resolved.address;
    const stat = await (ctx.fs.capabilities.symlinks ? ctx.fs.lstat(address) : ctx.fs.stat(address)).catch(
      (e: unknown) => {
        throw fromFsError(e, display, 'remove');
      },
    );
    if (stat.type !== 'file')
      throw invalidInput(
        `"${display}" is no longer a file (it is a ${stat.type === 'symlink' ? 'symbolic link' : stat.type}), so save ${record.id}, which created it, cannot be undone; nothing was removed.`,
        `Ask the user whether to delete it.`,
      );
    const saved = record.file;
    if (saved !== undefined && stat.ino !== undefined && (stat.ino !== saved.ino || stat.dev !== saved.dev)) {
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `"${display}" is no longer the file save ${record.id} created (another file with the same content took its place), so nothing was removed.`,
        `Ask the user whether to delete it.`,
      );
    }
    await ctx.fs.delete(address).catch((e: unknown) => {
      throw fromFsError(e, display, 'remove');
    });
  } finally {
    await pinned?.release();
  }
}
