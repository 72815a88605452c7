import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { notImplemented } from './pending.ts';

export const listMediaSchema = () => z.strictObject({});

export const listMedia = defineTool({
  name: 'list_media',
  displayName: 'List Staged Files',
  userDescription: 'List staged files that have not been saved.',
  description: 'Lists the staged media not yet saved: path, +/- against disk, age, parent id, and whether the user edited them. Anything listed here has NOT changed on disk; call save_media for each change you want to keep.',
  risk: 'read',
  requires: [],
  icon: 'checklist',
  schema: listMediaSchema,
  targets: () => ({ paths: [], summary: 'list staged files' }),
  run: notImplemented('list_media'),
  render: (result: unknown) => JSON.stringify(result),
});
