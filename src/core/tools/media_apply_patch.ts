import * as z from 'zod';
import { SandboxError, invalidInput } from '../errors.ts';
import { defineTool } from '../tool.ts';
import { applyEdits, applyUnified, type PatchOutcome } from '../media/patch.ts';
import { textOf } from '../media/lineage.ts';
import { encodeText } from '../text/encoding.ts';
import { lineCounts } from '../text/line-counts.ts';

const editSchema = z.strictObject({
  find: z.string().min(1, { error: 'find is empty, and an empty find would match everywhere; give the exact text to replace' }).describe('Exact text to find (must match once unless replace_all; line endings may differ).'),
  replace: z.string().describe('Text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one.'),
});

export const applyPatchSchema = () => z.strictObject({
  media_id: z.string().min(1).describe('The media to patch (from stage_file or an earlier media_apply_patch).'),
  patch: z.union([
    editSchema,
    z.array(editSchema).min(1),
    z.strictObject({ unified: z.string().min(1).describe('A unified diff against the media\'s content.') }),
  ], { error: 'expected one {find, replace, replace_all?} edit with a non-empty find, a non-empty list of such edits, or {unified: "<unified diff>"}, with no other keys' }).describe('One {find, replace, replace_all?} edit, a list of them applied in order, or {unified: "<unified diff>"}.'),
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
  return `${JSON.stringify(r)}\n${r.media_id} is in memory only (${r.parent_id} stays valid); nothing changes on disk until save_media with media_id "${r.media_id}".`;
}

export const applyPatch = defineTool({
  name: 'media_apply_patch',
  displayName: 'Apply Patch',
  userDescription: 'Apply find/replace edits or a unified diff to a staged file (writes nothing).',
  description: 'Patches a staged media in memory and returns a NEW media_id with +added/-removed line counts; earlier media ids stay valid. Nothing changes on disk until save_media. Edits are {find, replace, replace_all?} (exact match first, then with line endings normalized), a list of them, or {unified: diff}. A find that matches several times without replace_all, or nowhere, is an error that shows the lines.',
  risk: 'write',
  requires: ['writable'],
  needs: ['media'],
  icon: 'diff',
  schema: applyPatchSchema,
  targets: (input, scope) => {
    const { path, taint } = scope.media.get(input.media_id);
    // Security: whether a patch applies tells what the media holds, so a tainted one is judged by its read rule.
    if (!taint) return { paths: [path], summary: `patch staged ${path.display}` };
    return { paths: [path], summary: `patch staged ${path.display} holding content from the protected "${taint.from}"`, taint };
  },
  run: async (input, ctx): Promise<ApplyPatchResult> => {
    const store = ctx.media;
    const parent = store.get(input.media_id);
    const subject = { mediaId: parent.id, display: parent.path.display, maxChars: store.options.budgetBytes(), ...(parent.taint ? { protectedFrom: parent.taint.from } : {}) };
    if (parent.encoding === 'binary') {
      throw new SandboxError('E_SANDBOX_BINARY', `Media ${parent.id} ("${parent.path.display}") holds binary bytes, so it cannot be patched as text.`, `Stage a text file, or replace the whole file with stage_file and content.`);
    }
    const text = textOf(parent.bytes, parent.encoding);
    const patch = input.patch;
    const outcome: PatchOutcome = 'unified' in patch
      ? applyUnified(text, patch.unified, subject)
      : applyEdits(text, Array.isArray(patch) ? patch : [patch], parent.eol, subject);
    if (outcome.text === text) {
      throw invalidInput(`The patch leaves ${parent.id} ("${parent.path.display}") exactly as it was (the replacement equals the text it replaces once the file's line endings are applied), so no media was made.`, `Give the change you want in replace.`);
    }
    const child = store.derive(parent.id, encodeText(outcome.text, parent.encoding, parent.path.display), outcome.text);
    const counts = lineCounts(text, outcome.text);
    return {
      media_id: child.id,
      parent_id: parent.id,
      path: child.path.display,
      ...counts,
      bytes: child.bytes.byteLength,
      lines: child.lines,
      ...(outcome.normalizedEdits.length ? { normalized_line_endings: outcome.normalizedEdits } : {}),
    };
  },
  render: renderApplyPatch,
});
