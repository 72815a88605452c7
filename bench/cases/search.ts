/**
 * search_files vs `rg --json` and find_files vs `rg --files -g`, through the core and through the
 * CLI session; find_files vs the MCP filesystem server's search_files.
 */
import type { BenchContext } from '../lib/context.ts';
import {
  CliSession,
  cliResult,
  coreHost,
  countLines,
  countRgJsonMatches,
  ripgrep,
  run,
  type CoreHost,
} from '../lib/hosts.ts';
import { mcpAvailable, startMcp, startOurMcp, type McpPeer, type McpReply } from '../lib/mcp.ts';
import { OUR_ARGS, result, skipped, type Goal } from '../lib/report.ts';
import { compare, compareAll, type Side } from '../lib/stats.ts';
import { findArgs, findThreads, placeOf, searchArgs, searchThreads } from '../lib/threads.ts';
import type { NamesTree, SourceTree } from '../lib/workloads.ts';
import { readArtifact } from '../../src/core/artifacts/page.ts';

type Frames = readonly { readonly kind: string }[];
/** A result over one page: its first page and the result artifact that holds all of it. */
interface PagedResult {
  readonly summary: string;
  readonly artifact: {
    readonly callId: string;
    readonly lines: number;
    readonly bytes: number;
    readonly complete: boolean;
  };
}
type Output = Frames | PagedResult;
const isPaged = (out: Output): out is PagedResult => !Array.isArray(out);

/** The result of a call as ours finishes it: the frames, or the last line of its result artifact once that is complete. */
interface Finished {
  readonly out: Output;
  readonly terminal?: string;
}

/** Results of a kind: counted in the frames, or for a result artifact, as its last line states them. */
const count = (f: Finished, kind: string): number =>
  isPaged(f.out)
    ? Number(/\((\d+) /.exec(f.terminal ?? '')?.[1] ?? -1)
    : (f.out as Frames).filter((x) => x.kind === kind).length;

/**
 * One call through the core, until its result is complete: a result artifact still being written
 * (the first page came back at once) is waited for, so its time is in the figure.
 */
async function viaCore(
  core: CoreHost,
  tool: 'search_files' | 'find_files',
  input: Record<string, unknown>,
): Promise<Finished> {
  const outcome = await core.invoke(tool, input);
  const out = outcome.result as Output;
  if (!isPaged(out)) return { out };
  return { out, terminal: await lastLine(core, out.artifact.callId) };
}

/** Waits for a result artifact's end and reads its last line: `done complete (5626 matching lines in …)`, `limit N reached (…)` or `incomplete: …`. */
async function lastLine(core: CoreHost, callId: string): Promise<string> {
  const page = await readArtifact(core.session.artifacts, callId, { offset: -1 });
  return page.lines[0]?.text ?? '';
}

/** The same through the CLI session: artifact_read from the end waits for the artifact's end. */
async function viaCli(
  cli: CliSession,
  tool: 'search_files' | 'find_files',
  input: Record<string, unknown>,
): Promise<Finished> {
  const out = cliResult<Output>(await cli.call(tool, input));
  if (!isPaged(out)) return { out };
  const tail = cliResult<{ lines: { text: string }[] }>(
    await cli.call('artifact_read', { callId: out.artifact.callId, offset: -1 }),
  );
  return { out, terminal: tail.lines[0]?.text ?? '' };
}

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
  /**
   * The `--threads` ours gives ripgrep for this input (see lib/threads.ts; none: ripgrep's default,
   * the same as the plain peer's). Given to the peer as well, the ratio is our layer's own cost.
   */
  readonly threads: readonly string[];
  /** The core's goal against ripgrep given the same threads. */
  readonly coreGoal: Goal;
  /**
   * Exactly the arguments ours gives ripgrep (the default rules' exclusions included), run as a
   * third peer (INFO): beside it is our layer's own cost, beside the others ripgrep's work for our guarantees too.
   */
  readonly oursArgs: readonly string[];
}

/** The goal against ripgrep given the same threads, unless a case names a tighter one (the CLI session's always: it adds JSON of the whole result and the pipe). */
const RG_GOAL: Goal = { kind: 'ratio', max: 1.15 };

/**
 * One spec through the core and through the CLI session, each against raw ripgrep back to back.
 * Where ours gives ripgrep threads of its own, each is timed against both `rg` as is (INFO: the
 * threads alone can make it look cheaper or dearer) and `rg` given the same threads, which holds
 * the goal; where it gives none, the plain `rg` already runs with the same threads and holds it.
 */
