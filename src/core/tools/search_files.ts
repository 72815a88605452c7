import * as z from 'zod';
import { defineTool, type SchemaDeclaration } from '../tool.ts';
import { boundArgument, followRejectedUnlessDeclared } from '../schema.ts';
import { notImplemented } from './pending.ts';

export const searchFilesSchema = (declaration: SchemaDeclaration) => z.strictObject({
  pattern: z.string().min(1).describe('What to find in file contents: a regular expression (ripgrep syntax), or a fixed string with literal: true.'),
  path: z.string().min(1).optional().describe('Folder to search under, relative to the workspace (default: every workspace folder).'),
  limit: boundArgument('Return at most this many matches (an integer >= 1). It bounds what reaches you, not what the host holds; omit it for every match.').optional(),
  max_depth: boundArgument('Descend at most this many folder levels (an integer >= 1). Omit for no bound.').optional(),
  ignore_case: z.boolean().optional().describe('Match case-insensitively.'),
  literal: z.boolean().optional().describe('Treat pattern as a fixed string, not a regex.'),
  glob: z.string().min(1).optional().describe('Only search files whose path matches this glob ("*.ts", "src/**/*.md"); prefix "!" to exclude.'),
  iglob: z.string().min(1).optional().describe('As glob, matched case-insensitively.'),
  hidden: z.boolean().optional().describe('Also search dot-prefixed files and folders.'),
  no_ignore: z.boolean().optional().describe('Also search files that .gitignore and similar files exclude.'),
  follow: followRejectedUnlessDeclared(declaration),
});

export const searchFiles = defineTool({
  name: 'search_files',
  displayName: 'Search Files',
  userDescription: 'Search file contents in the workspace with ripgrep.',
  description: 'Searches file contents across the workspace with ripgrep and returns matches grouped by file, with line numbers and the matching line (cut at 2,000 characters). `limit` bounds how many matches reach you, not what the host holds: an unbounded search on a huge tree buffers its whole output, so set limit for broad patterns. Reaching the limit is normal: a note names the value to raise. Secrets (.env, keys) and denied paths are never searched. Then open a hit with open_file and artifact_read.',
  risk: 'read',
  requires: ['search'],
  icon: 'search',
  schema: searchFilesSchema,
  targets: (input, session) => ({
    paths: input.path === undefined ? session.allRoots() : [session.normalize(input.path)],
    summary: `search ${JSON.stringify(input.pattern)} in ${input.path ?? 'the workspace'}`,
  }),
  run: notImplemented('search_files'),
  render: (result: unknown) => JSON.stringify(result),
});
