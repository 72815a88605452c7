import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import type { ArtifactHandle, JsonShape } from '../artifacts/types.ts';
import { jsonShape } from '../artifacts/query.ts';
import { renderOpenJson } from '../artifacts/render.ts';
import { resolveForOpen } from './open_file.ts';

export const openJsonFileSchema = () => z.strictObject({ path: pathArgument('The JSON or JSONC file to open') });

export interface OpenJsonResult {
  readonly handle: ArtifactHandle;
  readonly shape: JsonShape;
}

export const openJsonFile = defineTool({
  name: 'open_json_file',
  displayName: 'Open JSON File',
  userDescription: 'Open a JSON file as an artifact and show its top-level shape.',
  description: 'Opens a JSON file (comments and trailing commas tolerated) as an artifact, like open_file, and also returns its top-level shape: the type, the keys with their value types and sizes, array lengths, and the line each starts on. No values beyond that. Drill in with artifact_query using a JSON Pointer ("/dependencies/zod"), or page it with artifact_read. Invalid JSON gives an error with line and column (the file stays open for artifact_read).',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'json',
  schema: openJsonFileSchema,
  targets: (input, scope) => ({ paths: [scope.normalize(input.path)], summary: `open JSON ${input.path}` }),
  run: async (_input, ctx): Promise<OpenJsonResult> => {
    const handle = await ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal, 'json');
    return { handle, shape: await jsonShape(ctx.artifacts, handle.callId) };
  },
  render: renderOpenJson,
});
