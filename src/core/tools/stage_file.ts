import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import { notImplemented } from './pending.ts';

export const stageFileSchema = () => z.strictObject({
  path: pathArgument('The file to stage (existing, or new when content is given)'),
  content: z.string().optional().describe('The full new content. Omit to stage the file\'s current bytes for patching.'),
});

export const stageFile = defineTool({
  name: 'stage_file',
  displayName: 'Stage File',
  userDescription: 'Stage an in-memory copy of a file for editing (writes nothing).',
  description: 'The edit is in memory; nothing changes on disk until save_media. Stages a media: an in-memory copy of a file\'s current bytes (to patch with apply_patch), or, with content, the full content of a new or replaced file. Returns {media_id, path, bytes, lines, encoding, eol, isNew}. The user sees the staged version as a diff against disk. Always finish with save_media, or the change is lost.',
  risk: 'write',
  requires: ['writable'],
  icon: 'git-stage',
  schema: stageFileSchema,
  targets: (input, session) => ({ paths: [session.normalize(input.path)], summary: `stage ${input.path}${input.content !== undefined ? ' with new content' : ''}` }),
  run: notImplemented('stage_file'),
  render: (result: unknown) => JSON.stringify(result),
});
