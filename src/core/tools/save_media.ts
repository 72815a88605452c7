import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import { notImplemented } from './pending.ts';

export const saveMediaSchema = () => z.strictObject({
  media_id: z.string().min(1).describe('The media to write (from stage_file or apply_patch).'),
  path: pathArgument('Where to write it (default: the path it was staged for)').optional(),
});

export const saveMedia = defineTool({
  name: 'save_media',
  displayName: 'Save Staged File',
  userDescription: 'Write a staged file to disk (the only tool that changes files).',
  description: 'This is the step that makes an edit real: writes a staged media to disk. Until it runs, stage_file and apply_patch changed nothing. Refuses with E_SANDBOX_CONFLICT when the file changed on disk since it was staged (stage it again), refuses symlinked paths and paths outside the write roots. Keeps the file\'s encoding, BOM and line endings. The result gives +/- counts, bytes written and other media of the same file that are now stale.',
  risk: 'write',
  requires: ['writable'],
  icon: 'save',
  schema: saveMediaSchema,
  targets: (input, session) => {
    const path = input.path === undefined ? session.media.target(input.media_id) : session.normalize(input.path);
    return { paths: [path], summary: `save ${path.display}` };
  },
  run: notImplemented('save_media'),
  render: (result: unknown) => JSON.stringify(result),
});
