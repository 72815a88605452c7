import * as z from 'zod';
import { defineTool, soleTarget } from '../tool.ts';
import { undoSave } from '../media/undo.ts';
import { pathKey } from '../media/types.ts';
import { SandboxError } from '../errors.ts';

export const undoSaveSchema = () => z.strictObject({
  save_id: z.string().min(1).optional().describe('The save to undo: the save_id save_media returned (default: the latest save of this session not undone yet).'),
});

/**
 * The plan: the save the call was put to the person for. Security: they are asked "undo save s1 of
 * a.txt", and a save that lands while they are asked (to this file or another) becomes the latest,
 * but must not become the one undone.
 */
interface UndoPlan {
  readonly saveId: string;
}

export interface UndoSaveResult {
  readonly save_id: string;
  readonly path: string;
  /** restored: the previous bytes are back; removed: the file the save created is gone; staged: the file changed since, so the undo waits for review. */
  readonly action: 'restored' | 'removed' | 'staged';
  /** restored: the save that wrote the previous bytes back (undo it to redo). */
  readonly undo_save_id?: string;
  /** staged: the media holding the previous bytes. */
  readonly media_id?: string;
}

export function renderUndoSave(r: UndoSaveResult): string {
  switch (r.action) {
    case 'restored': return `${JSON.stringify(r)}\nUndid save ${r.save_id}: "${r.path}" holds its previous bytes again.`;
    case 'removed': return `${JSON.stringify(r)}\nUndid save ${r.save_id}: "${r.path}", which that save created, was removed.`;
    case 'staged': return `${JSON.stringify(r)}\n"${r.path}" changed after save ${r.save_id}, so nothing was overwritten: its previous bytes are staged as ${r.media_id ?? '?'} for the user to review. Saving that media (save_media) completes the undo.`;
  }
}

export const undoSaveTool = defineTool({
  name: 'undo_save',
  displayName: 'Undo Save',
  userDescription: 'Undo a save made with Workspace Tools in this window.',
  description: 'Undoes one save_media of this session: writes back the bytes the file held before it (or removes a file it created), but only when the file still holds exactly what was saved. If the file changed since, nothing is overwritten: the previous bytes are staged as a media for review instead (save it with save_media to finish the undo). Give the save_id save_media returned, or omit it for the latest save.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'saveGuard', 'editors', 'saves', 'log', 'clock'],
  icon: 'discard',
  schema: undoSaveSchema,
  targets: (input, scope) => {
    const record = input.save_id === undefined ? scope.saves.latest() : scope.saves.get(input.save_id);
    const plan: UndoPlan = { saveId: record.id };
    return { paths: [record.path], summary: `undo save ${record.id} of ${record.path.display}`, plan };
  },
  run: async (input, ctx, plan): Promise<UndoSaveResult> => {
    const target = soleTarget(ctx);
    const asked = plan?.saveId ?? input.save_id;
    const record = asked === undefined ? ctx.saves.latest() : ctx.saves.get(asked);
    // Defence in depth: whatever save is undone, it is one of the file the person approved.
    if (pathKey(record.path) !== pathKey(target)) {
      throw new SandboxError('E_SANDBOX_CONFLICT', `The latest save changed while the user was asked: it is now ${record.id} of "${record.path.display}", not a save of "${target.display}"; nothing was undone.`, 'Call undo_save again with the save_id of the save to undo.');
    }
    const action = await undoSave(ctx, record, target);
    const base = { save_id: record.id, path: record.path.display };
    switch (action.kind) {
      case 'restored': return { ...base, action: 'restored', ...(action.saveId !== undefined ? { undo_save_id: action.saveId } : {}) };
      case 'removed': return { ...base, action: 'removed' };
      case 'staged': return { ...base, action: 'staged', media_id: action.mediaId };
    }
  },
  render: renderUndoSave,
});
