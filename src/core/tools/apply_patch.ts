import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { notImplemented } from './pending.ts';

const editSchema = z.strictObject({
  find: z.string().min(1).describe('Exact text to find (must match once unless replace_all; line endings may differ).'),
  replace: z.string().describe('Text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one.'),
});

export const applyPatchSchema = () => z.strictObject({
  media_id: z.string().min(1).describe('The media to patch (from stage_file or an earlier apply_patch).'),
  patch: z.union([
    editSchema,
    z.array(editSchema).min(1),
    z.strictObject({ unified: z.string().min(1).describe('A unified diff against the media\'s content.') }),
  ]).describe('One {find, replace, replace_all?} edit, a list of them applied in order, or {unified: "<unified diff>"}.'),
});

export const applyPatch = defineTool({
  name: 'apply_patch',
  displayName: 'Apply Patch',
  userDescription: 'Apply find/replace edits or a unified diff to a staged file (writes nothing).',
  description: 'Patches a staged media in memory and returns a NEW media_id with +added/-removed line counts; earlier media ids stay valid. Nothing changes on disk until save_media. Edits are {find, replace, replace_all?} (exact match first, then with line endings normalized), a list of them, or {unified: diff}. A find that matches several times without replace_all, or nowhere, is an error that shows the lines.',
  risk: 'write',
  requires: ['writable'],
  icon: 'diff',
  schema: applyPatchSchema,
  targets: (input, session) => {
    const path = session.media.target(input.media_id);
    return { paths: [path], summary: `patch staged ${path.display}` };
  },
  run: notImplemented('apply_patch'),
  render: (result: unknown) => JSON.stringify(result),
});
