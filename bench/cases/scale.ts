/**
 * The 300,000-file monorepo: unbounded find_files, list_directory and search_files, each in a fresh
 * child process (its peak RSS growth is the memory figure), timed until the result artifact is
 * complete, against raw ripgrep; and the time until the first page came back.
 */
import * as nodePath from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { countLines, countRgJsonMatches, repoRoot, ripgrep, run } from '../lib/hosts.ts';
import { result, type Goal } from '../lib/report.ts';
import { compare, measure, round, type Sample, type Side } from '../lib/stats.ts';
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
  const out = await run(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', nodePath.join(repoRoot, 'bench/child/scale.ts'), JSON.stringify({ root, tool, input })]);
  if (out.code !== 0) throw new Error(`the ${tool} child failed (exit ${out.code}): ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.toString('utf8')) as ChildReport;
}

interface Spec {
  readonly id: string;
  readonly title: string;
  readonly tool: 'find_files' | 'list_directory' | 'search_files';
  readonly input: Record<string, unknown>;
  /** The peer, when there is one, and how many results its output holds. */
  readonly rg?: { readonly args: readonly string[]; readonly count: (stdout: Buffer) => number; readonly goal: Goal };
  /** How many results the artifact's last line must name, when known in advance. */
  readonly expected?: number;
}

export async function scaleCases(ctx: BenchContext, tree: ScaleTree): Promise<void> {
  const specs: Spec[] = [
    { id: 'scale.find', title: `find_files "*" (${tree.files} files) vs rg --files`, tool: 'find_files', input: { glob: '*' }, rg: { args: ['--files'], count: (o) => countLines(o), goal: { kind: 'ratio', max: 1.5 } }, expected: tree.files },
    { id: 'scale.list', title: `list_directory unbounded (${tree.files} files, ${tree.folders} folders)`, tool: 'list_directory', input: {}, expected: tree.files + tree.folders },
    { id: 'scale.search', title: `search_files "todo" ignore_case (${tree.todoLines} hits) vs rg --json -i`, tool: 'search_files', input: { pattern: 'todo', ignore_case: true }, rg: { args: ['--json', '-i', 'todo'], count: countRgJsonMatches, goal: { kind: 'none' } }, expected: tree.todoLines },
  ];
  for (const spec of specs) {
    ctx.log(spec.title);
    const reports: ChildReport[] = [];
    const ours: Side<ChildReport> = {
      label: `${spec.tool} (core, child process), until the result artifact is complete`,
      run: () => inChild(tree.dir, spec.tool, spec.input),
      check: (r) => { reports.push(r); },
      elapsed: (r) => r.totalMs,
    };
    let rgResults: number | undefined;
    let oursSample: Sample;
    let peerSample: Sample | undefined;
    if (spec.rg) {
      const { args, count } = spec.rg;
      [oursSample, peerSample] = await compare(ours, {
        label: `rg ${args.join(' ')}`,
        run: async () => (await run(ripgrep(), args, { cwd: tree.dir })).stdout,
        check: (out) => { rgResults = count(out); },
      }, ctx.runs(3));
    } else {
      oursSample = await measure(ours, ctx.runs(3));
    }
    const timed = reports.slice(-oursSample.values.length);
    const named = Number(/\((\d+) /.exec(timed.at(-1)?.lastLine ?? '')?.[1] ?? -1);
    const issues: string[] = [];
    if (!/^done complete/.test(timed.at(-1)?.lastLine ?? '')) issues.push(`the artifact ends "${timed.at(-1)?.lastLine ?? ''}"`);
    if (spec.expected !== undefined && named !== spec.expected) issues.push(`the artifact names ${named} results, expected ${spec.expected}`);
    if (rgResults !== undefined && rgResults !== named) issues.push(`rg found ${rgResults}`);
    const details = {
      input: spec.input, results: named, rgResults,
      modelBytes: timed.map((r) => r.modelBytes), artifactBytes: timed.at(-1)?.artifactBytes, heldBytes: timed.map((r) => r.heldBytes),
      peakFrom: timed[0]?.peakFrom, rssBeforeMiB: timed.map((r) => round(r.rssBefore / MiB)), sampledGrowthMiB: timed.map((r) => round((r.sampledPeak - r.rssBefore) / MiB)),
    };
    ctx.add(result({ id: `${spec.id}.time`, title: spec.title, goal: spec.rg?.goal ?? { kind: 'none' }, ours: oursSample, ...(peerSample ? { peer: peerSample } : {}), details, ...(issues.length ? { note: issues.join('; ') } : {}) }));
    ctx.add(result({
      id: `${spec.id}.rss`, title: `${spec.tool} ${JSON.stringify(spec.input)} on ${tree.files} files: peak RSS growth (child process)`, unit: 'MiB', goal: { kind: 'max', value: 64 },
      ours: { label: 'peak RSS − RSS before the call', values: timed.map((r) => (r.peakRss - r.rssBefore) / MiB) },
    }));
    ctx.add(result({
      id: `${spec.id}.first`, title: `${spec.tool} ${JSON.stringify(spec.input)} on ${tree.files} files: time to the first page`, goal: { kind: 'max', value: 200 },
      ours: { label: 'call to first page (the rest still spooling)', values: timed.map((r) => r.firstPageMs) },
    }));
  }
}
