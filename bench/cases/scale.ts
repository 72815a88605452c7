/**
 * The 300,000- and 1,000,000-file monorepos: unbounded find_files, list_directory and search_files,
 * each in a fresh child process (its peak RSS growth is the memory figure), timed until the result
 * artifact is complete, against raw ripgrep (as is, and given the threads ours gives it) and GNU
 * find; and the time until the first page came back.
 */
import * as nodePath from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { countLines, repoRoot, ripgrep, run } from '../lib/hosts.ts';
import { result, type Goal } from '../lib/report.ts';
import { compareAll, round, type Side } from '../lib/stats.ts';
import { findThreads, searchThreads } from '../lib/threads.ts';
import type { ScaleTree } from '../lib/workloads.ts';

interface ChildReport {
  readonly firstPageMs: number;
  readonly totalMs: number;
  readonly modelBytes: number;
  readonly artifactBytes: number;
  readonly artifactLines: number;
  readonly heldBytes: number;
  readonly lastLine: string;
  readonly rssBefore: number;
  readonly peakRss: number;
  readonly sampledPeak: number;
  readonly peakFrom: string;
}

const MiB = 1024 ** 2;

async function inChild(root: string, tool: string, input: object): Promise<ChildReport> {
  const out = await run(process.execPath, [
    '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    nodePath.join(repoRoot, 'bench/child/scale.ts'),
    JSON.stringify({ root, tool, input }),
  ]);
  if (out.code !== 0) throw new Error(`the ${tool} child failed (exit ${out.code}): ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.toString('utf8')) as ChildReport;
}

/** A peer: its command, how many results its output holds, and the goal against it. */
interface Peer {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly count: (stdout: Buffer) => number;
  readonly goal: Goal;
}

interface Spec {
  readonly id: string;
  readonly title: string;
  readonly tool: 'find_files' | 'list_directory' | 'search_files';
  readonly input: Record<string, unknown>;
  /**
   * The peers, when there are: the last holds the goal; one before it is INFO (ripgrep as is, where
   * ours gives it threads of its own and the last is ripgrep given the same).
   */
  readonly peers: readonly Peer[];
  /** How many results the artifact's last line must name, when known in advance. */
  readonly expected?: number;
}

/** The goals of a scale group: the search's ratio against ripgrep (none at 300k files, ≤1.15× at 1M). */
export interface ScaleGoals {
  readonly group: string;
  readonly search: Goal;
}

/** ripgrep as is and, where ours gives it other `--threads`, given the same (which holds `goal`). */
function rgPeers(
  args: readonly string[],
  threads: readonly string[],
  count: (stdout: Buffer) => number,
  goal: Goal,
): Peer[] {
  const same: Peer = { cmd: 'rg', args: [...args, ...threads], count, goal };
  return threads.length === 0 ? [same] : [{ cmd: 'rg', args, count, goal: { kind: 'none' } }, same];
}

export async function scaleCases(ctx: BenchContext, tree: ScaleTree, goals: ScaleGoals): Promise<void> {
  const n = tree.files.toLocaleString('en-US');
  const rgLines = ['--no-heading', '--with-filename', '--line-number', '-i'];
  const specs: Spec[] = [
    {
      id: `${goals.group}.find`,
      title: `find_files "*" (${n} files) vs rg --files`,
      tool: 'find_files',
      input: { glob: '*' },
      peers: rgPeers(['--files'], findThreads('*'), (o) => countLines(o), { kind: 'ratio', max: 1.5 }),
      expected: tree.files,
    },
    {
      id: `${goals.group}.list`,
      title: `list_directory unbounded (${n} files, ${tree.folders.toLocaleString('en-US')} folders) vs GNU find -printf`,
      tool: 'list_directory',
      input: {},
      // A peer that stats every entry too (type and size), run in the folder so it prints the same relative paths; its first line is "." itself.
      peers: [
        {
          cmd: 'find',
          args: ['.', '-printf', '%y %s %p\n'],
          count: (o) => countLines(o) - 1,
          goal: { kind: 'ratio', max: 2 },
        },
      ],
      expected: tree.files + tree.folders,
    },
    {
      id: `${goals.group}.search`,
      title: `search_files "todo" ignore_case (${tree.todoLines.toLocaleString('en-US')} hits) vs rg -n -i`,
      tool: 'search_files',
      input: { pattern: 'todo', ignore_case: true },
      peers: rgPeers([...rgLines, 'todo'], searchThreads('todo', true), (o) => countLines(o), goals.search),
      expected: tree.todoLines,
    },
  ];
  for (const spec of specs) {
    ctx.log(spec.title);
    const reports: ChildReport[] = [];
    const ours: Side<ChildReport> = {
      label: `${spec.tool} (core, child process), until the result artifact is complete`,
      run: () => inChild(tree.dir, spec.tool, spec.input),
      check: (r) => {
        reports.push(r);
      },
      elapsed: (r) => r.totalMs,
    };
    const peerResults = spec.peers.map(() => -1);
    const [oursSample, peerSamples] = await compareAll(
      ours,
      spec.peers.map((p, k): Side<Buffer> => ({
        label: `${p.cmd} ${p.args.map((a) => (a.includes(' ') ? `'${a.replace(/\n/g, '\\n')}'` : a)).join(' ')}`,
        run: async () => (await run(p.cmd === 'rg' ? ripgrep() : p.cmd, p.args, { cwd: tree.dir })).stdout,
        check: (out) => {
          peerResults[k] = p.count(out);
        },
      })),
      ctx.runs(3),
    );
    const timed = reports.slice(-oursSample.values.length);
    const named = Number(/\((\d+) /.exec(timed.at(-1)?.lastLine ?? '')?.[1] ?? -1);
    const issues: string[] = [];
    if (!/^done complete/.test(timed.at(-1)?.lastLine ?? ''))
      issues.push(`the artifact ends "${timed.at(-1)?.lastLine ?? ''}"`);
    if (spec.expected !== undefined && named !== spec.expected)
      issues.push(`the artifact names ${named} results, expected ${spec.expected}`);
    spec.peers.forEach((p, k) => {
      if (peerResults[k] !== named) issues.push(`${p.cmd} found ${peerResults[k]}`);
    });
    const details = {
      input: spec.input,
      results: named,
      peerResults,
      modelBytes: timed.map((r) => r.modelBytes),
      artifactBytes: timed.at(-1)?.artifactBytes,
      heldBytes: timed.map((r) => r.heldBytes),
      peakFrom: timed[0]?.peakFrom,
      rssBeforeMiB: timed.map((r) => round(r.rssBefore / MiB)),
      sampledGrowthMiB: timed.map((r) => round((r.sampledPeak - r.rssBefore) / MiB)),
    };
    const note = issues.length ? { note: issues.join('; ') } : {};
    if (spec.peers.length === 0)
      ctx.add(
        result({
          id: `${spec.id}.time`,
          title: spec.title,
          goal: { kind: 'none' },
          ours: oursSample,
          details,
          ...note,
        }),
      );
    spec.peers.forEach((p, k) => {
      const last = k === spec.peers.length - 1;
      const threads = p.args.filter((a) => a.startsWith('--threads'));
      const title =
        spec.peers.length === 1
          ? spec.title
          : last
            ? `${spec.title} ${threads.join(' ')} (the threads ours gives it)`
            : `${spec.title} (rg's default threads)`;
      ctx.add(
        result({
          id: last && spec.peers.length > 1 ? `${spec.id}.time.same-threads` : `${spec.id}.time`,
          title,
          goal: p.goal,
          ours: oursSample,
          peer: peerSamples[k]!,
          details,
          ...note,
        }),
      );
    });
    ctx.add(
      result({
        id: `${spec.id}.rss`,
        title: `${spec.tool} ${JSON.stringify(spec.input)} on ${n} files: peak RSS growth (child process)`,
        unit: 'MiB',
        goal: { kind: 'max', value: 64 },
        ours: { label: 'peak RSS − RSS before the call', values: timed.map((r) => (r.peakRss - r.rssBefore) / MiB) },
      }),
    );
    ctx.add(
      result({
        id: `${spec.id}.first`,
        title: `${spec.tool} ${JSON.stringify(spec.input)} on ${n} files: time to the first page`,
        goal: { kind: 'max', value: 200 },
        ours: { label: 'call to first page (the rest still spooling)', values: timed.map((r) => r.firstPageMs) },
      }),
    );
  }
}
