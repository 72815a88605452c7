import * as z from 'zod';
import { defineTool, type SchemaDeclaration } from '../tool.ts';
import { boundArgument, followRejectedUnlessDeclared } from '../schema.ts';
import { notImplemented } from './pending.ts';

export const findFilesSchema = (declaration: SchemaDeclaration) => z.strictObject({
  glob: z.string().min(1).describe('Glob for the file paths to find, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: z.string().min(1).optional().describe('Folder to search under, relative to the workspace (default: every workspace folder).'),
  limit: boundArgument('Return at most this many paths (an integer >= 1). It bounds what reaches you, not what the host holds; omit it for every path.').optional(),
  max_depth: boundArgument('Descend at most this many folder levels (an integer >= 1). Omit for no bound.').optional(),
  iglob: z.string().min(1).optional().describe('An additional glob the paths must match, case-insensitively.'),
  hidden: z.boolean().optional().describe('Also list dot-prefixed files and folders.'),
  no_ignore: z.boolean().optional().describe('Also list files that .gitignore and similar files exclude.'),
  follow: followRejectedUnlessDeclared(declaration),
});

export const findFiles = defineTool({
  name: 'find_files',
  displayName: 'Find Files',
  userDescription: 'Find files by name in the workspace with ripgrep.',
  description: 'Finds files whose workspace-relative path matches a glob, with ripgrep, and returns the paths. `limit` bounds how many paths reach you, not what the host holds: an unbounded find on a huge tree buffers its whole output. Reaching the limit is normal: a note names the value to raise. Secrets and denied paths are never listed.',
  risk: 'read',
  requires: ['search'],
  icon: 'go-to-file',
  schema: findFilesSchema,
  targets: (input, session) => ({
    paths: input.path === undefined ? session.allRoots() : [session.normalize(input.path)],
    summary: `find ${JSON.stringify(input.glob)} in ${input.path ?? 'the workspace'}`,
  }),
  run: notImplemented('find_files'),
  render: (result: unknown) => JSON.stringify(result),
});
