import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import { notImplemented } from './pending.ts';

export const openFileSchema = () => z.strictObject({ path: pathArgument('The file to open') });

export const openFile = defineTool({
  name: 'open_file',
  displayName: 'Open File',
  userDescription: 'Open a workspace file as a read-only artifact the model can page and search.',
  description: 'Opens a workspace file as an artifact: a snapshot of its bytes at this moment, spooled and line-indexed. Returns a handle {callId, path, bytes, lines, encoding, eol, binary, mtime} and NO file content. Read it with artifact_read (pages by line), search it with artifact_grep. Use open_json_file for JSON and open_markdown_file for Markdown to also get their structure.',
  risk: 'read',
  requires: [],
  icon: 'file',
  schema: openFileSchema,
  targets: (input, session) => ({ paths: [session.normalize(input.path)], summary: `open ${input.path}` }),
  run: notImplemented('open_file'),
  render: (result: unknown) => JSON.stringify(result),
});
