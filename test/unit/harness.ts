import { mkdirSync, mkdtempSync, rmSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import type { Session, SessionOptions } from '../../src/core/pipeline/session.ts';
import { assemble } from '../../src/core/pipeline/assemble.ts';
import { Policy, type Rule } from '../../src/core/policy/policy.ts';
import type { AuditEntry, Gate, Log } from '../../src/core/ports.ts';
import type { WorkspaceRoot } from '../../src/core/paths.ts';
import type { CallOrigin, GateCall } from '../../src/core/gate.ts';
import { locateRipgrep } from '../../src/core/ripgrep/binary.ts';
import { createRipgrep, type Ripgrep } from '../../src/core/ripgrep/process.ts';
import type { TestContext } from 'node:test';
import type { ShellHost } from '../../src/core/shell/port.ts';
import { invoke, invokeTool, type InvokeOptions } from '../../src/core/pipeline/invoke.ts';
import type { ToolResult } from '../../src/core/tools/index.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import type { Tool, ToolOutcome } from '../../src/core/contract/tool.ts';
import { isPaged, type Paged } from '../../src/core/paging/paged.ts';
import assert from 'node:assert/strict';

/** A real temporary folder, removed by `dispose`. */
export function tempDir(prefix = 'wt-test-'): { path: string; dispose(): void } {
  const path = realpathSync(mkdtempSync(nodePath.join(tmpdir(), prefix)));
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) };
}

/** A real temporary folder, removed when the test `t` ends. */
export function testDir(t: Pick<TestContext, 'after'>, prefix?: string): { path: string } {
  const dir = tempDir(prefix);
  t.after(() => dir.dispose());
  return dir;
}

export class MemoryLog implements Log {
  readonly entries: AuditEntry[] = [];
  readonly messages: string[] = [];
  audit(entry: AuditEntry): void {
    this.entries.push(entry);
  }
  info(message: string): void {
    this.messages.push(message);
  }
  warn(message: string): void {
    this.messages.push(message);
  }
}

export type RecordingGate = Gate & { calls: GateCall[]; allow: boolean };

/** A gate that records what it was asked and answers with `allow` (which a test may change). */
export function recordingGate(allow: boolean): RecordingGate {
  const calls: GateCall[] = [];
  const state: RecordingGate = Object.assign(
    async (call: GateCall) => {
      calls.push(call);
      return { allow: state.allow, decidedBy: 'test' as const };
    },
    { calls, allow },
  );
  return state;
}

export interface TestSession {
  readonly session: Session;
  readonly root: string;
  readonly log: MemoryLog;
  readonly gate: RecordingGate;
  /** Runs the tool `name` through the session; the outcome carries that tool's result type. */
  invoke<N extends ToolName>(name: N, input: unknown, options?: InvokeOptions): Promise<ToolOutcome<ToolResult<N>>>;
  dispose(): Promise<void>;
}

/** `overrides.shell`: a whole ShellHost, whose home and environment become the session's. */
export type TestSessionOptions = {
  allow?: boolean;
  rules?: Rule[];
  folders?: string[];
  fs?: NodeFs;
  overrides?: Partial<Omit<SessionOptions, 'shell'>> & { shell?: ShellHost };
};

/** A session over a real temporary workspace folder, disposed when the test `t` ends. */
export function session(t: Pick<TestContext, 'after'>, options: TestSessionOptions = {}): TestSession {
  const s = testSession(options);
  t.after(() => s.dispose());
  return s;
}

/** The bundled ripgrep's path, located once for the whole test file. */
let located: string | undefined;

/** The real ripgrep the tests run (the bundled package's binary), as a host hands it to a session. */
export function testRipgrep(): Ripgrep {
  located ??= locateRipgrep({ startDir: nodePath.resolve(import.meta.dirname, '..', '..') })?.path;
  if (located === undefined) throw new Error('ripgrep not found: install @vscode/ripgrep');
  return createRipgrep(located);
}

