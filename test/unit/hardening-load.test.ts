import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as nodePath from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TOOLS, type ToolResult } from '../../src/core/tools/index.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import { isCancellation } from '../../src/core/errors.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import type { SandboxSearch } from '../../src/core/search/port.ts';
import { rgChildren, rgPath, searchOptions, waitFor, writeTree } from './search-helpers.ts';
import { ofKind, session, tempDir, type TestSession, wholeResult, runTool } from './harness.ts';
import { BOMB_GLOBS, type BombReport, type BombScenario } from './bombs.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

/**
 * Load: one session under many calls at once. 200 concurrent calls of every kind return exactly
 * what each would return alone, three times over without the heap growing; 1,000 searches
 * cancelled at every stage of their life each reject as a cancellation and leave no ripgrep behind.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MODULES = 40;
/** Rounds of 200 calls; WT_LOAD_ROUNDS=12 shows the memory levelling off over 2,400 calls. */
const ROUNDS = Number(process.env['WT_LOAD_ROUNDS'] ?? 3);
const LOG_LINES = 5_000;

function moduleText(i: number): string {
  const filler = Array.from({ length: 20 }, (_, k) => `const f${k} = ${i * 100 + k};`);
  return [`export const v${i} = ${i};`, `// needle-${i % 10}`, ...filler].join('\n') + '\n';
}

const TREE: Record<string, string> = {
  ...Object.fromEntries(Array.from({ length: MODULES }, (_, i) => [`src/mod${i}.ts`, moduleText(i)])),
  'docs/guide.md': '# Guide\n\n## Install\n\ntext\n\n## Use\n\nmore\n\n### Deep\n\ndeepest\n',
  'data.json':
    JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => ({ id: i, name: `item-${i}` })) }, null, 2) + '\n',
  'big.log': Array.from({ length: LOG_LINES }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
};

interface Fixture {
  readonly log: string;
  readonly json: string;
  readonly media: string;
}

interface CallOf<N extends ToolName> {
  readonly tool: N;
  readonly input: Record<string, unknown>;
  check(result: ToolResult<N>): void;
}
type Call = { [N in ToolName]: CallOf<N> }[ToolName];

/** Makes the call; once it is answered, its check (run when the whole burst has settled). */
function answer<N extends ToolName>(t: TestSession, c: CallOf<N>): Promise<() => void> {
  return t.invoke(c.tool, c.input).then((outcome) => () => c.check(outcome.result));
}

