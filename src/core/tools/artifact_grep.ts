import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { ripgrepArgument, boundArgument } from '../schema.ts';
import { GREP_DEFAULT_MAX_RESULTS, type ArtifactGrepResult } from '../artifacts/store.ts';
import { renderGrep } from '../artifacts/render.ts';

export const artifactGrepSchema = () => z.strictObject({
  callId: z.string().min(1).describe('The callId from open_file, open_json_file or open_markdown_file.'),
  pattern: ripgrepArgument().describe('A regular expression (ripgrep syntax), or a fixed string with literal: true.'),
  literal: z.boolean().optional().describe('Treat pattern as a fixed string (default false). Works on binary artifacts too.'),
  ignore_case: z.boolean().optional().describe('Match case-insensitively (default false).'),
  maxResults: boundArgument(`Stop after this many matching lines (default ${GREP_DEFAULT_MAX_RESULTS}). A note says when results were cut.`).optional(),
  context: z.number().int().min(0).max(50).optional().describe('Lines of context before and after each match (0-50, default 0).'),
});

export const artifactGrep = defineTool({
  name: 'artifact_grep',
  displayName: 'Search Artifact',
  userDescription: 'Search inside one opened artifact with ripgrep.',
  description: 'Searches one artifact (from open_file) with ripgrep: a regex or, with literal: true, a fixed string. Returns matching line numbers and lines (cut at 2,000 characters) with optional context lines, and a note naming maxResults when results were cut. Then read around a match with artifact_read using offset.',
  risk: 'read',
  requires: ['ripgrep'],
  icon: 'search',
  schema: artifactGrepSchema,
  targets: (input, session) => {
    const path = session.artifacts.target(input.callId);
    return { paths: [path], summary: `search ${path.display} for ${JSON.stringify(input.pattern)}` };
  },
  run: (input, ctx): Promise<ArtifactGrepResult> => ctx.session.artifacts.grep(input.callId, {
    pattern: input.pattern,
    ...(input.literal !== undefined ? { literal: input.literal } : {}),
    ...(input.ignore_case !== undefined ? { ignoreCase: input.ignore_case } : {}),
    ...(input.maxResults !== undefined ? { maxResults: input.maxResults } : {}),
    ...(input.context !== undefined ? { context: input.context } : {}),
  }, ctx.signal),
  render: renderGrep,
});
