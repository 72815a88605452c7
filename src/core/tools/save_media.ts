import * as z from 'zod';
import { defineTool, soleTarget, type CallContext } from '../contract/tool.ts';
import { pathArgument } from '../contract/schema.ts';
import { commitMedia, type WriteMethod } from '../media/save.ts';
import { commitSet, type SetChange, type SetContext } from '../media/change-set.ts';
import { invalidInput } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { PlannedWrite, StagedMedia } from '../media/types.ts';
import type { ReadTaint } from '../gate.ts';
import { refuseUnsavedEditor } from '../media/editors.ts';
import { recordSave } from '../media/undo.ts';
import { pathKey, userEditOf, type UserEdit } from '../media/types.ts';

/** The most media one save_media call saves as a set. */
export const MAX_SET = 50;

export const saveMediaSchema = () =>
  z.strictObject({
    media_id: z
      .string()
      .min(1)
      .optional()
      .describe('The media to write (from stage_file or media_apply_patch). Give this or media_ids.'),
    media_ids: z
      .array(z.string().min(1))
      .min(1)
      .max(MAX_SET)
      .optional()
      .describe(
        `Several media to save as one set (at most ${MAX_SET}): one confirmation, everything checked before anything is written, all or nothing, one save_id.`,
      ),
    path: pathArgument('Where to write it (default: the path it was staged for); only with media_id').optional(),
  });

type SaveMediaInput = z.infer<ReturnType<typeof saveMediaSchema>>;

/** A save of one file with media_id. */
export interface SaveOneResult {
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
  readonly user_edit?: UserEdit;
}

/** What save_media returns: for one file with media_id, its fields; for a set (media_ids, or a delete or move), what each file became. */
export interface SaveMediaResult extends Partial<SaveOneResult> {
  readonly save_id?: string;
  readonly files?: readonly {
    readonly kind: 'write' | 'delete' | 'move';
    readonly path: string;
    readonly from?: string;
    readonly added: number;
    readonly removed: number;
  }[];
  /** Folders the set's deletes and moves left empty, removed with them; undo_save puts them back. */
  readonly removed_folders?: readonly string[];
}

export function renderSaveMedia(r: SaveMediaResult): string {
  const id = r.save_id ? { save_id: r.save_id } : {};
  const undo = r.save_id ? '' : ' It cannot be undone: the previous bytes were not kept.';
  const folders = r.removed_folders?.length
    ? ` Removed the emptied folder${r.removed_folders.length > 1 ? 's' : ''} ${r.removed_folders.join(', ')}.`
    : '';
  if (r.files)
    return `${JSON.stringify(id)}\nSaved: ${r.files.map((f) => `${f.kind} ${f.from ? `${f.from} → ` : ''}${f.path} +${f.added} −${f.removed}`).join('; ')}.${folders}${undo}`;
  const lines = [
    JSON.stringify({ ...id, path: r.path, added: r.added, removed: r.removed, ...(r.created ? { new: true } : {}) }),
  ];
  if (undo) lines.push(undo.trim());
  if (r.in_place_because) lines.push(`Written in place because ${r.in_place_because}.`);
  if (r.user_edit)
    lines.push(
      `This includes the user's own edit in the editor (${r.user_edit.media_id}: +${r.user_edit.added} −${r.user_edit.removed} against your ${r.user_edit.against}); read the file before changing it further.`,
    );
  if (r.stale?.length) lines.push(`Now stale: ${r.stale.join(', ')}; stage the file again to edit it further.`);
  return lines.join('\n');
}

/** The plan: the media asked about, in order, with how many of the call's targets each has (a move has two). */
interface SavePlan {
  readonly changes: readonly { readonly mediaId: string; readonly paths: number }[];
  /** A single write with media_id (the save of one file it always was). */
  readonly single: boolean;
}

/** Security: each line names its media, so a confirmation stands for exactly the versions it showed. */
function line(w: PlannedWrite): string {
  const counts = `(${w.mediaId}) +${w.added} −${w.removed}`;
  switch (w.kind) {
    case 'write':
      return `write ${w.path.display} ${counts}`;
    case 'delete':
      return `delete ${w.path.display} ${counts}`;
    case 'move':
      return `move ${w.from?.display ?? '?'} → ${w.path.display}${w.replace ? ' (replaces it)' : ''} ${counts}`;
  }
}

/** The strictest taint of the set: deny over ask. Written back to the file they were staged for, denied bytes reveal nothing: asked, not refused. */
function judgedTaint(media: StagedMedia, path: ModelPath): ReadTaint | undefined {
  const taint = media.taint;
  if (!taint) return undefined;
  return taint.action === 'deny' && pathKey(path) === pathKey(media.path) && media.change.kind === 'write'
    ? { ...taint, action: 'ask' }
    : taint;
}

