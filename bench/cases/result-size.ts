/**
 * One task, two tool sets: "find where NEEDLE is defined in the 20,000-file tree and read the 40
 * lines around it". Counts the bytes of tool results that reach the model (the text each tool
 * returns; requests are not counted). Both sides are scripted the way a capable agent would use
 * the tools it has.
 *
 * Ours: search_files "NEEDLE" → pick the line that defines it → open_file → artifact_read 40 lines.
 * MCP filesystem server (it has no content search):
 *   - realistic: search_files "** /*" (vendor/ excluded) to list the tree, then read_multiple_files
 *     in batches of 50, in sorted path order, until a file defines NEEDLE (every byte read reaches
 *     the model);
 *   - lower bound: an agent that already knows the file and line: read_text_file head: line + 20
 *     (the server reads only the head or the tail of a file, never a range).
 */
import * as nodePath from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { coreHost } from '../lib/hosts.ts';
import { mcpAvailable, startMcp } from '../lib/mcp.ts';
import { result, skipped } from '../lib/report.ts';
import { SOURCE, type SourceTree } from '../lib/workloads.ts';

const DEFINES = /\b(?:const|let|var|function|class)\s+NEEDLE\b/;
const BATCH = 50;

export async function resultSizeCases(ctx: BenchContext, source: SourceTree): Promise<void> {
  const title = 'result size: find where NEEDLE is defined, read 40 lines around it';
  ctx.log(title);
  const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

  // Ours.
  const host = await coreHost(source.dir);
  let ours: { bytes: number; calls: { tool: string; bytes: number }[]; found: string };
  try {
    const calls: { tool: string; bytes: number }[] = [];
    const search = await host.invoke('search_files', { pattern: 'NEEDLE' });
    calls.push({ tool: 'search_files', bytes: bytes(search.text) });
    const hit = (search.result as { kind: string; path?: string; line?: number; text?: string }[]).find(
      (f) => f.kind === 'match' && DEFINES.test(f.text ?? ''),
    );
    if (!hit?.path || !hit.line) throw new Error('search_files did not find the definition of NEEDLE');
    const open = await host.invoke('open_file', { path: hit.path });
    calls.push({ tool: 'open_file', bytes: bytes(open.text) });
    const { callId } = open.result as { callId: string };
    const read = await host.invoke('artifact_read', { callId, offset: Math.max(1, hit.line - 20), limit: 40 });
    calls.push({ tool: 'artifact_read', bytes: bytes(read.text) });
    ours = { bytes: calls.reduce((n, c) => n + c.bytes, 0), calls, found: `${hit.path}:${hit.line}` };
  } finally {
    await host.dispose();
  }
  const expected = `${SOURCE.definition.path}:${SOURCE.definition.line}`;
  if (ours.found !== expected) throw new Error(`ours found ${ours.found}, expected ${expected}`);

  if (!mcpAvailable()) {
    ctx.add(
      result({
        id: 'size.needle',
        title,
        unit: 'bytes',
        goal: { kind: 'smaller' },
        ours: { label: 'ours', values: [ours.bytes] },
        details: { ours },
      }),
    );
    ctx.add(
      skipped(
        'size.needle.mcp',
        'result size, MCP server',
        { kind: 'smaller' },
        '@modelcontextprotocol/server-filesystem is not installed',
      ),
    );
    return;
  }

  const mcp = await startMcp(source.dir);
  try {
    // Realistic: list, then read in batches until the definition shows up.
    const calls: { tool: string; bytes: number }[] = [];
    const listing = await mcp.call('search_files', {
      path: source.dir,
      pattern: '**/*',
      excludePatterns: ['vendor', 'vendor/**'],
    });
    calls.push({ tool: 'search_files', bytes: bytes(listing.text) });
    // Sorted, so the walk is the same on every machine (the server lists in readdir order).
    const candidates = listing.text
      .split('\n')
      .filter((p) => /\.(ts|js|py|md|json)$/.test(p))
      .sort();
    let found: string | undefined;
    let filesRead = 0;
    for (let i = 0; i < candidates.length && !found; i += BATCH) {
      const batch = candidates.slice(i, i + BATCH);
      const reply = await mcp.call('read_multiple_files', { paths: batch });
      if (reply.isError) throw new Error(`MCP read_multiple_files failed: ${reply.text.slice(0, 300)}`);
      calls.push({ tool: 'read_multiple_files', bytes: bytes(reply.text) });
      filesRead += batch.length;
      // Each file comes back as "<path>:\n<content>\n", joined by "\n---\n".
      found = reply.text
        .split('\n---\n')
        .find((section) => DEFINES.test(section))
        ?.split(':\n', 1)[0];
    }
    if (!found) throw new Error('the MCP walk did not find the definition of NEEDLE');
    const realistic = calls.reduce((n, c) => n + c.bytes, 0);
    const byTool = (tool: string): number => calls.filter((c) => c.tool === tool).reduce((n, c) => n + c.bytes, 0);

    // Lower bound: the file and line known in advance.
    const head = await mcp.call('read_text_file', {
      path: nodePath.join(source.dir, SOURCE.definition.path),
      head: SOURCE.definition.line + 20,
    });
    const lowerBound = bytes(head.text);

    ctx.add(
      result({
        id: 'size.needle',
        title: `${title} — vs MCP (list + read until found)`,
        unit: 'bytes',
        goal: { kind: 'smaller' },
        ours: { label: 'ours', values: [ours.bytes] },
        peer: {
          label: `MCP: search_files + read_multiple_files (${filesRead} of ${candidates.length} files read)`,
          values: [realistic],
        },
        details: {
          ours,
          mcp: {
            bytes: realistic,
            searchFilesBytes: byTool('search_files'),
            readBytes: byTool('read_multiple_files'),
            readCalls: calls.length - 1,
            filesRead,
            found: nodePath.relative(source.dir, found),
          },
        },
      }),
    );
    ctx.add(
      result({
        id: 'size.needle.lower',
        title: `${title} — vs MCP lower bound (file and line known)`,
        unit: 'bytes',
        goal: { kind: 'smaller' },
        ours: { label: 'ours', values: [ours.bytes] },
        peer: { label: `MCP: read_text_file head ${SOURCE.definition.line + 20}`, values: [lowerBound] },
        details: { mcpLowerBound: lowerBound },
      }),
    );
  } finally {
    await mcp.close();
  }
}
