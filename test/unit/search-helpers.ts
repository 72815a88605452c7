import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { testRipgrep, testSession, tempDir, type TestSession, type TestSessionOptions } from './harness.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import type { Rule } from '../../src/core/policy/policy.ts';
import type { SandboxSearch } from '../../src/core/search/port.ts';
import { isSandboxError, type SandboxCode } from '../../src/core/errors.ts';

/** The real ripgrep the tests run: the bundled package's binary. */
/** A small tree with every case the search flags change: dot entries, ignored files, depth, case. */
export const SEARCH_TREE: Readonly<Record<string, string>> = {
  '.git/': '',
  '.gitignore': 'ignored/\n*.log\n',
  'src/app.ts': 'export const Alpha = 1;\n// alpha lowercase\nconst dotted = "a.b";\n',
  'src/util/deep.ts': 'Alpha deep\n',
  'src/util/deeper/deepest.ts': 'Alpha deepest\n',
  'docs/Guide.MD': 'Alpha in markdown\n',
  'docs/notes.md': 'alpha notes\n',
  '.hidden/inside.txt': 'Alpha hidden\n',
  '.dotfile': 'Alpha dotfile\n',
  'ignored/out.txt': 'Alpha ignored\n',
  'build.log': 'Alpha log\n',
  'axb.txt': 'axb\n',
};

export function rgPath(): string {
  return testRipgrep().path;
}

/** A session over a real temp workspace whose search backend is the real ripgrep. */
export function searchSession(options: SearchSessionOptions = {}): TestSession {
  return testSession(searchOptions(options));
}

type SearchSessionOptions = { rules?: Rule[]; folders?: string[]; allow?: boolean; search?: SandboxSearch };

/** A test session's options with a search backend (real ripgrep unless `search` is given); for `session(t, …)`. */
export function searchOptions(options: SearchSessionOptions = {}): TestSessionOptions {
  const { search, ...rest } = options;
  const ripgrep = testRipgrep();
  return { ...rest, overrides: { search: search ?? createRipgrepSearch(ripgrep), ripgrep } };
}

/** Writes files (relative path → content) under `root`, creating folders; a trailing "/" makes an empty folder. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, content] of Object.entries(files)) {
    const full = nodePath.join(root, rel);
    if (rel.endsWith('/')) {
      mkdirSync(full, { recursive: true });
      continue;
    }
    mkdirSync(nodePath.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** The pids of this process's children named `rg` (zombies included). */
export function rgChildren(): number[] {
  if (existsSync('/proc/self/stat')) {
    const out: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue;
      }
      // pid (comm) state ppid ...
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      if (comm === 'rg' && ppid === process.pid) out.push(Number(entry));
    }
    return out;
  }
  const r = spawnSync('pgrep', ['-P', String(process.pid), 'rg'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map(Number);
}

export async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs `fn` and returns the SandboxError code and message it throws. */
export async function failure(fn: () => Promise<unknown>): Promise<{ code: SandboxCode; message: string }> {
  try {
    await fn();
  } catch (e) {
    if (isSandboxError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a SandboxError, got a result');
}

/**
 * An rg that cannot read files it lacks permission for, even when the tests run as root: a wrapper
 * that drops the capabilities which let root read anything. Undefined when that is impossible here.
 */
export function unprivilegedRg(): { path: string; dispose(): void } | undefined {
  if (process.getuid?.() !== 0) return { path: rgPath(), dispose: () => {} };
  let setpriv: string;
  try {
    setpriv = execFileSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
  if (!setpriv) return undefined;
  const dir = tempDir('wt-rgwrap-');
  const wrapper = nodePath.join(dir.path, 'rg');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec ${setpriv} --inh-caps=-all --bounding-set=-dac_override,-dac_read_search -- ${rgPath()} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  const probe = spawnSync(wrapper, ['--version']);
  if (probe.status !== 0) {
    dir.dispose();
    return undefined;
  }
  return { path: wrapper, dispose: () => dir.dispose() };
}