function mediaIdsOf(input: SaveMediaInput): string[] {
  if ((input.media_id === undefined) === (input.media_ids === undefined))
    throw invalidInput(
      `save_media needs media_id (one media) or media_ids (a set), and ${input.media_id === undefined ? 'got neither' : 'got both'}.`,
      `Give media_id for one file, or media_ids for several.`,
    );
  if (input.media_ids !== undefined && input.path !== undefined)
    throw invalidInput(
      `path (save elsewhere) applies to one media_id, not to a set.`,
      `Save that media alone with media_id and path.`,
    );
  const ids = input.media_ids ?? [input.media_id ?? ''];
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) throw invalidInput(`media_ids lists "${twice}" twice.`, `List each media once.`);
  return ids;
}

export const saveMedia = defineTool({
  name: 'save_media',
  displayName: 'Save Staged File',
  userDescription: 'Write staged changes (writes, deletes, moves) to disk (the only tool that changes files).',
  description:
    'This is the step that makes an edit real: writes the writes, deletes and moves staged with stage_file/media_apply_patch. Until it runs, nothing changed on disk. Give media_id for one file, or media_ids (up to 50) to save several as ONE set: one confirmation, every file checked before anything is written, all or nothing (a failure midway rolls back), one save_id that undo_save undoes as a whole. Prefer one set for a multi-file change. Refuses with E_SANDBOX_CONFLICT when a file changed on disk since it was staged (stage it again) or has unsaved changes in an open editor (ask the user), refuses symlinked paths and paths outside the write roots. Keeps encoding, BOM and line endings.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'saveGuard', 'editors', 'saves', 'journal', 'log', 'clock'],
  icon: 'save',
  schema: saveMediaSchema,
  targets: (input, scope) => {
    const ids = mediaIdsOf(input);
    const medias = ids.map((id) => scope.media.get(id));
    const paths: ModelPath[] = [];
    const writes: PlannedWrite[] = [];
    let taint: ReadTaint | undefined;
    for (const media of medias) {
      const path = input.path === undefined ? media.path : scope.normalize(input.path);
      const from = media.change.kind === 'move' ? media.change.from : undefined;
      paths.push(...(from ? [from, path] : [path]));
      writes.push({
        kind: media.change.kind,
        path,
        ...(from ? { from } : {}),
        ...(media.change.kind === 'move' && media.change.replace ? { replace: true } : {}),
        mediaId: media.id,
        ...scope.media.changes(media.id),
      });
      const judged = judgedTaint(media, path);
      if (judged && (taint === undefined || judged.action === 'deny')) taint = judged;
    }
    const plan: SavePlan = {
      changes: medias.map((m) => ({ mediaId: m.id, paths: m.change.kind === 'move' ? 2 : 1 })),
      single: input.media_id !== undefined && medias[0]?.change.kind === 'write',
    };
    const summary = `save ${writes.map(line).join('; ')}${taint ? ` with content staged from the protected "${taint.from}"` : ''}`;
    return { paths, summary, writes, plan, ...(taint ? { taint } : {}) };
  },
  run: async (input, ctx, plan): Promise<SaveMediaResult> => {
    const changes = plan?.changes ?? mediaIdsOf(input).map((mediaId) => ({ mediaId, paths: 1 }));
    if (plan?.single !== false && changes.length === 1 && ctx.targets.length === 1)
      return saveOne(ctx, changes[0]!.mediaId);
    const set: SetChange[] = [];
    let at = 0;
    for (const c of changes) {
      const media = ctx.media.get(c.mediaId);
      const [first, second] = [ctx.targets[at], ctx.targets[at + 1]];
      at += c.paths;
      if (first === undefined)
        throw invalidInput(`The set changed while the user was asked; nothing was saved.`, `Call save_media again.`);
      set.push(
        c.paths === 2 && second !== undefined ? { media, source: first, target: second } : { media, target: first },
      );
    }
    const outcome = await commitSet(ctx, set);
    return {
      ...(outcome.saveId ? { save_id: outcome.saveId } : {}),
      files: outcome.files.map((f) => ({
        kind: f.kind,
        path: f.path.display,
        ...(f.from ? { from: f.from.display } : {}),
        added: f.added,
        removed: f.removed,
      })),
      ...(outcome.removedFolders.length ? { removed_folders: outcome.removedFolders } : {}),
    };
  },
  render: renderSaveMedia,
});

/** One file written with media_id, as save_media always did. */
async function saveOne(ctx: SetContext & CallContext, mediaId: string): Promise<SaveOneResult> {
  const target = soleTarget(ctx);
  refuseUnsavedEditor(ctx.editors, target, 'save_media');
  const outcome = await commitMedia(ctx, mediaId, target);
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
    ...userEditOf(person),
  };
}
