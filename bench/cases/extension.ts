/**
 * The extension itself: the production bundle's size, and activate() time in a real VS Code
 * extension host (code-server, through test/host/run-suite.mjs), as VS Code itself records it.
 * Leaves the development build in dist/ afterwards, as `npm run build` would.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchContext } from '../lib/context.ts';
import { repoRoot } from '../lib/hosts.ts';
import { result, skipped, type Goal } from '../lib/report.ts';
import { benchDir } from '../lib/workloads.ts';
import type { ProbeResult } from '../vscode/activate-probe.ts';

const KB = 1000;

function build(production: boolean): void {
  execFileSync(process.execPath, ['esbuild.mjs', ...(production ? ['--production'] : [])], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

interface RunSuiteModule {
  runSuite(options: {
    extensionDevelopmentPath: string;
    extensionTestsPath: string;
    workspace?: string;
    extensionEnv?: Record<string, string>;
    timeoutMs?: number;
    name?: string;
    onLog?: (line: string, type: string) => void;
  }): Promise<number>;
}
interface EnsureModule {
  findCodeServer(): string | undefined;
  CHROMIUM: string;
}

/** Bundles the probe for the extension host (CommonJS, `vscode` external); returns its path. */
async function buildProbe(): Promise<string> {
  const esbuild = await import('esbuild');
  const outDir = nodePath.join(repoRoot, 'out/bench');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(nodePath.join(outDir, 'package.json'), '{ "type": "commonjs" }\n');
  const outfile = nodePath.join(outDir, 'activate-probe.js');
  await esbuild.build({
    entryPoints: [nodePath.join(repoRoot, 'bench/vscode/activate-probe.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: ['vscode'],
    logLevel: 'warning',
  });
  return outfile;
}

async function activateRuns(ctx: BenchContext, runs: number): Promise<{ probes: ProbeResult[]; log: string[] }> {
  const importMjs = (rel: string): Promise<unknown> => import(pathToFileURL(nodePath.join(repoRoot, rel)).href);
  const { runSuite } = (await importMjs('test/host/run-suite.mjs')) as RunSuiteModule;
  const probe = await buildProbe();
  const probes: ProbeResult[] = [];
  const log: string[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(nodePath.join(benchDir(), 'activate-'));
    const file = nodePath.join(dir, 'probe.json');
    try {
      const started = Date.now();
      const code = await runSuite({
        name: 'bench-activate',
        extensionDevelopmentPath: repoRoot,
        extensionTestsPath: probe,
        workspace: nodePath.join(repoRoot, 'test/fixtures/workspace'),
        extensionEnv: { WT_BENCH_RESULTS: file },
        timeoutMs: 180_000,
        onLog: (line) => {
          log.push(line);
        },
      });
      const found = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ProbeResult) : undefined;
      ctx.log(
        `activate run ${i + 1}/${runs}: exit ${code}, ${((Date.now() - started) / 1000).toFixed(0)} s${found?.vscode ? `, call ${found.vscode.callActivateMs} ms + finish ${found.vscode.finishActivateMs} ms (load code ${found.vscode.loadCodeMs} ms)` : found?.error ? `: ${found.error}` : ''}`,
      );
      if (found) probes.push(found);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { probes, log };
}

export async function extensionCases(ctx: BenchContext): Promise<void> {
  const bundleGoal: Goal = { kind: 'max', value: 600 };
  const activateGoal: Goal = { kind: 'max', value: 30 };
  try {
    ctx.log('production build (node esbuild.mjs --production)');
    build(true);
    const size = statSync(nodePath.join(repoRoot, 'dist/extension.js')).size;
    const cliSize = statSync(nodePath.join(repoRoot, 'dist/cli.js')).size;
    ctx.add(
      result({
        id: 'extension.bundle',
        title: 'extension bundle dist/extension.js (production)',
        unit: 'KB',
        goal: bundleGoal,
        ours: { label: 'dist/extension.js', values: [size / KB] },
        details: { bytes: size, cliBytes: cliSize },
      }),
    );

    const title = 'activate() in the VS Code extension host (call + finish)';
    const ensure = (await import(pathToFileURL(nodePath.join(repoRoot, 'test/host/ensure.mjs')).href)) as EnsureModule;
    if (process.env['BENCH_SKIP_VSCODE'] === '1') {
      ctx.add(skipped('extension.activate', title, activateGoal, 'BENCH_SKIP_VSCODE=1'));
    } else if (!ensure.findCodeServer() || !existsSync(ensure.CHROMIUM)) {
      ctx.add(
        skipped(
          'extension.activate',
          title,
          activateGoal,
          'the VS Code test host is not installed (run npm run test:integration once, or node test/host/ensure.mjs)',
        ),
      );
    } else {
      const { probes, log } = await activateRuns(ctx, ctx.runs(3));
      const good = probes.filter((p) => p.vscode);
      if (good.length === 0) {
        const why =
          probes.find((p) => p.error)?.error ?? `no probe result; extension host said: ${log.slice(-20).join('\n')}`;
        ctx.add(skipped('extension.activate', title, activateGoal, why.slice(0, 2000), 'ERROR'));
      } else {
        const total = good.map((p) => p.vscode!.callActivateMs + p.vscode!.finishActivateMs);
        const api = good.map((p) => p.apiActivateMs).filter((n) => n !== undefined);
        ctx.add(
          result({
            id: 'extension.activate',
            title,
            goal: activateGoal,
            ours: { label: 'VS Code activation times', values: total },
            details: { runs: good.map((p) => p.vscode), probeActivateMs: good.map((p) => p.probeActivateMs) },
          }),
        );
        if (api.length) {
          ctx.add(
            result({
              id: 'extension.activate.api',
              title: 'activate() as the extension times itself (TestApi.activateMs)',
              goal: activateGoal,
              ours: { label: 'TestApi.activateMs', values: api },
            }),
          );
        }
        ctx.add(
          result({
            id: 'extension.load',
            title: 'loading the bundle in the extension host (Load Code)',
            goal: { kind: 'none' },
            ours: { label: 'VS Code Load Code', values: good.map((p) => p.vscode!.loadCodeMs) },
          }),
        );
      }
    }
  } finally {
    ctx.log('development build (node esbuild.mjs)');
    build(false);
  }
}