/** A session over a real temporary workspace folder (or several, by name). */
export function testSession(options: TestSessionOptions = {}): TestSession {
  const workspace = tempDir('wt-ws-');
  const spool = tempDir('wt-spool-');
  const names = options.folders ?? [];
  const roots: WorkspaceRoot[] =
    names.length === 0
      ? [{ name: nodePath.basename(workspace.path), address: workspace.path, localPath: workspace.path }]
      : names.map((name) => ({
          name,
          address: nodePath.join(workspace.path, name),
          localPath: nodePath.join(workspace.path, name),
        }));
  const log = new MemoryLog();
  const gate = recordingGate(options.allow ?? true);
  const policy = new Policy(options.rules ?? []);
  const home = tempDir('wt-home-');
  const shell = options.overrides?.shell;
  const session = assemble({
    ...(shell ? { home: shell.home, env: shell.env } : testEnvironment(home.path)),
    fs: options.fs ?? new NodeFs(),
    roots: () => roots,
    gate,
    policy: () => policy,
    clock: { now: () => Date.now() },
    log,
    spoolDir: spool.path,
    ripgrep: testRipgrep(),
    ...options.overrides,
  });
  return {
    session,
    root: workspace.path,
    log,
    gate,
    invoke: (name, input, callOptions) => invoke(session, name, input, callOptions),
    async dispose() {
      await session.dispose();
      workspace.dispose();
      spool.dispose();
      home.dispose();
    },
  };
}

/**
 * The home and environment a test session gets: a home of its own (an empty temporary folder, never
 * the machine's), and this process's PATH only, so git finds its binary and no configuration of the
 * machine reaches the test.
 */
export function testEnvironment(home: string): Pick<SessionOptions, 'home' | 'env'> {
  const env = { PATH: process.env['PATH'], HOME: home };
  return { home, env: () => env };
}

/**
 * Runs any tool object (the tests' own included) on `session` down the one pipeline (`invokeTool`),
 * with the arguments in the order the tests write them.
 */
export function runTool<R>(
  session: Session,
  tool: Tool<R>,
  input: unknown,
  signal?: AbortSignal,
  origin: CallOrigin = 'headless',
  options: Omit<InvokeOptions, 'signal' | 'origin'> = {},
): Promise<ToolOutcome<R>> {
  return invokeTool(session, tool, input, { ...(signal ? { signal } : {}), origin, ...options });
}

type PagedPart<R> = Extract<R, Paged<unknown>>;
type WholePart<R> = Exclude<R, Paged<unknown>>;
const isPagedPart = <R>(output: R): output is PagedPart<R> => isPaged(output);
const isWholePart = <R>(output: R): output is WholePart<R> => !isPaged(output);

/** A result that went to a result artifact (its first page and the artifact); fails the test when it fit one page. */
export function pagedResult<R>(output: R): PagedPart<R> {
  if (!isPagedPart(output))
    assert.fail('expected a paged result (a first page and a result artifact), got a result that fits one page');
  return output;
}

/** A result that fit one page; fails the test when it went to a result artifact. */
export function wholeResult<R>(output: R): WholePart<R> {
  if (!isWholePart(output)) assert.fail('expected a result that fits one page, got a paged result');
  return output;
}

const isKind = <R extends { readonly kind: string }, K extends R['kind']>(
  result: R,
  kind: K,
): result is Extract<R, { readonly kind: K }> => result.kind === kind;

/** A result of one kind (e.g. an artifact_query answer about JSON); fails the test when it is of another. */
export function ofKind<R extends { readonly kind: string }, K extends R['kind']>(
  result: R,
  kind: K,
): Extract<R, { readonly kind: K }> {
  if (!isKind(result, kind)) assert.fail(`expected a result of kind ${kind}, got ${result.kind}`);
  return result;
}

/**
 * The links every hostile-path suite needs inside `root`: to a file and a folder outside, a
 * relative link out of a subfolder, a dangling link and a loop.
 */
export function hostileLinks(root: string, outsideDir: string, outsideFile: string): void {
  mkdirSync(nodePath.join(root, 'dir'), { recursive: true });
  symlinkSync(outsideFile, nodePath.join(root, 'link-file'));
  symlinkSync(outsideDir, nodePath.join(root, 'link-dir'));
  symlinkSync(nodePath.relative(nodePath.join(root, 'dir'), outsideDir), nodePath.join(root, 'dir', 'rel-link'));
  symlinkSync('/nonexistent/wt-target', nodePath.join(root, 'dangling'));
  symlinkSync('loop2', nodePath.join(root, 'loop1'));
  symlinkSync('loop1', nodePath.join(root, 'loop2'));
}
