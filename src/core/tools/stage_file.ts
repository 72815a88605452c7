import * as z from 'zod';
import { SandboxError, cancelled, fromFsError, invalidInput } from '../errors.ts';
import { defineTool, soleTarget } from '../tool.ts';
import { patchArgument, pathArgument } from '../schema.ts';
import { patchMedia, type MediaPatch, type PatchedMedia } from '../media/patch-media.ts';
import type { MediaStore } from '../media/store.ts';
import type { FileEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import { mediaTaint } from '../media/types.ts';

export const stageFileSchema = () => z.strictObject({
  path: pathArgument('The file to stage (existing, or new when content is given)'),
  content: z.string().optional().describe('The full new content. Omit to stage the file\'s current bytes for patching.'),
  patch: patchArgument().optional().describe('Edits to apply at once, as media_apply_patch takes them: one {find, replace, replace_all?}, a list of them in order, or {unified: "<diff>"}. The result is then the patched media (one call instead of stage_file + media_apply_patch). Not with content.'),
  action: z.enum(['write', 'delete']).optional().describe('"delete" stages the deletion of the file (save_media then deletes it; undo_save brings it back). Default "write": stage new bytes.'),
});

export interface StageFileResult {
  readonly media_id: string;
  readonly path: string;
  readonly bytes: number;
  readonly lines: number;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly isNew: boolean;
  /** With `patch`: the media of the file as staged, before the edits (media_id is the patched one). */
  readonly parent_id?: string;
  readonly added?: number;
  readonly removed?: number;
  /** With `patch`: 1-based edits that matched only with line endings normalized. */
  readonly normalized_line_endings?: readonly number[];
  /** Set when the file has more than one name (hard links): a save writes it in place, so every name changes. */
  readonly links?: number;
  /** The open editor that holds the user's unsaved changes to this file (not in the media). */
  readonly unsaved_editor?: string;
  /** A staged deletion: save_media deletes the file. */
  readonly deletes?: boolean;
}

export function renderStageFile(r: StageFileResult): string {
  if (r.deletes) return `${JSON.stringify(r)}\nThe deletion is staged only: call save_media with media_id "${r.media_id}" to delete the file (undo_save can bring it back).`;
  const next = r.isNew
    ? `Nothing is on disk yet: call save_media with media_id "${r.media_id}" to create the file.`
    : r.parent_id !== undefined
      ? `Patched in memory only: call save_media with media_id "${r.media_id}" to write it.`
      : `Nothing is written yet: patch it with media_apply_patch, then call save_media with the final media_id.`;
  const links = r.links ? `\nThis file has ${r.links} names (hard links): saving it changes the file under every name.` : '';
  const editor = r.unsaved_editor === undefined ? '' : `\nThe user has unsaved changes to this file in the editor "${r.unsaved_editor}"; they are not in this media, which holds the file as it is on disk, and save_media will refuse until the user saves or reverts them.`;
  return `${JSON.stringify(r)}\n${next}${links}${editor}`;
}

export const stageFile = defineTool({
  name: 'stage_file',
  displayName: 'Stage File',
  userDescription: 'Stage an in-memory copy of a file for editing (writes nothing).',
  description: 'The edit is in memory; nothing changes on disk until save_media. Stages a media: an in-memory copy of a file\'s current bytes (to patch with media_apply_patch), or, with content, the full content of a new or replaced file. With patch, the edits are applied at once and the patched media is returned (an edit in one call). With action "delete", stages the deletion of the file (one tool for every staged change, so the model learns one shape; the person reviews it as the file against nothing), which save_media carries out. Returns {media_id, path, bytes, lines, encoding, eol, isNew}, and with patch also {parent_id, added, removed}. The user sees the staged version as a diff against disk. Always finish with save_media, or the change is lost.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'editors'],
  icon: 'git-stage',
  schema: stageFileSchema,
  targets: (input, scope) => {
    if (input.action === 'delete') {
      if (input.content !== undefined || input.patch !== undefined) throw invalidInput(`stage_file with action "delete" takes no content or patch: a deletion has no new bytes.`, `Stage the deletion alone, or omit action to stage new bytes.`);
      // Reads too: the bytes deleted are kept (for the diff and undo), so a read-denied file is not staged.
      return { paths: [scope.normalize(input.path)], summary: `stage the deletion of ${input.path}`, reads: true };
    }
    if (input.content !== undefined && input.patch !== undefined) {
      throw invalidInput(`stage_file was given both content (the whole new file) and patch (edits to the file as it is); they cannot be combined.`, `Give content to replace the file, or patch to edit it.`);
    }
    return {
      paths: [scope.normalize(input.path)],
      summary: `stage ${input.path}${input.content !== undefined ? ' with new content' : input.patch !== undefined ? ' and patch it' : ''}`,
      reads: input.content === undefined,
    };
  },
  run: async (input, ctx): Promise<StageFileResult> => {
    const { fs, media: store } = ctx;
    const path = soleTarget(ctx);
    if (path.rel === '') throw invalidInput(`"${path.display}" is a workspace folder, not a file.`, `Give stage_file the path of a file.`);
    // Security: staged for writing, so a symlinked component is refused now rather than at save time.
    const resolved = await ctx.resolve(path, { forWrite: true });
    const contentBytes = input.content === undefined ? 0 : Buffer.byteLength(input.content);
    let disk: Uint8Array | undefined;
    let links = 1;
    if (resolved.exists) {
      if (ctx.signal.aborted) throw cancelled();
      const opened = await fs.open(resolved);
      try {
        const stat = opened.stat ?? await fs.stat(opened.address);
        if (stat.type !== 'file') {
          // A folder's deletion is not offered: it would not stay bounded and reviewable as one change.
          if (input.action === 'delete') throw invalidInput(`"${path.display}" is a ${stat.type === 'directory' ? 'folder' : 'special file'}; only files can be staged for deletion.`, `Stage the deletion of each file in it (list_directory lists them).`);
          throw invalidInput(`"${path.display}" is a ${stat.type === 'directory' ? 'directory' : 'special file'}, not a file; only files can be staged.`, `Use list_directory to see what it holds.`);
        }
        store.ensureRoom(path.display, stat.size + contentBytes);
        links = stat.nlink ?? 1;
        disk = await fs.readFile(opened.address, ctx.signal);
      } catch (e) {
        throw fromFsError(e, path.display, 'read');
      } finally {
        await opened.release();
      }
    } else if (input.action === 'delete') {
      throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${path.display}" does not exist, so there is nothing to delete.`, '');
    } else if (input.content === undefined) {
      throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${path.display}" does not exist, so there is nothing to stage. To create it, call stage_file with content (the full text of the new file).`, '');
    }
    if (input.action === 'delete' && disk !== undefined) {
      const deletion = store.stageDeletion(path, disk, mediaTaint(path.display, ctx.readProtection(resolved)));
      return { media_id: deletion.id, path: path.display, bytes: 0, lines: 0, encoding: deletion.encoding, eol: deletion.eol, isNew: false, deletes: true, removed: store.changes(deletion.id).removed };
    }
    const media = store.stage(path, disk, input.content, mediaTaint(path.display, ctx.readProtection(resolved)));
    const editor = ctx.editors?.unsavedEditor(path);
    const facts = { ...(links > 1 ? { links } : {}), ...(editor !== undefined ? { unsaved_editor: editor } : {}) };
    if (input.patch === undefined) {
      return { media_id: media.id, path: path.display, bytes: media.bytes.byteLength, lines: media.lines, encoding: media.encoding, eol: media.eol, isNew: media.isNew, ...facts };
    }
    const { child, counts, normalizedEdits } = patchStaged(store, media.id, input.patch);
    return {
      media_id: child.id, path: path.display, bytes: child.bytes.byteLength, lines: child.lines, encoding: child.encoding, eol: child.eol, isNew: child.isNew,
      parent_id: media.id, ...counts, ...(normalizedEdits.length ? { normalized_line_endings: normalizedEdits } : {}), ...facts,
    };
  },
  render: renderStageFile,
});

/** The patch of a file just staged; when it fails, the error says the unpatched media is there to patch. */
function patchStaged(store: MediaStore, mediaId: string, patch: MediaPatch): PatchedMedia {
  try {
    return patchMedia(store, mediaId, patch);
  } catch (e) {
    if (!(e instanceof SandboxError)) throw e;
    throw new SandboxError(e.code, `${e.what} (The file is staged unpatched as ${mediaId}.)`, `${e.next} Retry the edit with media_apply_patch on media_id "${mediaId}".`.trim(), { cause: e });
  }
}
