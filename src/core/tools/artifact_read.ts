import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import type { ArtifactPage } from '../artifacts/types.ts';
import { PAGE_MAX_LINES, readArtifact } from '../artifacts/page.ts';
import { renderPage } from '../artifacts/render.ts';
import { pageRequestOf } from '../artifacts/window.ts';

export const ARTIFACT_PAGE_MAX_LINES = PAGE_MAX_LINES;

/** A page's `offset` and `limit`: artifact_read's, and the open tools' first look (`what` says what the page is of). */
export const pageArguments = (what = '') => ({
  offset: z
    .number()
    .int()
    .refine((n) => n !== 0, 'offset 0 is no line: lines are 1-based (1 is the first), and -1 is the last')
    .optional()
    .describe(
      `First line to return${what}, 1-based (default 1); negative counts from the end: -50 returns the last 50 lines (of a result still being written, once it has ended).`,
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(ARTIFACT_PAGE_MAX_LINES)
    .optional()
    .describe(
      `Number of lines to return${what} (default and maximum ${ARTIFACT_PAGE_MAX_LINES}; a page is also capped at 50 KiB).`,
    ),
});

export const artifactReadSchema = () =>
  z.strictObject({
    callId: z.string().min(1).describe('The callId from open_file, open_json_file or open_markdown_file.'),
    ...pageArguments(),
  });

export const artifactRead = defineTool({
  name: 'artifact_read',
  displayName: 'Read Artifact',
  userDescription: 'Read a page of lines from an opened artifact.',
  description:
    'Reads a page of an artifact opened by open_file: line-numbered text from the 1-based line `offset`, `limit` lines (at most 2,000 lines or 50 KiB per page; lines over 2,000 characters are cut with a marker). A negative `offset` reads the end: -1 is the last line, which for a result artifact says whether the result is complete (it waits for a result still being written to end). The result says startLine, endLine, truncated, and nextOffset when more follows: pass nextOffset as offset to continue. Prefer artifact_grep to find the lines you need first.',
  risk: 'read',
  requires: [],
  needs: ['artifacts'],
  icon: 'book',
  schema: artifactReadSchema,
  targets: (input, scope) => {
    const path = scope.artifacts.target(input.callId);
    const offset = input.offset ?? 1;
    return {
      paths: [path],
      summary:
        offset < 0
          ? `read ${path.display} from ${offset === -1 ? 'its last line' : `line ${offset} (counted from the end)`}`
          : `read ${path.display} from line ${offset}`,
    };
  },
  run: (input, ctx): Promise<ArtifactPage> =>
    readArtifact(ctx.artifacts, input.callId, pageRequestOf(input), ctx.signal),
  render: renderPage,
});
