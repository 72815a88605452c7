import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import { notImplemented } from './pending.ts';

export const openMarkdownFileSchema = () => z.strictObject({ path: pathArgument('The Markdown file to open') });

export const openMarkdownFile = defineTool({
  name: 'open_markdown_file',
  displayName: 'Open Markdown File',
  userDescription: 'Open a Markdown file as an artifact and show its heading outline.',
  description: 'Opens a Markdown file as an artifact, like open_file, and also returns its heading outline with each section\'s line range. Read a section with artifact_query using its heading path ("Install/Linux"), or page it with artifact_read.',
  risk: 'read',
  requires: [],
  icon: 'markdown',
  schema: openMarkdownFileSchema,
  targets: (input, session) => ({ paths: [session.normalize(input.path)], summary: `open Markdown ${input.path}` }),
  run: notImplemented('open_markdown_file'),
  render: (result: unknown) => JSON.stringify(result),
});