async function viaCoreAndCli(
  ctx: BenchContext,
  spec: Spec,
  cwd: string,
  core: CoreHost,
  cli: CliSession,
): Promise<void> {
  const rg = ripgrep();
  const kind = spec.tool === 'search_files' ? 'match' : 'path';
  const rgCounts = new Map<string, number>();
  const rgSide = (args: readonly string[]): Side<Buffer> => ({
    label: `rg ${args.join(' ')}`,
    run: async () => (await run(rg, args, { cwd })).stdout,
    check: (out) => {
      rgCounts.set(args.join(' '), spec.rgCount(out));
    },
  });
  const flags = spec.threads.join(' ');
  const sameThreads =
    spec.threads.length === 0
      ? [rgSide(spec.rgArgs)]
      : [rgSide(spec.rgArgs), rgSide([...spec.rgArgs, ...spec.threads])];
  // Counted as ours counts: NUL-separated paths, or the standard printer's matching lines.
  const oursArgs: Side<Buffer> = {
    label: 'rg given our arguments',
    run: async () => (await run(rg, spec.oursArgs, { cwd })).stdout,
    check: (out) => {
      rgCounts.set('ours', spec.tool === 'find_files' ? countLines(out, '\0') : countLines(out));
    },
  };
  const peers = [...sameThreads, oursArgs];
  /** Ours one way against the peers, back to back: a result row for each. */
  const timed = async (
    how: 'core' | 'CLI session',
    id: string,
    goal: Goal,
    runOurs: () => Promise<Finished>,
  ): Promise<void> => {
    ctx.log(`${spec.title}: ${how} vs ${peers.map((p) => p.label).join(' and ')}`);
    let ours = -1;
    const [oursSample, peerSamples] = await compareAll(
      {
        label: `${spec.tool} (${how})`,
        run: runOurs,
        check: (out) => {
          ours = count(out, kind);
        },
      },
      peers,
      ctx.runs(spec.runs),
    );
    peerSamples.forEach((peerSample, k) => {
      if (peerSample.label === oursArgs.label) {
        const rgCount = rgCounts.get('ours') ?? -1;
        ctx.add(
          result({
            id: `${id}${OUR_ARGS}`,
            title: `${spec.title}: ripgrep given our arguments (our layer's own cost) — ${how}`,
            goal: { kind: 'none' },
            ours: oursSample,
            peer: peerSample,
            details: { args: spec.oursArgs, results: ours, rgResults: rgCount },
            ...(ours !== rgCount ? { note: `result count differs: ours ${ours}, rg ${rgCount}` } : {}),
          }),
        );
        return;
      }
      const same = k === sameThreads.length - 1;
      const rgCount = rgCounts.get(peerSample.label.slice('rg '.length)) ?? -1;
      const issues: string[] = [];
      if (ours !== rgCount) issues.push(`result count differs: ours ${ours}, rg ${rgCount}`);
      if (rgCount !== spec.expected) issues.push(`expected ${spec.expected} results, rg found ${rgCount}`);
      const title =
        spec.threads.length === 0
          ? `${spec.title} (same threads: neither gives --threads) — ${how}`
          : same
            ? `${spec.title} ${flags} (the threads ours gives it) — ${how}`
            : `${spec.title} (rg's default threads; ours gives ${flags}) — ${how}`;
      ctx.add(
        result({
          id: same && spec.threads.length > 0 ? `${id}.same-threads` : id,
          title,
          goal: same ? goal : { kind: 'none' },
          ours: oursSample,
          peer: peerSample,
          details: { input: spec.input, results: ours, rgResults: rgCount, threads: spec.threads },
          ...(issues.length ? { note: issues.join('; ') } : {}),
        }),
      );
    });
  };
  await timed('core', `${spec.id}.core`, spec.coreGoal, () => viaCore(core, spec.tool, spec.input));
  await timed('CLI session', `${spec.id}.cli`, RG_GOAL, () => viaCli(cli, spec.tool, spec.input));
}

