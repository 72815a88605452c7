import * as z from 'zod';
import { defineTool, soleTarget, type CallContext } from '../tool.ts';
import { pathArgument } from '../schema.ts';
import type { ResolvedPath } from '../paths.ts';
import type { ArtifactHandle } from '../artifacts/types.ts';
import { renderOpenFile } from '../artifacts/render.ts';

export const openFileSchema = () => z.strictObject({ path: pathArgument('The file to open') });

/** The gated I/O step shared by the open tools: the approved path, checked on disk (links, and the policy of where they lead). */
export async function resolveForOpen(ctx: CallContext): Promise<ResolvedPath> {
  return ctx.resolve(soleTarget(ctx));
}

export const openFile = defineTool({
  name: 'open_file',
  displayName: 'Open File',
  userDescription: 'Open a workspace file as a read-only artifact the model can page and search.',
  description: 'Opens a workspace file as an artifact: a snapshot of its bytes at this moment, spooled and line-indexed. Returns a handle {callId, path, bytes, lines, encoding, eol, binary, mtime} and NO file content. Read it with artifact_read (pages by line), search it with artifact_grep. The snapshot does not change if the file does; open again to see a newer version. Use open_json_file for JSON and open_markdown_file for Markdown to also get their structure.',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'file',
  schema: openFileSchema,
  targets: (input, scope) => ({ paths: [scope.normalize(input.path)], summary: `open ${input.path}` }),
  run: async (_input, ctx): Promise<ArtifactHandle> => ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal),
  render: renderOpenFile,
});
