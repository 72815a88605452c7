import { SandboxError, cancelled, errnoCode, fromFsError, invalidInput, refused } from '../errors.ts';
import type { GatedPath } from '../paths.ts';
import { hashBytes } from './hash.ts';
import type { SaveContext, SaveOutcome } from './save.ts';
import { pathKey } from './types.ts';

/**
 * The commit step of a staged deletion: write roots, the gated translation (no symlinked
 * component), then, in the pinned folder, the file must still hold exactly the bytes staged for
 * deletion (never delete what the model has not seen), is removed, never a folder or a link.
 */
export async function commitDeletion(ctx: SaveContext, mediaId: string, target: GatedPath): Promise<SaveOutcome> {
  const media = ctx.media.get(mediaId);
  const display = target.display;
  if (pathKey(target) !== pathKey(media.path)) throw invalidInput(`${media.id} is a staged deletion of "${media.path.display}"; it cannot be saved to another path.`, `Call save_media with media_id "${media.id}" and no path.`);
  ctx.saveGuard.checkWriteRoot(target);
  return ctx.saveGuard.exclusive(target, async () => {
    const resolved = await ctx.resolve(target, { forWrite: true });
    if (!resolved.exists) throw new SandboxError('E_SANDBOX_CONFLICT', `"${display}" no longer exists, so ${media.id} has nothing to delete.`, 'Call list_directory to see what is there.');
    let pinned;
    try {
      pinned = await ctx.fs.pinFolderOf(resolved, false);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ELOOP' || code === 'ENOTDIR') throw refused(`"${display}" was not deleted: a folder on its path became a symbolic link, and deletions never go through links.`, `Check the folder, stage the deletion again and save.`);
      throw fromFsError(e, display, 'open the folder of');
    }
    try {
      const address = pinned ? ctx.fs.join(pinned.address, resolved.rel.slice(resolved.rel.lastIndexOf('/') + 1)) : resolved.address;
      const stat = await (ctx.fs.capabilities.symlinks ? ctx.fs.lstat(address) : ctx.fs.stat(address)).catch((e: unknown) => { throw fromFsError(e, display, 'read'); });
      if (stat.type !== 'file') throw refused(`"${display}" is now a ${stat.type === 'symlink' ? 'symbolic link' : stat.type}, not the file staged for deletion; nothing was deleted.`, `Stage the deletion again if it is still wanted.`);
      const disk = await ctx.fs.readFile(address, ctx.signal).catch((e: unknown) => { throw fromFsError(e, display, 'read'); });
      if (hashBytes(disk) !== media.base.hash) throw new SandboxError('E_SANDBOX_CONFLICT', `"${display}" changed on disk after ${media.id} was staged; deleting it would lose that change, so nothing was deleted.`, `Stage the deletion again (stage_file with action "delete") if it is still wanted.`);
      if (ctx.signal.aborted) throw cancelled();
      const removed = ctx.media.changes(media.id).removed;
      await ctx.fs.delete(address).catch((e: unknown) => { throw fromFsError(e, display, 'delete'); });
      const effects = ctx.media.find(media.id) ? ctx.media.markSaved(media.id, target, media.bytes) : { stale: [], rebased: [] };
      return {
        mediaId: media.id, path: target, bytes: 0, created: false, method: 'delete', inPlaceBecause: undefined, added: 0, removed,
        stale: effects.stale, rebased: effects.rebased, personChange: undefined, replaced: disk, written: media.bytes, file: undefined, deleted: true,
      };
    } finally {
      await pinned?.release();
    }
  });
}