/** Call number `n` of a burst: the kinds take turns, each with its own expected result. */
function callFor(n: number, f: Fixture): Call {
  const k = Math.floor(n / 13);
  const mod = (k * 7 + n) % MODULES;
  switch (n % 13) {
    case 0:
      return {
        tool: 'open_file',
        input: { path: `src/mod${mod}.ts` },
        check: (r) => {
          const h = oneFile(r);
          assert.deepEqual([h.path, h.bytes, h.lines], [`src/mod${mod}.ts`, Buffer.byteLength(moduleText(mod)), 22]);
        },
      };
    case 1:
      return {
        tool: 'open_json_file',
        input: { path: 'data.json' },
        check: (r) => {
          const { handle, shape } = r;
          assert.deepEqual(
            [handle.bytes, shape.type, shape.members.map((m) => [m.key, m.size])],
            [Buffer.byteLength(TREE['data.json']!), 'object', [['items', 50]]],
          );
        },
      };
    case 2:
      return {
        tool: 'open_markdown_file',
        input: { path: 'docs/guide.md' },
        check: (r) => {
          const { outline } = r;
          assert.deepEqual(
            outline.map((h) => h.path),
            ['Guide', 'Guide/Install', 'Guide/Use', 'Guide/Use/Deep'],
          );
        },
      };
    case 3: {
      const offset = ((k * 37) % LOG_LINES) + 1;
      return {
        tool: 'artifact_read',
        input: { callId: f.log, offset, limit: 50 },
        check: (r) => {
          const page = r;
          const last = Math.min(offset + 49, LOG_LINES);
          assert.deepEqual(
            page.lines.map((l) => l.text),
            Array.from({ length: last - offset + 1 }, (_, i) => `line ${offset + i}`),
          );
        },
      };
    }
    case 4: {
      const needle = (k % 9) + 1;
      return {
        tool: 'artifact_grep',
        input: { callId: f.log, pattern: `^line ${needle}${needle}\\d$` },
        check: (r) => {
          const result = wholeResult(r);
          assert.deepEqual(
            result.lines.map((l) => l.n),
            Array.from({ length: 10 }, (_, d) => needle * 110 + d),
          );
        },
      };
    }
    case 5:
      return {
        tool: 'artifact_query',
        input: { callId: f.json, select: `/items/${k % 50}/name` },
        check: (r) => {
          assert.equal(JSON.parse(ofKind(r, 'json').text), `item-${k % 50}`);
        },
      };
    case 6:
      return {
        tool: 'search_files',
        input: { pattern: `needle-${k % 10}\\b`, path: 'src' },
        check: (r) => {
          const hits = wholeResult(r).flatMap((fr) => (fr.kind === 'match' ? [`${fr.path}:${fr.line}`] : []));
          const expected = Array.from({ length: MODULES }, (_, i) => i)
            .filter((i) => i % 10 === k % 10)
            .map((i) => `src/mod${i}.ts:2`)
            .sort();
          assert.deepEqual(hits, expected);
        },
      };
    case 7:
      return {
        tool: 'find_files',
        input: { glob: `mod${k % 10}*.ts` },
        check: (r) => {
          const paths = wholeResult(r).flatMap((fr) => (fr.kind === 'path' ? [fr.path] : []));
          const expected = Array.from({ length: MODULES }, (_, i) => i)
            .filter((i) => String(i).startsWith(String(k % 10)))
            .map((i) => `src/mod${i}.ts`)
            .sort();
          assert.deepEqual(paths, expected);
        },
      };
    case 8:
      return {
        tool: 'list_directory',
        input: { path: 'src', max_depth: 1 },
        check: (r) => {
          const [listing] = wholeResult(r);
          assert.deepEqual(
            listing!.entries.map((e) => e.path),
            Array.from({ length: MODULES }, (_, i) => `mod${i}.ts`).sort(),
          );
        },
      };
    case 9:
      return {
        tool: 'stage_file',
        input: { path: `src/mod${mod}.ts` },
        check: (r) => {
          const { path, bytes, isNew } = r;
          assert.deepEqual([path, bytes, isNew], [`src/mod${mod}.ts`, Buffer.byteLength(moduleText(mod)), false]);
        },
      };
    case 10:
      return {
        tool: 'stage_file',
        input: { path: `new/file${n}.txt`, content: `new ${n}\n` },
        check: (r) => {
          const { path, bytes, isNew } = r;
          assert.deepEqual([path, bytes, isNew], [`new/file${n}.txt`, Buffer.byteLength(`new ${n}\n`), true]);
        },
      };
    case 11:
      return {
        tool: 'media_apply_patch',
        input: { media_id: f.media, patch: { find: 'export const v0 = 0;', replace: `export const v0 = ${n};` } },
        check: (r) => {
          assert.equal(r.added, 1);
        },
      };
    default:
      return {
        tool: 'list_media',
        input: {},
        check: (r) => {
          for (const m of r.media) assert.match(m.path, /^(src\/mod\d+\.ts|new\/file\d+\.txt)$/);
        },
      };
  }
}

test('load: 200 concurrent calls of mixed tools on one session each return exactly their own result, and memory stays bounded', async (tc) => {
  const t = session(tc, searchOptions());
  const rounds: string[] = [];
  writeTree(t.root, TREE);
  const open = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'big.log' })).result);
  const json = (await runTool(t.session, TOOLS.open_json_file, { path: 'data.json' })).result;
  const staged = (await runTool(t.session, TOOLS.stage_file, { path: 'src/mod0.ts' })).result;
  const fixture: Fixture = { log: open.callId, json: json.handle.callId, media: staged.media_id! };

  const measure = (): { heap: number; rss: number } => {
    gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, rss: m.rss };
  };
  const MiB = 1024 * 1024;
  const start = measure();
  const after: { heap: number; rss: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const calls = Array.from({ length: 200 }, (_, n) => callFor(n, fixture));
    const began = Date.now();
    const settled = await Promise.allSettled(calls.map((c) => answer(t, c)));
    const ms = Date.now() - began;
    settled.forEach((s, n) => {
      const c = calls[n]!;
      assert.equal(
        s.status,
        'fulfilled',
        `${c.tool} ${JSON.stringify(c.input)}: ${s.status === 'rejected' ? String(s.reason) : ''}`,
      );
      if (s.status === 'fulfilled') s.value();
    });
    const m = measure();
    after.push(m);
    rounds.push(
      `round ${round + 1}: 200 calls in ${ms} ms, ext ${(process.memoryUsage().external / MiB).toFixed(1)} MiB, heap ${((m.heap - start.heap) / MiB).toFixed(1)} MiB, rss ${((m.rss - start.rss) / MiB).toFixed(1)} MiB over the start`,
    );
  }
  assert.deepEqual(rgChildren(), []);
  // Generous bounds: what the session keeps per call (artifact records, small media) is a few KiB.
  assert.ok(after[ROUNDS - 1]!.heap - start.heap < 64 * MiB, rounds.join('; '));
  assert.ok(after[ROUNDS - 1]!.rss - start.rss < 256 * MiB, rounds.join('; '));
  assert.ok(
    after[ROUNDS - 1]!.heap - after[0]!.heap < 16 * MiB,
    `the heap grows round after round: ${rounds.join('; ')}`,
  );
  const opensPerRound = Array.from({ length: 200 }, (_, n) => callFor(n, fixture).tool).filter((tool) =>
    tool.startsWith('open_'),
  ).length;
  assert.equal(t.session.artifacts.list().length, 2 + ROUNDS * opensPerRound);
  console.log(`load: ${ROUNDS} × 200 concurrent calls (13 tools), every result exact; ${rounds.join('; ')}`);
});

