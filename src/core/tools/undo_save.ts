import * as z from 'zod';
import { madeThing } from '../media/tree.ts';
import { defineTool, soleTarget, type TargetScope } from '../contract/tool.ts';
import { undoFiles } from '../media/undo-set.ts';
import { pathArgument } from '../contract/schema.ts';
import type { SaveRecord } from '../media/history.ts';
import { undoSave } from '../media/undo.ts';
import { pathKey } from '../media/types.ts';
import { SandboxError, invalidInput } from '../errors.ts';

export const undoSaveSchema = () =>
  z.strictObject({
    save_id: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The save to undo: the save_id save_media returned (default: the latest save of this session not undone yet). A set is undone as a whole.',
      ),
    path: pathArgument('Only this file of the set (its other files stay as saved)').optional(),
  });

/**
 * The plan: the save the call was put to the person for. Security: they are asked "undo save s1 of
 * a.txt", and a save that lands while they are asked (to this file or another) becomes the latest,
 * but must not become the one undone.
 */
interface UndoPlan {
  readonly saveIds: readonly string[];
}

/** The records a call undoes: the set of the save (every file not undone yet), or the one file of it named by `path`. */
function recordsOf(input: z.infer<ReturnType<typeof undoSaveSchema>>, scope: TargetScope): SaveRecord[] {
  const latest = input.save_id === undefined ? scope.saves.latest() : undefined;
  // The latest save stands for its whole set; a save_id of one file of a set (not the set's own) is that file alone.
  const record = latest ? scope.saves.get(latest.set) : scope.saves.get(input.save_id ?? '');
  const set = record.set === record.id ? scope.saves.setOf(record.id) : [record];
  if (input.path === undefined) {
    const left = set.length > 1 ? set.filter((r) => r.undone === undefined) : set;
    if (left.length === 0)
      throw invalidInput(`Save ${record.id} of "${record.path.display}" was already undone. Nothing was changed.`, '');
    return left;
  }
  const path = scope.normalize(input.path);
  const one = set.find((r) => pathKey(r.path) === pathKey(path));
  if (one === undefined)
    throw invalidInput(
      `Save ${record.id} did not change "${path.display}"; it changed ${set.map((r) => `"${r.path.display}"`).join(', ')}.`,
      `Give one of those paths, or omit path to undo the whole save.`,
    );
  return [one];
}

export interface UndoSaveResult {
  readonly save_id: string;
  readonly path: string;
  /** restored: the previous bytes are back; removed: the file the save created is gone; staged: the file changed since, so the undo waits for review; reverted: every file of the set (or the deleted file) is back as before. */
  readonly action: 'restored' | 'removed' | 'staged' | 'reverted';
  /** reverted: the files put back. */
  readonly files?: readonly string[];
  /** restored: the save that wrote the previous bytes back (undo it to redo). */
  readonly undo_save_id?: string;
  /** staged: the media holding the previous bytes. */
  readonly media_id?: string;
}

export function renderUndoSave(r: UndoSaveResult): string {
  switch (r.action) {
    case 'restored':
      return `${JSON.stringify(r)}\nUndid save ${r.save_id}: "${r.path}" holds its previous bytes again.`;
    case 'removed':
      return `${JSON.stringify(r)}\nUndid save ${r.save_id}: "${r.path}", which that save created, was removed.`;
    case 'reverted':
      return `Undid save ${r.save_id}: ${(r.files ?? [r.path]).map((f) => `"${f}"`).join(', ')} ${(r.files?.length ?? 1) > 1 ? 'are' : 'is'} back as before, byte for byte.`;
    case 'staged':
      return `${JSON.stringify(r)}\n"${r.path}" changed after save ${r.save_id}, so nothing was overwritten: its previous bytes are staged as ${r.media_id ?? '?'} for the user to review. Saving that media (save_media) completes the undo.`;
  }
}

export const undoSaveTool = defineTool({
  name: 'undo_save',
  displayName: 'Undo Save',
  userDescription: 'Undo a save made with Workspace Tools in this window.',
  description:
    'Undoes one save_media of this session (a set as a whole: every file, deletes and moves included, back byte for byte; path undoes one file of it): writes back the bytes the file held before it (or removes a file it created), but only when the file still holds exactly what was saved. If the file changed since, nothing is overwritten: the previous bytes are staged as a media for review instead (save it with save_media to finish the undo). Give the save_id save_media returned, or omit it for the latest save.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'saveGuard', 'editors', 'saves', 'journal', 'log', 'clock'],
  icon: 'discard',
  schema: undoSaveSchema,
  targets: (input, scope) => {
    const records = recordsOf(input, scope);
    const plan: UndoPlan = { saveIds: records.map((r) => r.id) };
    const first = records[0];
    if (records.length === 1 && first !== undefined)
      return {
        paths: [first.path],
        summary: `undo save ${first.id} of ${first.path.display}${first.kind === 'delete' ? ' (recreate the deleted file)' : first.tree !== undefined ? (madeThing(first.tree) === 'folder' ? ` (remove the folder it made, ${first.tree.files} files)` : ' (remove the link it made)') : ''}`,
        plan,
      };
    return {
      paths: records.map((r) => r.path),
      summary: `undo save ${first?.set ?? '?'}: ${records.map((r) => `${r.kind === 'delete' ? 'recreate' : r.tree !== undefined ? `remove the ${madeThing(r.tree) === 'folder' ? 'folder' : 'link'}` : 'restore'} ${r.path.display}`).join('; ')}`,
      plan,
    };
  },
  run: async (input, ctx, plan): Promise<UndoSaveResult> => {
    const ids = plan?.saveIds ?? [];
    if (ids.length > 1 || (ids.length === 1 && ctx.saves.get(ids[0] ?? '').kind !== 'write')) {
      const records = ids.map((id) => ctx.saves.get(id));
      await undoFiles(ctx, records, ctx.targets);
      const head = records[0]!;
      return {
        save_id: head.set,
        path: head.path.display,
        action: 'reverted',
        files: records.map((r) => r.path.display),
      };
    }
    const target = soleTarget(ctx);
    const asked = ids[0] ?? input.save_id;
    const record = asked === undefined ? ctx.saves.latest() : ctx.saves.get(asked);
    // Defence in depth: whatever save is undone, it is one of the file the person approved.
    if (pathKey(record.path) !== pathKey(target)) {
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `The latest save changed while the user was asked: it is now ${record.id} of "${record.path.display}", not a save of "${target.display}"; nothing was undone.`,
        'Call undo_save again with the save_id of the save to undo.',
      );
    }
    const action = await undoSave(ctx, record, target);
    const base = { save_id: record.id, path: record.path.display };
    switch (action.kind) {
      case 'restored':
        return { ...base, action: 'restored', ...(action.saveId !== undefined ? { undo_save_id: action.saveId } : {}) };
      case 'removed':
        return { ...base, action: 'removed' };
      case 'staged':
        return { ...base, action: 'staged', media_id: action.mediaId };
    }
  },
  render: renderUndoSave,
});
