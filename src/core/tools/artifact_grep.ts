import * as z from 'zod';
import { defineTool, soleTarget, type ToolContext } from '../contract/tool.ts';
import { ripgrepArgument, boundArgument } from '../contract/schema.ts';
import type { ArtifactGrepResult, GrepHead, GrepLine } from '../artifacts/types.ts';
import type { GrepByteSink } from '../artifacts/grep-bytes.ts';
import { GREP_DEFAULT_MAX_RESULTS, GREP_MAX_RESULTS, grepArtifact, type GrepLines } from '../artifacts/grep.ts';
import { grepLineRenderer, grepNotes, grepSummary, renderGrep, type ArtifactGrepOutput } from '../artifacts/render.ts';
import { fits } from '../paging/budget.ts';
import { ResultPager } from '../results/pager.ts';
import { isPaged } from '../paging/paged.ts';
import { streamResult } from '../results/stream.ts';
import { plural } from '../text/format.ts';

export const artifactGrepSchema = () =>
  z.strictObject({
    callId: z.string().min(1).describe('The callId from open_file, open_json_file or open_markdown_file.'),
    pattern: ripgrepArgument().describe('A regular expression (ripgrep syntax), or a fixed string with literal: true.'),
    literal: z
      .boolean()
      .optional()
      .describe('Treat pattern as a fixed string (default false). Works on binary artifacts too.'),
    ignore_case: z.boolean().optional().describe('Match case-insensitively (default false).'),
    maxResults: boundArgument(
      `Stop after this many matching lines (default ${GREP_DEFAULT_MAX_RESULTS}, at most ${GREP_MAX_RESULTS.toLocaleString('en-US')} a call: narrow the pattern beyond that). A note says when results were cut.`,
    ).optional(),
    context: z
      .number()
      .int()
      .min(0)
      .max(50)
      .optional()
      .describe('Lines of context before and after each match (0-50, default 0).'),
  });

export const artifactGrep = defineTool({
  name: 'artifact_grep',
  displayName: 'Search Artifact',
  userDescription: 'Search inside one opened artifact with ripgrep.',
  description:
    'Searches one artifact (from open_file, or a result artifact) with ripgrep: a regex or, with literal: true, a fixed string. Returns matching line numbers and lines (cut at 2,000 characters) with optional context lines, and a note naming maxResults when results were cut. Output larger than one page (50 KiB, or your token budget) is not dropped: you get its first page and the callId of a result artifact holding all of it, ending with a "done complete" line. Then read around a match with artifact_read using offset.',
  risk: 'read',
  requires: ['ripgrep'],
  needs: ['artifacts', 'ripgrep', 'log'],
  icon: 'search',
  schema: artifactGrepSchema,
  targets: (input, scope) => {
    const path = scope.artifacts.target(input.callId);
    return { paths: [path], summary: `search ${path.display} for ${JSON.stringify(input.pattern)}` };
  },
  run: async (input, ctx): Promise<ArtifactGrepOutput> => {
    // The store stops the grep if it is disposed while the result artifact is written.
    const stop = new AbortController();
    return grepArtifact(
      ctx.artifacts,
      ctx.ripgrep,
      input.callId,
      {
        pattern: input.pattern,
        ...(input.literal !== undefined ? { literal: input.literal } : {}),
        ...(input.ignore_case !== undefined ? { ignoreCase: input.ignore_case } : {}),
        ...(input.maxResults !== undefined ? { maxResults: input.maxResults } : {}),
        ...(input.context !== undefined ? { context: input.context } : {}),
      },
      AbortSignal.any([ctx.signal, stop.signal]),
      (head, lines) => streamGrep(ctx, head, lines, stop),
    );
  },
  render: renderGrep,
});

/**
 * The grep's lines through the pager: returned whole when they fit one page; else written to a
 * result artifact as they are read (never held), the call returning its first page once it is complete.
 */
async function streamGrep(
  ctx: ToolContext<'artifacts' | 'log'>,
  head: GrepHead,
  lines: GrepLines,
  stop: AbortController,
): Promise<ArtifactGrepOutput> {
  const pager = new ResultPager<GrepLine>({
    store: ctx.artifacts,
    budget: ctx.page,
    ...(ctx.progress ? { progress: ctx.progress } : {}),
    source: soleTarget(ctx),
    stop: () => stop.abort(),
    label: `artifact_grep ${JSON.stringify(head.pattern)} in ${head.path}`,
    render: grepLineRenderer(head.binary),
  });
  const summary = grepSummary(head);
  let written = 0;
  // Past the first page the lines go to the artifact as bytes: a million context lines make no strings.
  const sink: GrepByteSink = {
    get ready() {
      return pager.overflowed;
    },
    write: (bytes, count) => {
      written += count;
      return pager.addBytes(bytes);
    },
  };
  const output = await streamResult<GrepLine, ArtifactGrepResult>(
    pager,
    {
      pull: async () => {
        for await (const batch of lines(sink)) {
          for (const line of batch) {
            written++;
            const writing = pager.add(line);
            if (writing) await writing;
          }
        }
        return true;
      },
      small: async () => {
        // Keys in the order the result always had (the CLI prints it as JSON).
        const { callId, path, pattern, literal, binary, matchCount, ...rest } = head;
        const result: ArtifactGrepResult = {
          callId,
          path,
          pattern,
          literal,
          binary,
          matchCount,
          lines: pager.items,
          ...rest,
        };
        if (await fits(renderGrep(result), ctx.page)) return result;
        await pager.overflow();
        return undefined;
      },
      summary: () => summary,
      trailer: () => [
        ...grepNotes(head),
        head.limited ? `limit ${head.maxResults} reached (${summary}; more lines match)` : `done complete (${summary})`,
      ],
      brokeOff: (why) =>
        `incomplete: ${why} after ${plural(written, 'line')} of the result (${summary}); the lines above are all that was written`,
      // A session that ends while the result is written stops it on purpose: nothing to report.
      warn: (message) => {
        if (!stop.signal.aborted) ctx.log.warn(message);
      },
    },
    { untilEnd: true },
  );
  return isPaged<GrepLine>(output) ? { ...output, binary: head.binary } : output;
}
