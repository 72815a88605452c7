/**
 * search_files vs `rg --json` and find_files vs `rg --files -g`, through the core and through the
 * CLI session; find_files vs the MCP filesystem server's search_files.
 */
import type { BenchContext } from '../lib/context.ts';
import { CliSession, cliResult, coreHost, countLines, countRgJsonMatches, ripgrep, run, type CoreHost } from '../lib/hosts.ts';
import { mcpAvailable, startMcp } from '../lib/mcp.ts';
import { result, skipped, type Goal } from '../lib/report.ts';
import { compare, type Side } from '../lib/stats.ts';
import type { NamesTree, SourceTree } from '../lib/workloads.ts';

type Frames = readonly { readonly kind: string }[];
const count = (frames: Frames, kind: string): number => frames.filter((f) => f.kind === kind).length;

interface Spec {
  readonly id: string;
  readonly title: string;
  readonly tool: 'search_files' | 'find_files';
  readonly input: Record<string, unknown>;
  readonly rgArgs: readonly string[];
  /** Counts what a raw ripgrep run produced (matching lines, or paths). */
  readonly rgCount: (stdout: Buffer) => number;
  readonly expected: number;
  readonly runs: number;
}

const RG_GOAL: Goal = { kind: 'ratio', max: 1.15 };

/** One spec through the core and through the CLI session, each against raw ripgrep back to back. */
async function viaCoreAndCli(ctx: BenchContext, spec: Spec, cwd: string, core: CoreHost, cli: CliSession): Promise<void> {
  const rg = ripgrep();
  const kind = spec.tool === 'search_files' ? 'match' : 'path';
  const counts = { ours: -1, cli: -1, rg: -1 };
  const rgSide: Side<Buffer> = {
    label: `rg ${spec.rgArgs.join(' ')}`,
    run: async () => (await run(rg, spec.rgArgs, { cwd })).stdout,
    check: (out) => { counts.rg = spec.rgCount(out); },
  };
  const note = (ours: number): string | undefined => {
    const issues: string[] = [];
    if (ours !== counts.rg) issues.push(`result count differs: ours ${ours}, rg ${counts.rg}`);
    if (counts.rg !== spec.expected) issues.push(`expected ${spec.expected} results, rg found ${counts.rg}`);
    return issues.length ? issues.join('; ') : undefined;
  };

  ctx.log(`${spec.title}: core`);
  const [oursCore, rgCore] = await compare({
    label: `${spec.tool} (core)`,
    run: () => core.invoke(spec.tool, spec.input),
    check: (out) => { counts.ours = count(out.result as Frames, kind); },
  }, rgSide, ctx.runs(spec.runs));
  const coreNote = note(counts.ours);
  ctx.add(result({ id: `${spec.id}.core`, title: `${spec.title} — core`, goal: RG_GOAL, ours: oursCore, peer: rgCore, details: { input: spec.input, results: counts.ours, rgResults: counts.rg }, ...(coreNote ? { note: coreNote } : {}) }));

  ctx.log(`${spec.title}: CLI session`);
  const [oursCli, rgCli] = await compare({
    label: `${spec.tool} (CLI session)`,
    run: () => cli.call(spec.tool, spec.input),
    check: (out) => { counts.cli = count(cliResult<Frames>(out), kind); },
  }, rgSide, ctx.runs(spec.runs));
  const cliNote = note(counts.cli);
  ctx.add(result({ id: `${spec.id}.cli`, title: `${spec.title} — CLI session`, goal: RG_GOAL, ours: oursCli, peer: rgCli, details: { input: spec.input, results: counts.cli, rgResults: counts.rg }, ...(cliNote ? { note: cliNote } : {}) }));
}

export async function searchCases(ctx: BenchContext, source: SourceTree): Promise<void> {
  const core = await coreHost(source.dir);
  const cli = await CliSession.start(source.dir);
  try {
    await viaCoreAndCli(ctx, {
      id: 'search.needle', title: 'search_files "NEEDLE" (20k files, 9 hits) vs rg --json',
      tool: 'search_files', input: { pattern: 'NEEDLE' }, rgArgs: ['--json', 'NEEDLE'], rgCount: countRgJsonMatches,
      expected: source.needleLines, runs: 11,
    }, source.dir, core, cli);
    await viaCoreAndCli(ctx, {
      id: 'search.common', title: `search_files "todo" ignore_case (${source.todoLines} hits) vs rg --json -i`,
      tool: 'search_files', input: { pattern: 'todo', ignore_case: true }, rgArgs: ['--json', '-i', 'todo'], rgCount: countRgJsonMatches,
      expected: source.todoLines, runs: 11,
    }, source.dir, core, cli);
  } finally {
    await cli.close();
    await core.dispose();
  }
}

export async function findCases(ctx: BenchContext, names: NamesTree): Promise<void> {
  const core = await coreHost(names.dir);
  const cli = await CliSession.start(names.dir);
  try {
    await viaCoreAndCli(ctx, {
      id: 'find.many', title: `find_files "*.ts" (100k files, ${names.tsFiles} hits) vs rg --files -g`,
      tool: 'find_files', input: { glob: '*.ts' }, rgArgs: ['--files', '-g', '*.ts'], rgCount: (out) => countLines(out),
      expected: names.tsFiles, runs: 11,
    }, names.dir, core, cli);
    await viaCoreAndCli(ctx, {
      id: 'find.rare', title: `find_files "*needle*" (100k files, ${names.needleFiles} hits) vs rg --files -g`,
      tool: 'find_files', input: { glob: '*needle*' }, rgArgs: ['--files', '-g', '*needle*'], rgCount: (out) => countLines(out),
      expected: names.needleFiles, runs: 11,
    }, names.dir, core, cli);

    const goal: Goal = { kind: 'speedup', min: 5 };
    const title = `find_files "**/*.ts" (100k files) vs MCP search_files`;
    if (!mcpAvailable()) {
      ctx.add(skipped('find.mcp', title, goal, '@modelcontextprotocol/server-filesystem is not installed (npm ci)'));
      return;
    }
    ctx.log(`${title}`);
    const mcp = await startMcp(names.dir);
    try {
      const counts = { ours: -1, mcp: -1 };
      const [ours, peer] = await compare({
        label: 'find_files (CLI session)',
        run: () => cli.call('find_files', { glob: '**/*.ts' }),
        check: (out) => { counts.ours = count(cliResult<Frames>(out), 'path'); },
      }, {
        label: `MCP search_files (server-filesystem ${mcp.version}, stdio)`,
        run: () => mcp.call('search_files', { path: names.dir, pattern: '**/*.ts' }),
        check: (out) => {
          if (out.isError) throw new Error(`MCP search_files failed: ${out.text.slice(0, 300)}`);
          counts.mcp = out.text.split('\n').filter((l) => l !== '').length;
        },
      }, ctx.runs(3));
      const note = counts.ours !== counts.mcp ? `result count differs: ours ${counts.ours}, MCP ${counts.mcp}` : undefined;
      ctx.add(result({ id: 'find.mcp', title, goal, ours, peer, details: { results: counts.ours, mcpResults: counts.mcp }, ...(note ? { note } : {}) }));
    } finally {
      await mcp.close();
    }
  } finally {
    await cli.close();
    await core.dispose();
  }
}
