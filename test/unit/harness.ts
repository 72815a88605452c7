import { mkdirSync, mkdtempSync, rmSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { Session, type SessionOptions } from '../../src/core/session.ts';
import { Policy, type Rule } from '../../src/core/policy.ts';
import type { AuditEntry, Gate, Log } from '../../src/core/ports.ts';
import type { WorkspaceRoot } from '../../src/core/paths.ts';
import type { GateCall } from '../../src/core/gate.ts';

/** A real temporary folder, removed by `dispose`. */
export function tempDir(prefix = 'wt-test-'): { path: string; dispose(): void } {
  const path = realpathSync(mkdtempSync(nodePath.join(tmpdir(), prefix)));
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) };
}

export class MemoryLog implements Log {
  readonly entries: AuditEntry[] = [];
  readonly messages: string[] = [];
  audit(entry: AuditEntry): void { this.entries.push(entry); }
  info(message: string): void { this.messages.push(message); }
  warn(message: string): void { this.messages.push(message); }
}

export type RecordingGate = Gate & { calls: GateCall[]; allow: boolean };

/** A gate that records what it was asked and answers with `allow` (which a test may change). */
export function recordingGate(allow: boolean): RecordingGate {
  const calls: GateCall[] = [];
  const state: RecordingGate = Object.assign(async (call: GateCall) => { calls.push(call); return { allow: state.allow, decidedBy: 'test' as const }; }, { calls, allow });
  return state;
}

export interface TestSession {
  readonly session: Session;
  readonly root: string;
  readonly log: MemoryLog;
  readonly gate: RecordingGate;
  dispose(): Promise<void>;
}

/** A session over a real temporary workspace folder (or several, by name). */
export function testSession(options: { allow?: boolean; rules?: Rule[]; folders?: string[]; fs?: NodeFs; overrides?: Partial<SessionOptions> } = {}): TestSession {
  const workspace = tempDir('wt-ws-');
  const spool = tempDir('wt-spool-');
  const names = options.folders ?? [];
  const roots: WorkspaceRoot[] = names.length === 0
    ? [{ name: nodePath.basename(workspace.path), address: workspace.path, localPath: workspace.path }]
    : names.map((name) => ({ name, address: nodePath.join(workspace.path, name), localPath: nodePath.join(workspace.path, name) }));
  const log = new MemoryLog();
  const gate = recordingGate(options.allow ?? true);
  const policy = new Policy(options.rules ?? []);
  const session = new Session({
    fs: options.fs ?? new NodeFs(),
    roots: () => roots,
    gate,
    policy: () => policy,
    clock: { now: () => Date.now() },
    log,
    spoolDir: spool.path,
    ...options.overrides,
  });
  return {
    session, root: workspace.path, log, gate,
    async dispose() { await session.dispose(); workspace.dispose(); spool.dispose(); },
  };
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
