import type * as vscode from 'vscode';
import type { Session } from '../core/pipeline/session.ts';
import type { RecoveredSet } from '../core/media/recover-sets.ts';
import type { ToolName } from '../core/contract/names.ts';
import type { AuditLog } from './audit-log.ts';
import type { VscodeGate } from './gate.ts';
import type { LanguageModelToolRegistrations } from './lm-tools.ts';
import type { Settings } from './settings.ts';
import type { ScriptedDecider } from './test-hooks.ts';

/** What the extension host holds for one window; commands and views are small functions over it. */
export interface Host {
  readonly context: vscode.ExtensionContext;
  readonly session: Session;
  readonly settings: () => Settings;
  readonly gate: VscodeGate;
  readonly log: AuditLog;
  readonly tools: LanguageModelToolRegistrations;
  /** Whether the node fast path serves the workspace (addresses are filesystem paths). */
  readonly local: boolean;
  /** The change sets an earlier process left half applied, finished or rolled back as this window started. */
  readonly recovered: readonly RecoveredSet[];
}

/** Exposed as the extension's exports only in the test host. */
export interface TestApi {
  readonly host: Host;
  readonly decider: ScriptedDecider | undefined;
  /** What prepareInvocation answers VS Code for this call (the chat confirmation). */
  prepare(name: ToolName, input: unknown): vscode.PreparedToolInvocation;
  /** What VS Code calls for a tool (prepareInvocation, invoke), to call as a chat VS Code cannot open in the test host would. */
  tool(name: ToolName): vscode.LanguageModelTool<unknown>;
  /** How long activate() took, in milliseconds (for the benchmark). */
  readonly activateMs?: number;
}
