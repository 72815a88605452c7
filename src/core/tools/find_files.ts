import * as z from 'zod';
import { defineTool, type SchemaDeclaration } from '../contract/tool.ts';
import { ripgrepArgument, boundArgument, followRejectedUnlessDeclared } from '../contract/schema.ts';
import { hiddenBy, renderPaths, runSearch, type SearchOutput } from '../search/results.ts';

export const findFilesSchema = (declaration: SchemaDeclaration) =>
  z.strictObject({
    glob: ripgrepArgument().describe(
      'Glob for the file paths to find, relative to the workspace folder: "*.ts" matches the name at any depth, "src/**/test_*.py" the whole path, "!*.md" everything else. Dot-prefixed and git-ignored files need hidden / no_ignore, whatever the glob.',
    ),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('Folder to search under, relative to the workspace (default: every workspace folder).'),
    limit: boundArgument(
      'Return at most this many paths (an integer >= 1); omit it for every path (a result over one page goes to a result artifact).',
    ).optional(),
    max_depth: boundArgument(
      'Descend at most this many folder levels below path (an integer >= 1; 1 = only files directly in it). Omit for no bound.',
    ).optional(),
    iglob: ripgrepArgument()
      .optional()
      .describe(
        'An additional glob the paths must match, case-insensitively (glob "*" with iglob "readme*" finds README.md and readme.txt).',
      ),
    hidden: z.boolean().optional().describe('Also list dot-prefixed files and folders.'),
    no_ignore: z.boolean().optional().describe('Also list files that .gitignore and similar files exclude.'),
    follow: followRejectedUnlessDeclared(declaration),
  });

export const findFiles = defineTool({
  name: 'find_files',
  displayName: 'Find Files',
  userDescription: 'Find files by name in the workspace with ripgrep.',
  description:
    'Finds files whose workspace-relative path matches a glob, with ripgrep, and returns the paths, one a line. Without `limit` every path is found. A result larger than one page (50 KiB, or your token budget) is not dropped: you get its first page and the callId of a result artifact holding all of it, ending with a "done complete" line; page it with artifact_read and search it with artifact_grep. Reaching an explicit limit is normal: a note names the value to raise. When nothing matches, a note says what may have hidden files. Secrets and denied paths are never listed.',
  risk: 'read',
  requires: ['search'],
  needs: ['search', 'policy', 'roots', 'artifacts', 'log', 'fs'],
  icon: 'go-to-file',
  schema: findFilesSchema,
  targets: (input, scope) => ({
    paths: scope.folderScope(input.path),
    summary: `find ${JSON.stringify(input.glob)} in ${input.path ?? 'the workspace'}`,
  }),
  run: (input, ctx): Promise<SearchOutput> =>
    runSearch(ctx, {
      tool: 'find_files',
      finds: 'paths',
      limit: input.limit,
      noun: ['path', 'paths'],
      label: `find_files ${JSON.stringify(input.glob)}${input.path === undefined ? '' : ` in ${input.path}`}`,
      emptyNote: `No file matches ${JSON.stringify(input.glob)}${input.iglob !== undefined ? ` and ${JSON.stringify(input.iglob)} (any case)` : ''} in ${input.path === undefined ? 'the workspace' : JSON.stringify(input.path)}. What might have hidden files: ${hiddenBy({ hidden: input.hidden, noIgnore: input.no_ignore, maxDepth: input.max_depth })}.`,
      query: (search, scopes, signal) =>
        search.findPaths({
          scopes,
          policy: ctx.policy,
          signal,
          glob: input.glob,
          iglob: input.iglob,
          limit: input.limit,
          maxDepth: input.max_depth,
          hidden: input.hidden,
          noIgnore: input.no_ignore,
          follow: input.follow,
        }),
    }),
  render: renderPaths,
});