export async function searchCases(ctx: BenchContext, source: SourceTree): Promise<void> {
  const core = await coreHost(source.dir);
  const cli = await CliSession.start(source.dir);
  const place = placeOf(source.dir);
  try {
    await viaCoreAndCli(
      ctx,
      {
        id: 'search.needle',
        title: 'search_files "NEEDLE" (20k files, 9 hits) vs rg --json',
        tool: 'search_files',
        input: { pattern: 'NEEDLE' },
        rgArgs: ['--json', 'NEEDLE'],
        rgCount: countRgJsonMatches,
        expected: source.needleLines,
        runs: 11,
        threads: searchThreads('NEEDLE'),
        coreGoal: RG_GOAL,
        oursArgs: searchArgs('NEEDLE', false, place),
      },
      source.dir,
      core,
      cli,
    );
    await viaCoreAndCli(
      ctx,
      {
        id: 'search.common',
        title: `search_files "todo" ignore_case (${source.todoLines} hits) vs rg --json -i`,
        tool: 'search_files',
        input: { pattern: 'todo', ignore_case: true },
        rgArgs: ['--json', '-i', 'todo'],
        rgCount: countRgJsonMatches,
        expected: source.todoLines,
        runs: 11,
        threads: searchThreads('todo', true),
        coreGoal: { kind: 'ratio', max: 1.1 },
        oursArgs: searchArgs('todo', true, place),
      },
      source.dir,
      core,
      cli,
    );
    await resultArtifactCase(ctx, source.dir, core);
  } finally {
    await cli.close();
    await core.dispose();
  }
}

/**
 * A result far over one page: search_files writes all of it to a result artifact and hands the
 * model its first page. Ours (core, until the artifact is complete and its last line read) against
 * `rg -n`, the printer the tool itself reads; and the bytes that reach the model against ripgrep's output.
 */
async function resultArtifactCase(ctx: BenchContext, cwd: string, core: CoreHost): Promise<void> {
  const pattern = 'kernel';
  // The threads search_files gives ripgrep (none today: its default, one a core), given to the peer too.
  const rgArgs = ['--no-heading', '--with-filename', '--line-number', ...searchThreads(pattern), pattern];
  const expected = countLines((await run(ripgrep(), rgArgs, { cwd })).stdout);
  const title = `result artifact: search_files "${pattern}" (${expected} hits) vs rg -n (same threads)`;
  ctx.log(title);
  const seen = { ours: -1, text: 0, artifact: 0, rg: 0 };
  const [ours, peer] = await compare(
    {
      label: 'search_files (core), artifact complete',
      run: async () => {
        const outcome = await core.invoke('search_files', { pattern });
        const out = outcome.result as PagedResult;
        return {
          text: outcome.text,
          finished: { out, terminal: await lastLine(core, out.artifact.callId) },
          callId: out.artifact.callId,
        };
      },
      check: (r) => {
        seen.ours = count(r.finished, 'match');
        seen.text = Buffer.byteLength(r.text);
        seen.artifact = core.session.artifacts.get(r.callId).bytes;
      },
    },
    {
      label: `rg ${rgArgs.join(' ')}`,
      run: async () => (await run(ripgrep(), rgArgs, { cwd })).stdout,
      check: (out) => {
        seen.rg = out.length;
      },
    },
    ctx.runs(7),
  );
  const note = seen.ours !== expected ? `result count differs: ours ${seen.ours}, rg ${expected}` : undefined;
  ctx.add(
    result({
      id: 'search.artifact',
      title,
      goal: RG_GOAL,
      ours,
      peer,
      details: {
        results: seen.ours,
        rgResults: expected,
        modelBytes: seen.text,
        artifactBytes: seen.artifact,
        rgBytes: seen.rg,
      },
      ...(note ? { note } : {}),
    }),
  );
  ctx.add(
    result({
      id: 'search.artifact.size',
      title: `result artifact: bytes that reach the model for search_files "${pattern}" (first page) vs rg's output`,
      unit: 'bytes',
      goal: { kind: 'max', value: 50 * 1024 },
      ours: { label: 'first page + header', values: [seen.text] },
      peer: { label: `rg -n output (the artifact holds ${seen.artifact} bytes)`, values: [seen.rg] },
    }),
  );
}

