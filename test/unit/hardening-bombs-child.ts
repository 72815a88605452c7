/**
 * The child process of the bomb tests in hardening-load.test.ts (not a test file itself): runs one
 * hostile input through the core against a real workspace folder and reports, as one JSON line, the
 * work it cost this process (CPU time of the calls, peak RSS growth), the bytes returned and the
 * outcome. Run in a child so a bomb that is not defused costs only this process.
 *
 * Usage: node hardening-bombs-child.ts <scenario> <workspace> <spool-dir>
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { assemble } from '../../src/core/pipeline/assemble.ts';
import { parseRules } from '../../src/core/policy/policy.ts';
import { compileGlob } from '../../src/core/search/ripgrep-glob.ts';
import { invoke } from '../../src/core/pipeline/invoke.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import { isSandboxError } from '../../src/core/errors.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import { locateRipgrep } from '../../src/core/ripgrep/binary.ts';
import { MemoryLog, testEnvironment } from './harness.ts';
import type { ToolResult } from '../../src/core/tools/index.ts';
import { BOMB_GLOBS, type BombReport, type BombScenario } from './bombs.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

const [scenario, workspace, spool] = process.argv.slice(2) as [BombScenario, string, string];
const rg = locateRipgrep();
const ripgrep = rg ? createRipgrep(rg.path) : undefined;
const session = assemble({
  ...testEnvironment(spool),
  fs: new NodeFs(),
  roots: () => [{ name: 'ws', address: workspace, localPath: workspace }],
  gate: async () => ({ allow: true, decidedBy: 'test' }),
  policy: () => parseRules([]).policy,
  ...(ripgrep ? { search: createRipgrepSearch(ripgrep), ripgrep } : {}),
  clock: { now: () => Date.now() },
  log: new MemoryLog(),
  spoolDir: spool,
});

const MiB = 1024 * 1024;
let maxCallCpuMs = 0;
let maxResultBytes = 0;
const outcomes: string[] = [];

/** Runs `work` and records its CPU time; `bytes` is what it returned. */
async function measured(work: () => Promise<number>): Promise<void> {
  const before = process.cpuUsage();
  const bytes = await work();
  const used = process.cpuUsage(before);
  maxCallCpuMs = Math.max(maxCallCpuMs, (used.user + used.system) / 1000);
  maxResultBytes = Math.max(maxResultBytes, bytes);
}

async function call<N extends ToolName>(tool: N, input: object): Promise<ToolResult<N> | undefined> {
  let result: ToolResult<N> | undefined;
  await measured(async () => {
    try {
      const outcome = await invoke(session, tool, input);
      result = outcome.result;
      outcomes.push('ok');
      return Buffer.byteLength(JSON.stringify(outcome.result)) + Buffer.byteLength(outcome.text);
    } catch (e) {
      outcomes.push(isSandboxError(e) ? e.code : `UNNARRATED ${String(e).slice(0, 200)}`);
      return e instanceof Error ? Buffer.byteLength(e.message) : 0;
    }
  });
  return result;
}

function write(rel: string, content: string | Buffer): void {
  mkdirSync(nodePath.dirname(nodePath.join(workspace, rel)), { recursive: true });
  writeFileSync(nodePath.join(workspace, rel), content);
}

const NAMES = Array.from({ length: 1000 }, (_, i) => `${'a'.repeat(26)}${String(i).padStart(4, '0')}`);

async function run(): Promise<void> {
  switch (scenario) {
    case 'glob-bombs': {
      for (const name of NAMES) write(`names/${name}`, '');
      for (const glob of BOMB_GLOBS) {
        // The matchers alone, over 1,000 names (and a policy rule with the same glob) ...
        await measured(async () => {
          const matchers = [compileGlob(glob), compileGlob(glob, { caseInsensitive: true })];
          const { policy, errors } = parseRules([
            { glob, read: 'deny' },
            { glob: `names/${glob}`, read: 'ask' },
          ]);
          if (errors.length) throw new Error(errors.join(' '));
          let hits = 0;
          for (const name of NAMES) {
            for (const m of matchers) if (m(`names/${name}`)) hits++;
            if (policy.decide(`names/${name}`, 'read').action !== 'default') hits++;
          }
          return hits;
        });
        // ... and through find_files on the folder.
        await call('find_files', { glob, path: 'names' });
        await call('find_files', { glob: '*', iglob: glob, path: 'names' });
      }
      return;
    }
    case 'grep-max-results': {
      write('many.txt', 'x\n'.repeat(5_000_000));
      const handle = await call('open_file', { path: 'many.txt' });
      if (!handle) throw new Error('open_file many.txt failed');
      await call('artifact_grep', { callId: oneFile(handle).callId, pattern: 'x', maxResults: 1e12 });
      return;
    }
    case 'replace-all': {
      write('big.txt', 'a'.repeat(1_700_000));
      const staged = await call('stage_file', { path: 'big.txt' });
      if (!staged) throw new Error('stage_file big.txt failed');
      await call('media_apply_patch', {
        media_id: staged.media_id,
        patch: { find: 'a', replace: 'b'.repeat(1000), replace_all: true },
      });
      return;
    }
    case 'markdown-hashes': {
      write('hashes.md', '#\n'.repeat(2 * 1024 * 1024));
      const opened = await call('open_markdown_file', { path: 'hashes.md' });
      if (opened) await call('artifact_query', { callId: opened.handle.callId, select: 'nothing here' });
      return;
    }
    case 'deep-json': {
      const depth = 5000;
      write('deep.json', `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`);
      const opened = await call('open_json_file', { path: 'deep.json' });
      if (opened) {
        await call('artifact_query', { callId: opened.handle.callId, select: '' });
        await call('artifact_query', { callId: opened.handle.callId, select: '/a/0'.repeat(2000) });
      }
      return;
    }
    case 'json-brackets': {
      // 4 MiB of "[" then "]": two million levels of nesting.
      const depth = 2 * 1024 * 1024;
      write('brackets.json', `${'['.repeat(depth)}${']'.repeat(depth)}`);
      await call('open_json_file', { path: 'brackets.json' });
      const opened = await call('open_file', { path: 'brackets.json' });
      if (opened) await call('artifact_query', { callId: oneFile(opened).callId, select: '' });
      return;
    }
  }
}

const rssBefore = process.memoryUsage.rss();
await run();
const report: BombReport = {
  scenario,
  maxCallCpuMs: Math.round(maxCallCpuMs),
  maxResultBytes,
  outcomes,
  calls: outcomes.length,
  rssGrowthMiB: Math.round((process.resourceUsage().maxRSS * 1024 - rssBefore) / MiB),
};
await session.dispose();
process.stdout.write(`${JSON.stringify(report)}\n`);
