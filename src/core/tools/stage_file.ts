import * as z from 'zod';
import { SandboxError, cancelled, fromFsError, invalidInput } from '../errors.ts';
import { defineTool, soleTarget } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import type { FileEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import { mediaTaint } from '../media/types.ts';

export const stageFileSchema = () => z.strictObject({
  path: pathArgument('The file to stage (existing, or new when content is given)'),
  content: z.string().optional().describe('The full new content. Omit to stage the file\'s current bytes for patching.'),
});

export interface StageFileResult {
  readonly media_id: string;
  readonly path: string;
  readonly bytes: number;
  readonly lines: number;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly isNew: boolean;
  /** Set when the file has more than one name (hard links): a save writes it in place, so every name changes. */
  readonly links?: number;
  /** The open editor that holds the user's unsaved changes to this file (not in the media). */
  readonly unsaved_editor?: string;
}

export function renderStageFile(r: StageFileResult): string {
  const next = r.isNew
    ? `Nothing is on disk yet: call save_media with media_id "${r.media_id}" to create the file.`
    : `Nothing is written yet: patch it with media_apply_patch, then call save_media with the final media_id.`;
  const links = r.links ? `\nThis file has ${r.links} names (hard links): saving it changes the file under every name.` : '';
  const editor = r.unsaved_editor === undefined ? '' : `\nThe user has unsaved changes to this file in the editor "${r.unsaved_editor}"; they are not in this media, which holds the file as it is on disk, and save_media will refuse until the user saves or reverts them.`;
  return `${JSON.stringify(r)}\n${next}${links}${editor}`;
}

export const stageFile = defineTool({
  name: 'stage_file',
  displayName: 'Stage File',
  userDescription: 'Stage an in-memory copy of a file for editing (writes nothing).',
  description: 'The edit is in memory; nothing changes on disk until save_media. Stages a media: an in-memory copy of a file\'s current bytes (to patch with media_apply_patch), or, with content, the full content of a new or replaced file. Returns {media_id, path, bytes, lines, encoding, eol, isNew}. The user sees the staged version as a diff against disk. Always finish with save_media, or the change is lost.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'editors'],
  icon: 'git-stage',
  schema: stageFileSchema,
  targets: (input, scope) => ({
    paths: [scope.normalize(input.path)],
    summary: `stage ${input.path}${input.content !== undefined ? ' with new content' : ''}`,
    reads: input.content === undefined,
  }),
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
    return { media_id: media.id, path: path.display, bytes: media.bytes.byteLength, lines: media.lines, encoding: media.encoding, eol: media.eol, isNew: media.isNew, ...(links > 1 ? { links } : {}), ...(editor !== undefined ? { unsaved_editor: editor } : {}) };
  },
  render: renderStageFile,
});