export async function findCases(ctx: BenchContext, names: NamesTree): Promise<void> {
  const core = await coreHost(names.dir);
  const cli = await CliSession.start(names.dir);
  const place = placeOf(names.dir);
  try {
    await viaCoreAndCli(
      ctx,
      {
        id: 'find.many',
        title: `find_files "*.ts" (100k files, ${names.tsFiles} hits) vs rg --files -g`,
        tool: 'find_files',
        input: { glob: '*.ts' },
        rgArgs: ['--files', '-g', '*.ts'],
        rgCount: (out) => countLines(out),
        expected: names.tsFiles,
        runs: 11,
        threads: findThreads('*.ts'),
        coreGoal: { kind: 'ratio', max: 1.1 },
        oursArgs: findArgs('*.ts', place),
      },
      names.dir,
      core,
      cli,
    );
    await viaCoreAndCli(
      ctx,
      {
        id: 'find.rare',
        title: `find_files "*needle*" (100k files, ${names.needleFiles} hits) vs rg --files -g`,
        tool: 'find_files',
        input: { glob: '*needle*' },
        rgArgs: ['--files', '-g', '*needle*'],
        rgCount: (out) => countLines(out),
        expected: names.needleFiles,
        runs: 11,
        threads: findThreads('*needle*'),
        coreGoal: { kind: 'ratio', max: 1.1 },
        oursArgs: findArgs('*needle*', place),
      },
      names.dir,
      core,
      cli,
    );

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
      const [ours, peer] = await compare(
        {
          label: 'find_files (CLI session)',
          run: () => viaCli(cli, 'find_files', { glob: '**/*.ts' }),
          check: (out) => {
            counts.ours = count(out, 'path');
          },
        },
        {
          label: `MCP search_files (server-filesystem ${mcp.version}, stdio)`,
          run: () => mcp.call('search_files', { path: names.dir, pattern: '**/*.ts' }),
          check: (out) => {
            if (out.isError) throw new Error(`MCP search_files failed: ${out.text.slice(0, 300)}`);
            counts.mcp = out.text.split('\n').filter((l) => l !== '').length;
          },
        },
        ctx.runs(3),
      );
      const note =
        counts.ours !== counts.mcp ? `result count differs: ours ${counts.ours}, MCP ${counts.mcp}` : undefined;
      ctx.add(
        result({
          id: 'find.mcp',
          title,
          goal,
          ours,
          peer,
          details: { results: counts.ours, mcpResults: counts.mcp },
          ...(note ? { note } : {}),
        }),
      );
      await ourMcpCases(ctx, names, mcp, counts.mcp);
    } finally {
      await mcp.close();
    }
  } finally {
    await cli.close();
    await core.dispose();
  }
}

/**
 * Our tools over our own MCP server (stdio, as a client runs it) against the filesystem server's
 * search_files on the same tree: find_files by name, then search_files by content (INFO: the peer
 * can only match names). A result past one page is timed until its artifact is complete.
 */
async function ourMcpCases(ctx: BenchContext, names: NamesTree, peerServer: McpPeer, peerCount: number): Promise<void> {
  const ours = await startOurMcp(names.dir);
  try {
    const whole = async (tool: string, input: Record<string, unknown>): Promise<McpReply> => {
      const first = await ours.call(tool, input);
      const callId = /\b(art-[0-9a-f]+-\d+)\b/.exec(first.text)?.[1];
      return callId === undefined || first.isError ? first : ours.call('artifact_read', { callId, offset: -1 });
    };
    const completed = (out: McpReply): number => {
      if (out.isError) throw new Error(`our MCP server failed: ${out.text.slice(0, 300)}`);
      if (/^No (line|file)s? match/m.test(out.text)) return 0;
      return Number(
        /done complete \((\d+) /.exec(out.text)?.[1] ?? out.text.split('\n').filter((l) => l.trim() !== '').length,
      );
    };
    const seen = { find: -1, search: -1 };
    const peer = {
      label: `MCP search_files (server-filesystem ${peerServer.version}, stdio)`,
      run: () => peerServer.call('search_files', { path: names.dir, pattern: '**/*.ts' }),
      check: (out: McpReply) => {
        if (out.isError) throw new Error(`MCP search_files failed: ${out.text.slice(0, 300)}`);
      },
    };
    const [find, findPeer] = await compare(
      {
        label: 'find_files over our MCP server (stdio)',
        run: () => whole('find_files', { glob: '**/*.ts' }),
        check: (out) => {
          seen.find = completed(out);
        },
      },
      peer,
      ctx.runs(3),
    );
    ctx.add(
      result({
        id: 'find.mcp.server',
        title: 'our MCP server: find_files "**/*.ts" (100k files) vs MCP search_files',
        goal: { kind: 'speedup', min: 5 },
        ours: find,
        peer: findPeer,
        details: { results: seen.find, mcpResults: peerCount },
        ...(seen.find !== peerCount ? { note: `result count differs: ours ${seen.find}, MCP ${peerCount}` } : {}),
      }),
    );
    const [search, searchPeer] = await compare(
      {
        label: 'search_files "NEEDLE" over our MCP server (stdio)',
        run: () => whole('search_files', { pattern: 'NEEDLE' }),
        check: (out) => {
          seen.search = completed(out);
        },
      },
      peer,
      ctx.runs(3),
    );
    ctx.add(
      result({
        id: 'search.mcp.server',
        title: 'our MCP server: search_files "NEEDLE" (contents, 100k files) vs MCP search_files (names only)',
        goal: { kind: 'none' },
        ours: search,
        peer: searchPeer,
        details: { results: seen.search },
      }),
    );
  } finally {
    await ours.close();
  }
}
