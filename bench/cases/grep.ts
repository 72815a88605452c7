/**
 * artifact_grep with 50 lines of context on 100,000 lines (a match every 101 lines, so the result
 * is nearly every line, ~3 MB) vs `rg -n -C 50` on the same file (issue 26: this froze the host).
 * Ours is timed until the result artifact is complete (the call returns then); its first page, its
 * last line and what it held in memory are checked outside the timing.
 */
import type { BenchContext } from '../lib/context.ts';
import { coreHost, countLines, ripgrep, run } from '../lib/hosts.ts';
import { result } from '../lib/report.ts';
import { compare } from '../lib/stats.ts';
import { CONTEXT_FILE, contextFile } from '../lib/workloads.ts';
import { readArtifact } from '../../src/core/artifacts/page.ts';

interface PagedGrep {
  readonly summary: string;
  readonly artifact: { readonly callId: string; readonly lines: number; readonly complete: boolean };
}

export async function grepCases(ctx: BenchContext): Promise<void> {
  const file = contextFile();
  const host = await coreHost(file.dir);
  try {
    const opened = await host.invoke('open_file', { path: file.rel });
    const { callId } = opened.result as { callId: string };
    const input = { callId, pattern: CONTEXT_FILE.pattern, context: CONTEXT_FILE.context, maxResults: 10_000 };
    const seen = { callId: '', peer: -1, modelBytes: 0, heldBytes: 0 };
    ctx.log(
      `artifact_grep context ${CONTEXT_FILE.context} vs rg -C ${CONTEXT_FILE.context} (${CONTEXT_FILE.lines} lines)`,
    );
    const rg = ripgrep();
    const [ours, peer] = await compare(
      {
        label: `artifact_grep context ${CONTEXT_FILE.context} (core), artifact complete`,
        run: () => host.invoke('artifact_grep', input),
        check: (out) => {
          const paged = out.result as PagedGrep;
          if (!paged.artifact?.complete)
            throw new Error('artifact_grep returned before its result artifact was complete');
          seen.modelBytes = Buffer.byteLength(out.text);
          seen.heldBytes = host.session.artifacts.get(paged.artifact.callId).heldBytes ?? -1;
          seen.callId = paged.artifact.callId;
        },
      },
      {
        label: `rg -n -C ${CONTEXT_FILE.context} ${CONTEXT_FILE.pattern} <file>`,
        run: () => run(rg, ['-n', '-C', String(CONTEXT_FILE.context), CONTEXT_FILE.pattern, file.file]),
        check: (out) => {
          seen.peer = countLines(out.stdout);
        },
      },
      ctx.runs(7),
    );
    const last = (await readArtifact(host.session.artifacts, seen.callId, { offset: -1 })).lines[0]?.text ?? '';
    const expected = `done complete (${file.matches} matching lines for /${CONTEXT_FILE.pattern}/ in ${file.rel})`;
    const wrong = [
      ...(last !== expected ? [`ours ended "${last}", expected "${expected}"`] : []),
      ...(seen.peer !== file.shownLines ? [`rg printed ${seen.peer} lines, expected ${file.shownLines}`] : []),
    ];
    ctx.add(
      result({
        id: 'grep.context',
        title: `artifact_grep context ${CONTEXT_FILE.context} on ${CONTEXT_FILE.lines.toLocaleString('en-US')} lines (${file.shownLines.toLocaleString('en-US')} shown) vs rg -C ${CONTEXT_FILE.context}`,
        goal: { kind: 'ratio', max: 1.2 },
        ours,
        peer,
        ...(wrong.length ? { note: wrong.join('; ') } : {}),
        details: {
          matches: file.matches,
          shownLines: file.shownLines,
          modelBytes: seen.modelBytes,
          heldBytes: seen.heldBytes,
        },
      }),
    );
  } finally {
    await host.dispose();
  }
}
