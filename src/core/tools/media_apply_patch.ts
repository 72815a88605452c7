import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import { patchArgument } from '../contract/schema.ts';
import { patchMedia } from '../media/patch-media.ts';

export const applyPatchSchema = () =>
  z.strictObject({
    media_id: z.string().min(1).describe('The media to patch (from stage_file or an earlier media_apply_patch).'),
    patch: patchArgument(),
  });

export interface ApplyPatchResult {
  readonly media_id: string;
  readonly parent_id: string;
  readonly path: string;
  readonly added: number;
  readonly removed: number;
  readonly bytes: number;
  readonly lines: number;
  /** 1-based edits that matched only with line endings normalized (omitted when none). */
  readonly normalized_line_endings?: readonly number[];
}

export function renderApplyPatch(r: ApplyPatchResult): string {
  const shown = {
    media_id: r.media_id,
    path: r.path,
    added: r.added,
    removed: r.removed,
    ...(r.normalized_line_endings ? { normalized_line_endings: r.normalized_line_endings } : {}),
  };
  return `${JSON.stringify(shown)}\nIn memory only (${r.parent_id} stays valid): save_media media_id "${r.media_id}" writes it.`;
}

export const applyPatch = defineTool({
  name: 'media_apply_patch',
  displayName: 'Apply Patch',
  userDescription: 'Apply find/replace edits or a unified diff to a staged file (writes nothing).',
  description:
    'Patches a staged media in memory and returns a NEW media_id with +added/-removed line counts; earlier media ids stay valid. Nothing changes on disk until save_media. Edits are {find, replace, replace_all?} (exact match first, then with line endings normalized), a list of them, or {unified: diff}. A find that matches several times without replace_all, or nowhere, is an error that shows the lines.',
  risk: 'write',
  requires: ['writable'],
  needs: ['media'],
  icon: 'diff',
  schema: applyPatchSchema,
  targets: (input, scope) => {
    const { path, taint } = scope.media.get(input.media_id);
    // Security: whether a patch applies tells what the media holds, so a tainted one is judged by its read rule.
    if (!taint) return { paths: [path], summary: `patch staged ${path.display}` };
    return {
      paths: [path],
      summary: `patch staged ${path.display} holding content from the protected "${taint.from}"`,
      taint,
    };
  },
  run: async (input, ctx): Promise<ApplyPatchResult> => {
    const { parent, child, counts, normalizedEdits } = patchMedia(ctx.media, input.media_id, input.patch);
    return {
      media_id: child.id,
      parent_id: parent.id,
      path: child.path.display,
      ...counts,
      bytes: child.bytes.byteLength,
      lines: child.lines,
      ...(normalizedEdits.length ? { normalized_line_endings: normalizedEdits } : {}),
    };
  },
  render: renderApplyPatch,
});
