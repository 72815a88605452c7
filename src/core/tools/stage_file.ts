import * as z from 'zod';
import { SandboxError, cancelled, fromFsError, invalidInput } from '../errors.ts';
import { defineTool, soleTarget } from '../tool.ts';
import { patchArgument, pathArgument } from '../schema.ts';
import { patchMedia, type MediaPatch, type PatchedMedia } from '../media/patch-media.ts';
import type { MediaStore } from '../media/store.ts';
import type { FileEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import { mediaTaint } from '../media/types.ts';
import { stageDelete, stageMove } from '../media/stage-change.ts';
import type { ToolContext } from '../tool.ts';

export const stageFileSchema = () => z.strictObject({
  path: pathArgument('The file to stage (existing, or new when content is given)'),
  content: z.string().optional().describe('The full new content. Omit to stage the file\'s current bytes for patching.'),
  patch: patchArgument().optional().describe('Edits to apply at once, as media_apply_patch takes them: one {find, replace, replace_all?}, a list of them in order, or {unified: "<diff>"}. The result is then the patched media (one call instead of stage_file + media_apply_patch). Not with content.'),
  action: z.enum(['write', 'delete', 'move']).optional().describe('write (default): stage new bytes for path. delete: stage the removal of the file at path (files only; no content or patch). move: stage moving path to `to`, optionally with content or patch (a rename with an edit is one call).'),
  to: pathArgument('For a move: where the file goes (must not exist unless replace is true)').optional(),
  replace: z.boolean().optional().describe('For a move onto an existing file: replace it (the user is asked to confirm replacing it).'),
});

type StageFileInput = z.infer<ReturnType<typeof stageFileSchema>>;

export interface StageFileResult {
  readonly media_id: string;
  /** Where the bytes go (a move's destination; the file to delete for a delete). */
  readonly path: string;
  /** delete or move (omitted for a write). */
  readonly action?: 'delete' | 'move';
  /** A move's source. */
  readonly from?: string;
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
}

export function renderStageFile(r: StageFileResult): string {
  const shown = { media_id: r.media_id, path: r.path, ...(r.action ? { action: r.action } : {}), ...(r.from ? { from: r.from } : {}), ...(r.parent_id !== undefined || r.action ? { added: r.added ?? 0, removed: r.removed ?? 0 } : { lines: r.lines }), ...(r.isNew ? { new: true } : {}) };
  const next = r.parent_id === undefined && r.action === undefined && !r.isNew
    ? 'Nothing written: patch it (media_apply_patch), then save_media.'
    : 'Nothing written yet: save_media (media_ids for several).';
  const links = r.links ? `\nThis file has ${r.links} names (hard links): saving it changes the file under every name.` : '';
  const editor = r.unsaved_editor === undefined ? '' : `\nThe user has unsaved changes to this file in the editor "${r.unsaved_editor}"; they are not in this media, which holds the file as it is on disk, and save_media will refuse until the user saves or reverts them.`;
  return `${JSON.stringify(shown)}\n${next}${links}${editor}`;
}

export const stageFile = defineTool({
  name: 'stage_file',
  displayName: 'Stage File',
  userDescription: 'Stage an in-memory copy of a file for editing (writes nothing).',
  description: 'The edit is in memory; nothing changes on disk until save_media. Stages a media: an in-memory copy of a file\'s current bytes (to patch with media_apply_patch), or, with content, the full content of a new or replaced file. With patch, the edits are applied at once and the patched media is returned: an edit is ONE call (use this rather than stage + media_apply_patch). action "delete" stages deleting a file (files only); action "move" with `to` stages a rename/move, with content or patch for a rename with an edit in one call (one tool with an action keeps one way to stage any change, and every kind is saved, reviewed and undone the same way). The user sees each as a diff. Always finish with save_media (media_ids saves several as one set), or the change is lost.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'editors'],
  icon: 'git-stage',
  schema: stageFileSchema,
  targets: (input, scope) => {
    if (input.content !== undefined && input.patch !== undefined) {
      throw invalidInput(`stage_file was given both content (the whole new file) and patch (edits to the file as it is); they cannot be combined.`, `Give content to replace the file, or patch to edit it.`);
    }
    const action = input.action ?? 'write';
    checkAction(input, action);
    if (action === 'delete') return { paths: [scope.normalize(input.path)], summary: `stage deleting ${input.path}` };
    if (action === 'move') {
      const to = scope.normalize(input.to ?? '');
      return { paths: [scope.normalize(input.path), to], summary: `stage moving ${input.path} to ${to.display}${input.replace ? ', replacing it' : ''}${input.content !== undefined ? ' with new content' : input.patch !== undefined ? ' and patch it' : ''}`, reads: 'change' };
    }
    return {
      paths: [scope.normalize(input.path)],
      summary: `stage ${input.path}${input.content !== undefined ? ' with new content' : input.patch !== undefined ? ' and patch it' : ''}`,
      reads: input.content !== undefined ? 'none' : input.patch !== undefined ? 'change' : 'keep',
    };
  },
  run: async (input, ctx): Promise<StageFileResult> => {
    const { fs, media: store } = ctx;
    if (input.action === 'delete' || input.action === 'move') return stageChange(input, ctx);
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
        if (stat.type !== 'file') throw invalidInput(`"${path.display}" is a ${stat.type === 'directory' ? 'directory' : 'special file'}, not a file; only files can be staged.`, `Use list_directory to see what it holds.`);
        store.ensureRoom(path.display, stat.size + contentBytes);
        links = stat.nlink ?? 1;
        disk = await fs.readFile(opened.address, ctx.signal);
      } catch (e) {
        throw fromFsError(e, path.display, 'read');
      } finally {
        await opened.release();
      }
    } else if (input.content === undefined) {
      throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${path.display}" does not exist, so there is nothing to stage. To create it, call stage_file with content (the full text of the new file).`, '');
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

/** Refuses arguments that do not fit the action, before the gate is asked. */
function checkAction(input: StageFileInput, action: 'write' | 'delete' | 'move'): void {
  if (action !== 'move' && (input.to !== undefined || input.replace !== undefined)) {
    throw invalidInput(`to and replace belong to action "move", and this call's action is "${action}".`, `Give action "move" to move the file, or drop to and replace.`);
  }
  if (action === 'delete' && (input.content !== undefined || input.patch !== undefined)) {
    throw invalidInput(`A delete takes no content or patch: it removes "${input.path}" as it is.`, `Drop content and patch, or use action "write" to change the file.`);
  }
  if (action === 'move' && input.to === undefined) throw invalidInput(`action "move" needs to: the path the file moves to.`, `Give to, e.g. {"path": "src/a.ts", "action": "move", "to": "src/b.ts"}.`);
}

/** Stages a delete or a move (with its patch, if any). */
async function stageChange(input: StageFileInput, ctx: ToolContext<'fs' | 'media' | 'editors'>): Promise<StageFileResult> {
  const [first, second] = ctx.targets;
  if (first === undefined) throw invalidInput('stage_file was given no path.', 'Give path.');
  if (input.action === 'move' && second === undefined) throw invalidInput(`A move needs two different paths; "${first.display}" was given as both.`, `Give the new path in to.`);
  const media = second === undefined ? await stageDelete(ctx, first) : await stageMove(ctx, first, second, input.content, input.replace === true);
  const from = media.change.kind === 'move' ? { from: media.change.from.display } : {};
  const base = { path: media.path.display, action: media.change.kind === 'delete' ? 'delete' as const : 'move' as const, ...from, encoding: media.encoding, eol: media.eol, isNew: false };
  if (input.patch === undefined) return { media_id: media.id, bytes: media.bytes.byteLength, lines: media.lines, ...base, ...ctx.media.changes(media.id) };
  const { child, normalizedEdits } = patchStaged(ctx.media, media.id, input.patch);
  return { media_id: child.id, bytes: child.bytes.byteLength, lines: child.lines, ...base, parent_id: media.id, ...ctx.media.changes(child.id), ...(normalizedEdits.length ? { normalized_line_endings: normalizedEdits } : {}) };
}

/** The patch of a file just staged; when it fails, the error says the unpatched media is there to patch. */
function patchStaged(store: MediaStore, mediaId: string, patch: MediaPatch): PatchedMedia {
  try {
    return patchMedia(store, mediaId, patch);
  } catch (e) {
    if (!(e instanceof SandboxError)) throw e;
    throw new SandboxError(e.code, `${e.what} (The file is staged unpatched as ${mediaId}.)`, `${e.next} Retry the edit with media_apply_patch on media_id "${mediaId}".`.trim(), { cause: e });
  }
}
