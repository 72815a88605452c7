import * as z from 'zod';
import { defineTool, soleTarget, type CallContext } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import type { ResolvedPath } from '../paths.ts';
import type { ArtifactHandle } from '../artifacts/types.ts';
import { renderOpenFile } from '../artifacts/render.ts';
import { windowIfAsked, type OpenWindow } from '../artifacts/window.ts';
import { pageArguments } from './artifact_read.ts';

export const openFileSchema = () => z.strictObject({
  path: pathArgument('The file to open'),
  ...pageArguments(' with the handle (omit both offset and limit for the handle alone)'),
});

/** The gated I/O step shared by the open tools: the approved path, checked on disk (links, and the policy of where they lead). */
export async function resolveForOpen(ctx: CallContext): Promise<ResolvedPath> {
  return ctx.resolve(soleTarget(ctx));
}

/** The handle, and the page asked for with it (`offset`/`limit`). */
export type OpenFileResult = ArtifactHandle & { readonly window?: OpenWindow };

export const openFile = defineTool({
  name: 'open_file',
  displayName: 'Open File',
  userDescription: 'Open a workspace file as a read-only artifact the model can page and search.',
  description: 'Opens a workspace file as an artifact: a snapshot of its bytes at this moment, spooled and line-indexed. Returns a handle {callId, path, bytes, lines, encoding, eol, binary, mtime}; with `offset` and/or `limit` (as artifact_read takes them: 1-based, negative counts from the end) it also returns that page, line-numbered, in the same call, so opening and reading 40 lines around a search hit is one call. Without them no content is returned. Read further with artifact_read (pages by line), search with artifact_grep. The snapshot does not change if the file does; open again to see a newer version. Use open_json_file for JSON and open_markdown_file for Markdown to also get their structure.',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'file',
  schema: openFileSchema,
  targets: (input, scope) => ({ paths: [scope.normalize(input.path)], summary: `open ${input.path}${windowSummary(input)}` }),
  run: async (input, ctx): Promise<OpenFileResult> => {
    const handle = await ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal);
    return { ...handle, ...await windowIfAsked(ctx.artifacts, handle, input, ctx.signal) };
  },
  render: renderOpenFile,
});

/** The page asked for, in the person's words for the gate: ` and read lines 40-79`. */
export function windowSummary(request: { readonly offset?: number | undefined; readonly limit?: number | undefined }): string {
  const { offset, limit } = request;
  if (offset === undefined && limit === undefined) return '';
  const from = offset ?? 1;
  if (from < 0) return ` and read ${limit === undefined ? '' : `${limit} lines `}from line ${from} (counted from the end)`;
  return limit === undefined ? ` and read from line ${from}` : ` and read lines ${from}-${from + limit - 1}`;
}