/** The outcome of `promise`, observed from the start (an early rejection is never unhandled meanwhile). */
function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return promise.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}

test(
  'load: 1,000 searches cancelled at every stage of their life each reject as a cancellation and leave no rg process',
  { timeout: 300_000 },
  async (tc) => {
    // Counts the searches that got past the gate and the path translation to the backend.
    const rg = createRipgrepSearch(createRipgrep(rgPath()));
    let reached = 0;
    const search: SandboxSearch = {
      supportsFollow: false,
      searchContent: (q) => {
        reached++;
        return rg.searchContent(q);
      },
      findPaths: (q) => rg.findPaths(q),
    };
    const t = session(tc, searchOptions({ search }));
    // A FIFO with no writer blocks rg in open() forever, so no search can finish before it is cancelled.
    execFileSync('mkfifo', [nodePath.join(t.root, 'pipe')]);
    /** When each call is aborted, relative to its start. */
    const moments: Record<string, (abort: () => void) => Promise<void> | void> = {
      'before the call': () => {},
      'synchronously after the call': (abort) => abort(),
      'after a microtask (during the gate)': async (abort) => {
        await Promise.resolve();
        abort();
      },
      'after setImmediate (translating the path)': async (abort) => {
        await new Promise((r) => setImmediate(r));
        abort();
      },
      'after 1 ms': async (abort) => {
        await new Promise((r) => setTimeout(r, 1));
        abort();
      },
      'after 5 ms': async (abort) => {
        await new Promise((r) => setTimeout(r, 5));
        abort();
      },
    };
    const names = Object.keys(moments);
    const WAVES = 10;
    const PER_WAVE = 100;
    let total = 0;
    let killedRunning = 0;
    const began = Date.now();
    for (let wave = 0; wave < WAVES; wave++) {
      // A tenth of each wave is cancelled only once its ripgrep is running (blocked on the FIFO) ...
      const running = Array.from({ length: PER_WAVE / 10 }, () => new AbortController());
      const runningCalls = running.map((c) =>
        settle(runTool(t.session, TOOLS.search_files, { pattern: 'x', path: 'pipe' }, c.signal)),
      );
      await waitFor(() => rgChildren().length === running.length, 60_000);
      // ... the rest at every earlier moment, while those rg processes keep running.
      const early = Array.from({ length: PER_WAVE - running.length }, (_, i) => {
        const moment = names[(wave + i) % names.length]!;
        const controller = new AbortController();
        if (moment === 'before the call') controller.abort();
        const call = settle(runTool(t.session, TOOLS.search_files, { pattern: 'x', path: 'pipe' }, controller.signal));
        const aborting = moments[moment]!(() => controller.abort());
        return { moment, call, aborting };
      });
      await Promise.all(early.map((e) => e.aborting));
      for (const c of running) c.abort();
      const settled = await Promise.all([...runningCalls, ...early.map((e) => e.call)]);
      settled.forEach((s, i) => {
        const what = i < running.length ? 'with rg running' : early[i - running.length]!.moment;
        assert.equal(s.status, 'rejected', `wave ${wave}: a search cancelled ${what} resolved`);
        assert.ok(
          s.status === 'rejected' && isCancellation(s.reason),
          `wave ${wave}, cancelled ${what}: ${s.status === 'rejected' ? String(s.reason) : ''}`,
        );
      });
      // Every call has settled, and each awaited its rg's exit: none may be left, not even a zombie.
      assert.deepEqual(rgChildren(), [], `wave ${wave}`);
      total += settled.length;
      killedRunning += running.length;
    }
    assert.equal(total, 1000);
    assert.deepEqual(
      t.log.entries.filter((e) => e.tool === 'search_files' && e.outcome !== 'E_SANDBOX_CANCELLED'),
      [],
    );
    assert.ok(reached > killedRunning, `only the ${reached} searches cancelled with rg running reached the backend`);
    console.log(
      `load: ${total} cancelled searches (${killedRunning} with rg running, the rest at ${names.length} earlier moments; ${reached} reached the search backend) in ${Date.now() - began} ms; no rg left`,
    );
  },
);

