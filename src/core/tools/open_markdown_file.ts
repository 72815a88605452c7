import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import { pathArgument } from '../contract/schema.ts';
import type { ArtifactHandle, Heading } from '../artifacts/types.ts';
import { markdownOutline } from '../artifacts/query.ts';
import { renderOpenMarkdown } from '../artifacts/render.ts';
import { resolveForOpen, windowSummary } from './open_file.ts';
import { windowIfAsked, type OpenWindow } from '../artifacts/window.ts';
import { pageArguments } from './artifact_read.ts';

export const openMarkdownFileSchema = () =>
  z.strictObject({
    path: pathArgument('The Markdown file to open'),
    ...pageArguments(' with the handle and outline (omit both offset and limit for none)'),
  });

export interface OpenMarkdownResult {
  readonly handle: ArtifactHandle;
  readonly outline: readonly Heading[];
  /** Set when the outline stops early (too many headings): the line where it stops. */
  readonly outlineStopsAtLine?: number;
  /** The page asked for with the handle (`offset`/`limit`). */
  readonly window?: OpenWindow;
}

export const openMarkdownFile = defineTool({
  name: 'open_markdown_file',
  displayName: 'Open Markdown File',
  userDescription: 'Open a Markdown file as an artifact and show its heading outline.',
  description:
    'Opens a Markdown file as an artifact, like open_file, and also returns its heading outline (ATX "#" and underlined setext headings; "#" lines inside code blocks are not headings) with each section\'s line range. Read a section with artifact_query using its heading path ("Install/Linux"), or page it with artifact_read; with `offset` and/or `limit` (as artifact_read takes them) a page of its lines comes back in the same call.',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'markdown',
  schema: openMarkdownFileSchema,
  targets: (input, scope) => ({
    paths: [scope.normalize(input.path)],
    summary: `open Markdown ${input.path}${windowSummary(input)}`,
  }),
  run: async (input, ctx): Promise<OpenMarkdownResult> => {
    const handle = await ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal, 'markdown');
    const { headings, stoppedAtLine } = await markdownOutline(ctx.artifacts, handle.callId);
    return {
      handle,
      outline: headings,
      ...(stoppedAtLine !== undefined ? { outlineStopsAtLine: stoppedAtLine } : {}),
      ...(await windowIfAsked(ctx.artifacts, handle, input, ctx.signal)),
    };
  },
  render: renderOpenMarkdown,
});
