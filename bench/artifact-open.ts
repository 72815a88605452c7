/**
 * Opening a big file as an artifact vs `cp`, and paging/grepping it vs raw ripgrep.
 *   node --disable-warning=MODULE_TYPELESS_PACKAGE_JSON bench/artifact-open.ts [GiB=1]
 * Prints the time ratio against `cp` (same file, same disk, page cache warm for both; runs
 * alternate, and both the best and the median of 5 are shown since a shared machine is noisy), the
 * RSS growth while opening (sampled every 5 ms), and artifact_grep against raw `rg -n`.
 * Run it from the repository root (ripgrep is found under node_modules from there).
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { NodeFs } from '../src/core/fs/node-fs.ts';
import { ArtifactStore } from '../src/core/artifacts/store.ts';
import { locateRipgrep } from '../src/core/search/ripgrep-binary.ts';
import type { ResolvedPath, WorkspaceRoot } from '../src/core/paths.ts';

const gib = Number(process.argv[2] ?? '1');
const dir = realpathSync(mkdtempSync(nodePath.join(process.env['BENCH_DIR'] ?? tmpdir(), 'wt-bench-')));
const file = nodePath.join(dir, 'big.log');

async function generate(bytes: number): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  let n = 0;
  while (written < bytes) {
    let s = '';
    for (let i = 0; i < 10000; i++) { n++; s += `${n} INFO request handled path=/api/v1/items/${n % 997} status=${n % 101 === 0 ? 500 : 200} took=${n % 100}ms\n`; }
    const b = Buffer.from(s);
    written += b.length;
    if (!out.write(b)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(r));
  return n;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const RUNS = 5;

const time = async (f: () => Promise<unknown> | unknown): Promise<number> => { const t = performance.now(); await f(); return performance.now() - t; };

async function main(): Promise<void> {
  const lines = await generate(gib * 1024 ** 3);
  const root: WorkspaceRoot = { name: 'bench', address: dir, localPath: dir };
  const source: ResolvedPath = { root, rel: 'big.log', display: 'big.log', address: file, exists: true, realRel: 'big.log' };
  const signal = new AbortController().signal;
  const newStore = async (): Promise<ArtifactStore> => {
    const store = new ArtifactStore({ fs: new NodeFs(), dir: nodePath.join(dir, 'spool'), clock: { now: () => Date.now() }, budgetBytes: () => 64 * 1024 ** 3, nonStreamingMaxBytes: () => 64 * 1024 ** 2 });
    await store.start();
    return store;
  };
  execFileSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] }); // warm the page cache

  const cpTimes: number[] = [];
  const openTimes: number[] = [];
  let rssGrowth = 0;
  for (let run = 0; run < RUNS; run++) {
    const copy = nodePath.join(dir, 'copy.log');
    execFileSync('sync');
    cpTimes.push(await time(() => execFileSync('cp', [file, copy])));
    rmSync(copy);
    execFileSync('sync');
    const store = await newStore();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
    let callId = '';
    openTimes.push(await time(async () => { callId = (await store.open(source, signal)).callId; }));
    clearInterval(sampler);
    rssGrowth = Math.max(rssGrowth, Math.max(peak, process.memoryUsage().rss) - base);
    if (run === RUNS - 1) {
      const last = await time(() => store.read(callId, { offset: lines - 10 }));
      const rg = locateRipgrep()!.path;
      // Baseline: ripgrep printing line numbers and lines, as artifact_grep returns them.
      const rgTimes: number[] = [];
      const grepTimes: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        rgTimes.push(await time(() => execFileSync(rg, ['--no-config', '-n', 'status=500 took=99ms', file], { maxBuffer: 1024 ** 3 })));
        grepTimes.push(await time(() => store.grep(callId, { pattern: 'status=500 took=99ms', maxResults: 1_000_000 }, signal)));
      }
      const rgTime = Math.min(...rgTimes);
      const grepTime = Math.min(...grepTimes);
      console.log(`read at line ${lines - 10}: ${last.toFixed(1)} ms`);
      console.log(`grep (every match, best of ${RUNS}): artifact_grep ${grepTime.toFixed(0)} ms vs rg -n ${rgTime.toFixed(0)} ms (ratio ${(grepTime / rgTime).toFixed(2)}; medians ${median(grepTimes).toFixed(0)} vs ${median(rgTimes).toFixed(0)} ms)`);
    }
    await store.dispose();
  }
  const best = Math.min(...openTimes) / Math.min(...cpTimes);
  const typical = median(openTimes) / median(cpTimes);
  console.log(`${gib} GiB, ${lines} lines`);
  console.log(`open_file vs cp: best ${Math.min(...openTimes).toFixed(0)} vs ${Math.min(...cpTimes).toFixed(0)} ms (ratio ${best.toFixed(2)}); median ${median(openTimes).toFixed(0)} vs ${median(cpTimes).toFixed(0)} ms (ratio ${typical.toFixed(2)})`);
  console.log(`RSS growth while opening: ${(rssGrowth / 1024 ** 2).toFixed(1)} MiB`);
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