/**
 * Bombs: inputs that cost a process minutes or gigabytes before they were defused. Each runs in a
 * child process (hardening-bombs-child.ts) that reports its own work: the CPU time of its calls and
 * its peak RSS. A child still running after BOMB_GUARD_MS is killed and the test fails: that is a
 * hang guard, not the bound being tested.
 */
const BOMB_CHILD = nodePath.join(import.meta.dirname, 'hardening-bombs-child.ts');
const BOMB_GUARD_MS = 240_000;

async function runBomb(scenario: BombScenario): Promise<BombReport> {
  const ws = tempDir('wt-bomb-');
  const spool = tempDir('wt-bomb-spool-');
  try {
    const child = spawn(
      process.execPath,
      ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', BOMB_CHILD, scenario, ws.path, spool.path],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    let guarded = false;
    const guard = setTimeout(() => {
      guarded = true;
      child.kill('SIGKILL');
    }, BOMB_GUARD_MS);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(guard);
    assert.equal(guarded, false, `${scenario}: still running after ${BOMB_GUARD_MS} ms`);
    assert.equal(code, 0, `${scenario} failed: ${stderr.slice(-2000)}`);
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as BombReport;
    console.log(`bomb ${scenario}: ${JSON.stringify(report)}`);
    for (const outcome of report.outcomes)
      assert.match(outcome, /^(ok|E_SANDBOX_[A-Z_]+)$/, `${scenario}: unnarrated outcome`);
    return report;
  } finally {
    ws.dispose();
    spool.dispose();
  }
}

test(
  'attack: glob bombs ({*a,*a} nine times then b) in find_files globs, iglobs and workspace rules, on 1,000 names',
  { timeout: BOMB_GUARD_MS + 30_000 },
  async () => {
    const report = await runBomb('glob-bombs');
    assert.equal(report.calls, BOMB_GLOBS.length * 2);
    assert.ok(report.maxCallCpuMs <= 1000, `a glob took ${report.maxCallCpuMs} ms of CPU on 1,000 names`);
  },
);

test(
  'attack: artifact_grep with maxResults 1e12 on 5 million matching lines',
  { timeout: BOMB_GUARD_MS + 30_000 },
  async () => {
    const report = await runBomb('grep-max-results');
    assert.deepEqual(report.outcomes, ['ok', 'ok']);
    assert.ok(report.rssGrowthMiB <= 256, `grew ${report.rssGrowthMiB} MiB`);
    assert.ok(report.maxResultBytes <= 512 * 1024, `returned ${report.maxResultBytes} bytes`);
  },
);

test(
  'attack: media_apply_patch replace_all of one character by 1,000 in a 1.7 MB file',
  { timeout: BOMB_GUARD_MS + 30_000 },
  async () => {
    const report = await runBomb('replace-all');
    assert.deepEqual(report.outcomes, ['ok', 'E_SANDBOX_TOO_LARGE']);
    assert.ok(report.rssGrowthMiB <= 256, `grew ${report.rssGrowthMiB} MiB`);
  },
);

test(
  'attack: open_markdown_file on 4 MiB of "#" lines (2 million empty headings)',
  { timeout: BOMB_GUARD_MS + 30_000 },
  async () => {
    const report = await runBomb('markdown-hashes');
    assert.deepEqual(report.outcomes, ['ok', 'E_SANDBOX_NOT_FOUND']);
    assert.ok(report.rssGrowthMiB <= 256, `grew ${report.rssGrowthMiB} MiB`);
    assert.ok(report.maxResultBytes <= 512 * 1024, `returned ${report.maxResultBytes} bytes`);
    assert.ok(report.maxCallCpuMs <= 10_000, `took ${report.maxCallCpuMs} ms of CPU`);
  },
);

test(
  'attack: JSON nested 5,000 levels deep in open_json_file and artifact_query',
  { timeout: BOMB_GUARD_MS + 30_000 },
  async () => {
    const report = await runBomb('deep-json');
    assert.deepEqual(report.outcomes, ['ok', 'ok', 'ok']);
    assert.ok(report.maxResultBytes <= 256 * 1024, `returned ${report.maxResultBytes} bytes`);
  },
);

test(
  'attack: 4 MiB of "[" (JSON nested two million levels) in open_json_file and artifact_query',
  { timeout: BOMB_GUARD_MS + 30_000 },
  async () => {
    const report = await runBomb('json-brackets');
    assert.deepEqual(report.outcomes, ['E_SANDBOX_TOO_LARGE', 'ok', 'E_SANDBOX_TOO_LARGE']);
    assert.ok(report.rssGrowthMiB <= 128, `grew ${report.rssGrowthMiB} MiB`);
    assert.ok(report.maxResultBytes <= 64 * 1024, `returned ${report.maxResultBytes} bytes`);
  },
);
