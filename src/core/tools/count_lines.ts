import * as z from 'zod';
import { defineTool } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import { resolveForOpen } from './open_file.ts';

export const countLinesSchema = () => z.strictObject({ path: pathArgument('The file whose lines to count') });

export interface CountLinesResult {
  readonly path: string;
  readonly lines: number;
}

export const countLines = defineTool({
  name: 'count_lines',
  displayName: 'Count Lines',
  userDescription: 'Count the lines of a file.',
  description: 'Counts the lines of a file without reading it into the conversation. Open it with open_file to read it.',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'list-ordered',
  schema: countLinesSchema,
  targets: (input, scope) => ({ paths: [scope.normalize(input.path)], summary: `count the lines of ${input.path}` }),
  run: async (input, ctx): Promise<CountLinesResult> => {
    const handle = await ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal);
    return { path: handle.path, lines: handle.lines };
  },
  render: (r) => `${r.path}: ${r.lines} lines`,
});
