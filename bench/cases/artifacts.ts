/**
 * The 1 GiB log: open_file vs cp (time, and peak RSS growth measured in a child process),
 * artifact_read of the last page vs the MCP server's read_text_file tail, artifact_grep vs rg.
 * (Folded in from bench/artifact-open.ts.)
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { coreHost, repoRoot, ripgrep, run } from '../lib/hosts.ts';
import { mcpAvailable, startMcp } from '../lib/mcp.ts';
import { result, skipped } from '../lib/report.ts';
import { compare, measure, round } from '../lib/stats.ts';
import { LOG, benchDir, type BigLog } from '../lib/workloads.ts';

interface ChildReport {
  readonly openMs: number;
  readonly firstReadMs: number;
  readonly bytes: number;
  readonly lines: number;
  readonly rssBefore: number;
  readonly peakRss: number;
  readonly sampledPeak: number;
  readonly peakFrom: string;
  readonly pageBytes: number;
}

const MiB = 1024 ** 2;

function sync(): void {
  execFileSync('sync');
}

async function openInChild(log: BigLog): Promise<ChildReport> {
  const out = await run(process.execPath, [
    '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    nodePath.join(repoRoot, 'bench/child/open-file.ts'),
    JSON.stringify({ root: log.dir, rel: log.rel }),
  ]);
  if (out.code !== 0) throw new Error(`the open_file child failed (exit ${out.code}): ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.toString('utf8')) as ChildReport;
}

interface Page {
  readonly startLine: number;
  readonly endLine: number;
  readonly truncated: boolean;
}

export async function artifactCases(ctx: BenchContext, log: BigLog): Promise<void> {
  const copy = nodePath.join(benchDir(), 'cp-target.log');
  const gib = (log.bytes / 1024 ** 3).toFixed(2);
  execFileSync('cat', [log.file], { stdio: ['ignore', 'ignore', 'inherit'] }); // the page cache warm for both sides

  // open_file vs cp: each open in a fresh child process (its RSS is the figure), each cp a fresh process.
  ctx.log(`open_file vs cp (${gib} GiB)`);
  const reports: ChildReport[] = [];
  const [open, cp] = await compare<ChildReport, unknown>(
    {
      label: 'open_file (core, child process)',
      before: () => {
        rmSync(copy, { force: true });
        sync();
      },
      run: () => openInChild(log),
      check: (r) => {
        if (r.bytes !== log.bytes || r.lines !== log.lines)
          throw new Error(
            `open_file reported ${r.bytes} bytes / ${r.lines} lines, expected ${log.bytes} / ${log.lines}`,
          );
        reports.push(r);
      },
      elapsed: (r) => r.openMs,
    },
    {
      label: 'cp',
      before: () => {
        rmSync(copy, { force: true });
        sync();
      },
      run: () => run('cp', [log.file, copy]),
    },
    ctx.runs(7),
  );
  rmSync(copy, { force: true });
  const timed = reports.slice(-open.values.length);
  const growth = timed.map((r) => (r.peakRss - r.rssBefore) / MiB);
  ctx.add(
    result({
      id: 'artifact.open',
      title: `open_file ${gib} GiB log vs cp`,
      goal: { kind: 'ratio', max: 1.3 },
      ours: open,
      peer: cp,
    }),
  );
  ctx.add(
    result({
      id: 'artifact.open.rss',
      title: 'open_file peak RSS growth (child process)',
      unit: 'MiB',
      goal: { kind: 'max', value: 64 },
      ours: { label: 'peak RSS − RSS before the open', values: growth },
      details: {
        peakFrom: timed[0]?.peakFrom,
        rssBeforeMiB: timed.map((r) => round(r.rssBefore / MiB)),
        sampledGrowthMiB: timed.map((r) => round((r.sampledPeak - r.rssBefore) / MiB)),
      },
    }),
  );

  // The rest on one artifact opened here.
  const host = await coreHost(log.dir);
  const mcp = mcpAvailable() ? await startMcp(log.dir) : undefined;
  try {
    const opened = await host.invoke('open_file', { path: log.rel });
    const { callId, lines } = opened.result as { callId: string; lines: number };
    // The last page: the page (2,000 lines or 50 KiB, whichever is less) that ends at the last line.
    const probe = (await host.invoke('artifact_read', { callId, offset: Math.max(1, lines - 1999) })).result as Page;
    let offset = Math.max(1, lines - (probe.endLine - probe.startLine));
    for (;;) {
      const page = (await host.invoke('artifact_read', { callId, offset })).result as Page;
      if (page.endLine === lines && !page.truncated) break;
      offset++;
    }
    const pageLines = lines - offset + 1;
    ctx.log(`artifact_read of the last page (${pageLines} lines) vs MCP read_text_file tail 2000`);
    const sizes = { ours: 0, mcp: 0 };
    const readOurs = {
      label: `artifact_read offset ${offset} (${pageLines} lines, core)`,
      run: () => host.invoke('artifact_read', { callId, offset }),
      check: (out: { text: string }) => {
        sizes.ours = Buffer.byteLength(out.text);
      },
    };
    const firstReads = { label: 'first artifact_read after open (child)', values: timed.map((r) => r.firstReadMs) };
    if (mcp) {
      const [ours, peer] = await compare(
        readOurs,
        {
          label: `MCP read_text_file tail 2000 (server-filesystem ${mcp.version})`,
          run: () => mcp.call('read_text_file', { path: log.file, tail: 2000 }),
          check: (out) => {
            if (out.isError) throw new Error(`MCP read_text_file failed: ${out.text.slice(0, 300)}`);
            sizes.mcp = Buffer.byteLength(out.text);
          },
        },
        ctx.runs(11),
        0,
      );
      ctx.add(
        result({
          id: 'artifact.read',
          title: 'artifact_read last page after open vs MCP read_text_file tail 2000',
          goal: { kind: 'max', value: 50 },
          ours,
          peer,
          note: `pages returned: ours ${sizes.ours} bytes (${pageLines} lines, the 50 KiB page cap), MCP ${sizes.mcp} bytes (2,000 lines)`,
          details: {
            offset,
            pageLines,
            oursBytes: sizes.ours,
            mcpBytes: sizes.mcp,
            firstReadAfterOpenMs: firstReads.values.map(round),
          },
        }),
      );
    } else {
      const ours = await measure(readOurs, ctx.runs(11), 0);
      ctx.add(
        result({
          id: 'artifact.read',
          title: 'artifact_read last page after open',
          goal: { kind: 'max', value: 50 },
          ours,
          note: 'MCP peer not installed',
        }),
      );
    }
    ctx.add(
      result({
        id: 'artifact.read.first',
        title: 'artifact_read last 2,000 lines, first call after open (child)',
        goal: { kind: 'max', value: 50 },
        ours: firstReads,
      }),
    );

    // artifact_grep gives ripgrep no --threads (src/core/artifacts/grep.ts), and ripgrep searches one
    // file in one thread whatever it is given: `rg -n` on the file runs with the same threads.
    const rg = ripgrep();
    ctx.log('artifact_grep needle vs rg');
    let hits = -1;
    const [grep, rgNeedle] = await compare(
      {
        label: 'artifact_grep (core)',
        run: () => host.invoke('artifact_grep', { callId, pattern: LOG.needle }),
        check: (out) => {
          hits = (out.result as { matchCount: number }).matchCount;
        },
      },
      {
        label: `rg -n ${LOG.needle} <file>`,
        run: () => run(rg, ['-n', LOG.needle, log.file]),
      },
      ctx.runs(11),
    );
    ctx.add(
      result({
        id: 'artifact.grep',
        title: `artifact_grep needle at the end of ${gib} GiB vs rg -n (same threads)`,
        goal: { kind: 'ratio', max: 1.2 },
        ours: grep,
        peer: rgNeedle,
        ...(hits !== 1 ? { note: `expected 1 match, got ${hits}` } : {}),
      }),
    );

    ctx.log('artifact_grep every match vs rg');
    let every: number | undefined = -1;
    const [grepAll, rgAll] = await compare(
      {
        label: 'artifact_grep maxResults 1e6 (core)',
        run: () => host.invoke('artifact_grep', { callId, pattern: log.everyMatchPattern, maxResults: 1_000_000 }),
        check: (out) => {
          every = grepMatchCount(out.result);
        },
      },
      {
        label: `rg -n "${log.everyMatchPattern}" <file>`,
        run: () => run(rg, ['-n', log.everyMatchPattern, log.file]),
      },
      ctx.runs(5),
    );
    ctx.add(
      result({
        id: 'artifact.grep.every',
        title: `artifact_grep ${log.everyMatchCount} matches in ${gib} GiB vs rg -n (same threads)`,
        goal: { kind: 'ratio', max: 1.1 },
        ours: grepAll,
        peer: rgAll,
        ...(every !== log.everyMatchCount ? { note: `expected ${log.everyMatchCount} matches, got ${every}` } : {}),
      }),
    );
    if (!mcp)
      ctx.add(
        skipped(
          'artifact.read.mcp',
          'MCP read_text_file tail 2000',
          { kind: 'none' },
          '@modelcontextprotocol/server-filesystem is not installed',
        ),
      );
  } finally {
    await mcp?.close();
    await host.dispose();
  }
}

/** The matching-line count of an artifact_grep result, whole or paged into a result artifact (its summary counts them). */
function grepMatchCount(result: unknown): number | undefined {
  const r = result as { matchCount?: number; summary?: string };
  if (typeof r.matchCount === 'number') return r.matchCount;
  const counted = /^([\d,]+) matching line/.exec(r.summary ?? '');
  return counted ? Number(counted[1]!.replace(/,/g, '')) : undefined;
}
