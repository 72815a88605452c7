/**
 * The two ways the benchmarks drive the tools — the core directly, and the CLI's JSON-lines
 * session over stdio — and a plain process runner for the peers (ripgrep, cp).
 */
import { homedir } from 'node:os';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import * as nodePath from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import type { Session } from '../../src/core/pipeline/session.ts';
import { assemble } from '../../src/core/pipeline/assemble.ts';
import { parseRules } from '../../src/core/policy/policy.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import { locateRipgrep } from '../../src/core/ripgrep/binary.ts';
import { invoke } from '../../src/core/pipeline/invoke.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import type { ToolOutcome } from '../../src/core/contract/tool.ts';
import type { ShellHost } from '../../src/core/shell/port.ts';
import { benchDir } from './workloads.ts';

export const repoRoot = nodePath.resolve(nodePath.dirname(fileURLToPath(import.meta.url)), '../..');

let rgPath: string | undefined;
/** The ripgrep the tools use (@vscode/ripgrep's binary); the baselines run the same binary. */
export function ripgrep(): string {
  rgPath ??= locateRipgrep({ startDir: repoRoot })?.path;
  if (!rgPath) throw new Error('ripgrep not found: run npm ci (it comes with @vscode/ripgrep)');
  return rgPath;
}

export interface CoreHost {
  readonly session: Session;
  invoke(tool: ToolName, input: unknown): Promise<ToolOutcome>;
  dispose(): Promise<void>;
}

/**
 * A core session built the way the CLI builds it (NodeFs, the default policy, ripgrep search),
 * with a gate that approves every call, over one workspace folder.
 */
export async function coreHost(root: string, options: { shell?: ShellHost } = {}): Promise<CoreHost> {
  const real = realpathSync(root);
  const roots = [{ name: nodePath.basename(real), address: real, localPath: real }];
  const spoolDir = mkdtempSync(nodePath.join(benchDir(), 'spool-'));
  const policy = parseRules([]).policy;
  const rg = createRipgrep(ripgrep());
  const session = assemble({
    // The shell's home and environment are the session's (a benchmark's shell brings its own).
    home: options.shell?.home ?? homedir(),
    env: options.shell?.env ?? (() => process.env),
    // The listing's worker thread as the extension runs it, built (run.ts builds dist/ first): from
    // its source, Node would load its TypeScript stripper into the worker, ~12 MiB the extension never has.
    fs: new NodeFs({}, { workerFile: nodePath.join(repoRoot, 'dist/folder-worker.js') }),
    roots: () => roots,
    gate: async () => ({ allow: true, decidedBy: 'cli' }),
    policy: () => policy,
    search: createRipgrepSearch(rg),
    ripgrep: rg,
    clock: { now: () => Date.now() },
    log: { audit: () => {}, info: () => {}, warn: () => {} },
    spoolDir,
    // The 1 GiB log must fit the artifact budget whatever the default is.
    limits: () => ({
      artifactBudgetBytes: 64 * 1024 ** 3,
      mediaBudgetBytes: 1024 ** 3,
      nonStreamingMaxBytes: 64 * 1024 ** 2,
      undoBudgetBytes: 1024 ** 3,
    }),
    ...(options.shell ? { shell: options.shell } : {}),
  });
  await session.artifacts.start();
  return {
    session,
    invoke: (tool, input) => invoke(session, tool, input),
    async dispose() {
      await session.dispose();
      rmSync(spoolDir, { recursive: true, force: true });
    },
  };
}

export interface CliReply {
  readonly line: string;
}

/** `node dist/cli.js --root DIR --gate approve` in session mode: one JSON line in, one out. */
export class CliSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((line: string) => void)[] = [];
  private stderr = '';
  private readonly exited: Promise<void>;

  private constructor(root: string) {
    this.child = spawn(
      process.execPath,
      [nodePath.join(repoRoot, 'dist/cli.js'), '--root', root, '--gate', 'approve'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on('line', (line) =>
      this.waiting.shift()?.(line),
    );
    this.exited = new Promise((r) => this.child.once('close', () => r()));
  }

  static async start(root: string): Promise<CliSession> {
    const cli = new CliSession(root);
    // One call to be sure it is up (and its modules are loaded) before anything is timed.
    const reply = await cli.call('list_directory', { max_depth: 1 });
    if (!reply.line.startsWith('{"result"'))
      throw new Error(`the CLI session did not start: ${reply.line} ${cli.stderr}`);
    return cli;
  }

  /** Sends one request; resolves with the whole reply line. */
  call(tool: ToolName, input: unknown): Promise<CliReply> {
    return new Promise((resolve, reject) => {
      const onClose = (): void => reject(new Error(`the CLI session exited: ${this.stderr}`));
      this.child.once('close', onClose);
      this.waiting.push((line) => {
        this.child.off('close', onClose);
        resolve({ line });
      });
      this.child.stdin.write(JSON.stringify({ tool, input }) + '\n');
    });
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }
}

/** Parses a CLI reply; throws on an error reply. */
export function cliResult<T = unknown>(reply: CliReply): T {
  const parsed = JSON.parse(reply.line) as { result?: T; error?: { code: string; message: string } };
  if (parsed.error) throw new Error(`CLI call failed: ${parsed.error.code}: ${parsed.error.message}`);
  return parsed.result as T;
}

export interface ProcessOutput {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Runs a program to completion, its whole stdout collected (as a host consuming it would). */
export function run(cmd: string, args: readonly string[], options: { cwd?: string } = {}): Promise<ProcessOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}

/** `rg --json` output: the number of `match` messages and of matched lines. */
export function countRgJsonMatches(out: Buffer): number {
  let n = 0;
  for (const line of out.toString('utf8').split('\n')) if (line.startsWith('{"type":"match"')) n++;
  return n;
}

export function countLines(out: Buffer, separator = '\n'): number {
  const text = out.toString('utf8');
  return text === '' ? 0 : text.split(separator).filter((l) => l !== '').length;
}
