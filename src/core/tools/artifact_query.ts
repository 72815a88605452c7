import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import type { ArtifactQueryResult } from '../artifacts/types.ts';
import { queryArtifact } from '../artifacts/query.ts';
import { renderQuery } from '../artifacts/render.ts';

export const artifactQuerySchema = () =>
  z.strictObject({
    callId: z
      .string()
      .min(1)
      .describe(
        'The callId from open_json_file, open_markdown_file, or open_file of a source file that returned an outline.',
      ),
    select: z
      .string()
      .describe(
        'For JSON: an RFC 6901 JSON Pointer ("" is the whole document, "/scripts/test"). For Markdown: a heading path separated by "/" ("Install/Linux"). For a source file with an outline: a symbol path ("Session/invoke").',
      ),
  });

export const artifactQuery = defineTool({
  name: 'artifact_query',
  displayName: 'Query Artifact',
  userDescription: 'Select a JSON subtree or a Markdown section from an opened artifact.',
  description:
    'Selects part of a structured artifact: for a JSON artifact a JSON Pointer gives that subtree (deep levels summarized, size-bounded); for a Markdown artifact a heading path gives that section\'s line range and text; for a source file whose outline open_file returned, a symbol path ("Session/invoke") gives that definition\'s lines. An unknown selection lists the valid ones near it.',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'symbol-structure',
  schema: artifactQuerySchema,
  targets: (input, scope) => {
    const path = scope.artifacts.target(input.callId);
    return { paths: [path], summary: `query ${path.display} at ${JSON.stringify(input.select)}` };
  },
  run: (input, ctx): Promise<ArtifactQueryResult> =>
    queryArtifact(ctx.artifacts, input.callId, input.select, ctx.signal),
  render: renderQuery,
});
