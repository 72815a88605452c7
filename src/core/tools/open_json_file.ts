import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import { pathArgument } from '../contract/schema.ts';
import type { ArtifactHandle, JsonShape } from '../artifacts/types.ts';
import { jsonShape } from '../artifacts/query.ts';
import { renderOpenJson } from '../artifacts/render.ts';
import { resolveForOpen, windowSummary } from './open_file.ts';
import { windowIfAsked, type OpenWindow } from '../artifacts/window.ts';
import { pageArguments } from './artifact_read.ts';

export const openJsonFileSchema = () =>
  z.strictObject({
    path: pathArgument('The JSON or JSONC file to open'),
    ...pageArguments(' with the handle and shape (omit both offset and limit for none)'),
  });

export interface OpenJsonResult {
  readonly handle: ArtifactHandle;
  readonly shape: JsonShape;
  /** The page asked for with the handle (`offset`/`limit`). */
  readonly window?: OpenWindow;
}

export const openJsonFile = defineTool({
  name: 'open_json_file',
  displayName: 'Open JSON File',
  userDescription: 'Open a JSON file as an artifact and show its top-level shape.',
  description:
    'Opens a JSON file (comments and trailing commas tolerated) as an artifact, like open_file, and also returns its top-level shape: the type, the keys with their value types and sizes, array lengths, and the line each starts on. No values beyond that. Drill in with artifact_query using a JSON Pointer ("/dependencies/zod"), or page it with artifact_read; with `offset` and/or `limit` (as artifact_read takes them) a page of its lines comes back in the same call. Invalid JSON gives an error with line and column (the file stays open for artifact_read).',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'json',
  schema: openJsonFileSchema,
  targets: (input, scope) => ({
    paths: [scope.normalize(input.path)],
    summary: `open JSON ${input.path}${windowSummary(input)}`,
  }),
  run: async (input, ctx): Promise<OpenJsonResult> => {
    const handle = await ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal, 'json');
    return {
      handle,
      shape: await jsonShape(ctx.artifacts, handle.callId),
      ...(await windowIfAsked(ctx.artifacts, handle, input, ctx.signal)),
    };
  },
  render: renderOpenJson,
});
