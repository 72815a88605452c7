import * as z from 'zod';
import { defineTool, soleTarget } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import { commitMedia, type WriteMethod } from '../media/save.ts';
import { refuseUnsavedEditor } from '../media/editors.ts';
import { recordSave } from '../media/undo.ts';
import { plural } from '../text/format.ts';
import { pathKey } from '../media/types.ts';

export const saveMediaSchema = () => z.strictObject({
  media_id: z.string().min(1).describe('The media to write (from stage_file or media_apply_patch).'),
  path: pathArgument('Where to write it (default: the path it was staged for)').optional(),
});

export interface SaveMediaResult {
  readonly media_id: string;
  readonly path: string;
  readonly added: number;
  readonly removed: number;
  readonly bytes: number;
  readonly created: boolean;
  readonly method: WriteMethod;
  /** Why it was written in place (`direct`) rather than through a temp file and a rename. */
  readonly in_place_because?: string;
  /** Unsaved media of the same file that now conflict with disk (stage again to edit further). */
  readonly stale: readonly string[];
  /** This save's id, for undo_save; absent when the bytes it replaced could not be kept. */
  readonly save_id?: string;
  /** The user's edit in the editor that this save included, against the model's version. */
  readonly user_edit?: { readonly media_id: string; readonly against: string; readonly added: number; readonly removed: number };
}

export function renderSaveMedia(r: SaveMediaResult): string {
  const lines = [JSON.stringify(r)];
  lines.push(`Saved ${r.media_id} to "${r.path}"${r.created ? ' (new file)' : ''}: +${r.added} −${r.removed} lines, ${plural(r.bytes, 'byte')} written${r.method === 'rename' ? '' : ' in place'}.`);
  if (r.in_place_because) lines.push(`Written in place, not through a temp file and a rename, because ${r.in_place_because}.`);
  if (r.user_edit) lines.push(`This includes the user's own edit in the editor (${r.user_edit.media_id}: +${r.user_edit.added} −${r.user_edit.removed} against your ${r.user_edit.against}); read the file before changing it further.`);
  if (r.stale.length) lines.push(`Now stale (staged from the old contents; saving them would conflict): ${r.stale.join(', ')}. Stage the file again to edit it further.`);
  return lines.join('\n');
}

export const saveMedia = defineTool({
  name: 'save_media',
  displayName: 'Save Staged File',
  userDescription: 'Write a staged file to disk (the only tool that changes files).',
  description: 'This is the step that makes an edit real: writes a staged media to disk. Until it runs, stage_file and media_apply_patch changed nothing. Refuses with E_SANDBOX_CONFLICT when the file changed on disk since it was staged (stage it again) or has unsaved changes in an open editor (ask the user to save or revert it), refuses symlinked paths and paths outside the write roots. Keeps the file\'s encoding, BOM and line endings. The result gives +/- counts, bytes written, other media of the same file that are now stale, and a save_id: undo_save can undo the save.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'saveGuard', 'editors', 'saves', 'log', 'clock'],
  icon: 'save',
  schema: saveMediaSchema,
  targets: (input, scope) => {
    const media = scope.media.get(input.media_id);
    const path = input.path === undefined ? media.path : scope.normalize(input.path);
    const taint = media.taint;
    const writes = [{ kind: media.change.kind, path, mediaId: media.id, ...scope.media.changes(media.id) }];
    if (!taint) return { paths: [path], summary: `save ${media.id} to ${path.display}`, writes };
    // Written back to the file they were staged for, denied bytes reveal nothing: asked, not refused.
    const judged = taint.action === 'deny' && pathKey(path) === pathKey(media.path) ? { ...taint, action: 'ask' as const } : taint;
    return { paths: [path], summary: `save ${media.id} to ${path.display} with content staged from the protected "${taint.from}"`, taint: judged, writes };
  },
  run: async (input, ctx): Promise<SaveMediaResult> => {
    const target = soleTarget(ctx);
    refuseUnsavedEditor(ctx.editors, target, 'save_media');
    const outcome = await commitMedia(ctx, input.media_id, target);
    const saved = await recordSave(ctx, outcome);
    const person = outcome.personChange;
    return {
      media_id: outcome.mediaId,
      path: outcome.path.display,
      added: outcome.added,
      removed: outcome.removed,
      bytes: outcome.bytes,
      created: outcome.created,
      method: outcome.method,
      ...(outcome.inPlaceBecause ? { in_place_because: outcome.inPlaceBecause } : {}),
      stale: outcome.stale,
      ...(saved ? { save_id: saved.id } : {}),
      ...(person ? { user_edit: { media_id: person.mediaId, against: person.against, added: person.added, removed: person.removed } } : {}),
    };
  },
  render: renderSaveMedia,
});
