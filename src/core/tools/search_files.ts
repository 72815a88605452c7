import * as z from 'zod';
import { defineTool, type SchemaDeclaration } from '../contract/tool.ts';
import { ripgrepArgument, boundArgument, followRejectedUnlessDeclared } from '../contract/schema.ts';
import { hiddenBy, renderMatches, runSearch, type SearchOutput } from '../search/results.ts';

export const searchFilesSchema = (declaration: SchemaDeclaration) =>
  z.strictObject({
    pattern: ripgrepArgument().describe(
      'What to find in file contents: a regular expression (ripgrep syntax), or a fixed string with literal: true.',
    ),
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Folder (or single file) to search under, relative to the workspace (default: every workspace folder).',
      ),
    limit: boundArgument(
      'Return at most this many matching lines (an integer >= 1); omit it for every match (a result over one page goes to a result artifact).',
    ).optional(),
    max_depth: boundArgument(
      'Descend at most this many folder levels below path (an integer >= 1; 1 = only files directly in it). Omit for no bound.',
    ).optional(),
    ignore_case: z.boolean().optional().describe('Match case-insensitively.'),
    literal: z.boolean().optional().describe('Treat pattern as a fixed string, not a regex.'),
    glob: ripgrepArgument()
      .optional()
      .describe(
        'Only search files whose path matches this glob ("*.ts", "src/**/*.md"), relative to the workspace folder; prefix "!" to exclude. As in ripgrep, a file the glob matches is searched even if it is dot-prefixed or git-ignored.',
      ),
    iglob: ripgrepArgument()
      .optional()
      .describe(
        'As glob, matched case-insensitively. Given together with glob, a file matching either one is searched.',
      ),
    hidden: z.boolean().optional().describe('Also search dot-prefixed files and folders.'),
    no_ignore: z.boolean().optional().describe('Also search files that .gitignore and similar files exclude.'),
    follow: followRejectedUnlessDeclared(declaration),
  });

export const searchFiles = defineTool({
  name: 'search_files',
  displayName: 'Search Files',
  userDescription: 'Search file contents in the workspace with ripgrep.',
  description:
    'Searches file contents across the workspace with ripgrep and returns matching lines grouped by file, with line numbers (each line cut at 2,000 characters). Without `limit` every match is found. A result larger than one page (50 KiB, or your token budget) is not dropped: you get its first page and the callId of a result artifact holding all of it, ending with a "done complete" line; page it with artifact_read and search it with artifact_grep. Reaching an explicit limit is normal: a note names the value to raise. When nothing matches, a note says what may have hidden matches. Secrets (.env, keys) and denied paths are never searched. Then open a hit with open_file and read around it with artifact_read.',
  risk: 'read',
  requires: ['search'],
  needs: ['search', 'policy', 'roots', 'artifacts', 'log', 'fs'],
  icon: 'search',
  schema: searchFilesSchema,
  targets: (input, scope) => ({
    paths: scope.folderScope(input.path),
    summary: `search ${JSON.stringify(input.pattern)} in ${input.path ?? 'the workspace'}`,
  }),
  run: (input, ctx): Promise<SearchOutput> => {
    const globs = [input.glob, input.iglob].filter((g) => g !== undefined);
    const how = `${input.literal ? ' (literal)' : ''}${input.ignore_case ? ' (ignoring case)' : ''}`;
    return runSearch(ctx, {
      tool: 'search_files',
      finds: 'lines',
      limit: input.limit,
      noun: ['matching line', 'matching lines'],
      label: `search_files ${JSON.stringify(input.pattern)}${input.path === undefined ? '' : ` in ${input.path}`}`,
      emptyNote: `No line matches ${JSON.stringify(input.pattern)}${how} in ${input.path === undefined ? 'the workspace' : JSON.stringify(input.path)}. What might have hidden matches: ${hiddenBy({ hidden: input.hidden, noIgnore: input.no_ignore, maxDepth: input.max_depth, globs })}.`,
      query: (search, scopes, signal) =>
        search.searchContent({
          scopes,
          policy: ctx.policy,
          signal,
          pattern: input.pattern,
          limit: input.limit,
          maxDepth: input.max_depth,
          literal: input.literal,
          ignoreCase: input.ignore_case,
          globs: input.glob === undefined ? [] : [input.glob],
          iglobs: input.iglob === undefined ? [] : [input.iglob],
          hidden: input.hidden,
          noIgnore: input.no_ignore,
          follow: input.follow,
        }),
    });
  },
  render: renderMatches,
});
