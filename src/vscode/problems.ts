import * as vscode from 'vscode';
import type { FileProblems, Problem, ProblemScope, ProblemSeverity, ProblemsPort } from '../core/problems/port.ts';
import { addressOf, fileUri } from './uri.ts';

const SETTLE_MAX_MS = 2000;
const SETTLE_QUIET_MS = 300;

const SEVERITY: Record<vscode.DiagnosticSeverity, ProblemSeverity> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'information',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

/** A VS Code diagnostic as the core tools see it (1-based lines and columns). */
export function toProblem(d: vscode.Diagnostic): Problem {
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  return {
    severity: SEVERITY[d.severity],
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined && code !== '' ? { code: String(code) } : {}),
    startLine: d.range.start.line + 1,
    startColumn: d.range.start.character + 1,
    endLine: d.range.end.line + 1,
    endColumn: d.range.end.character + 1,
    message: d.message,
  };
}

/** Waits until the language services stop updating diagnostics for `uris` (or a time limit passes, or the call is cancelled). */
export function settle(uris: readonly vscode.Uri[], signal: AbortSignal): Promise<void> {
  const watched = new Set(uris.map((u) => u.toString()));
  return new Promise((resolve) => {
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const finish = (): void => {
      clearTimeout(quiet);
      clearTimeout(limit);
      listener.dispose();
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const limit = setTimeout(finish, SETTLE_MAX_MS);
    const listener = vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => watched.has(u.toString()))) return;
      clearTimeout(quiet);
      quiet = setTimeout(finish, SETTLE_QUIET_MS);
    });
    if (signal.aborted) finish();
    else signal.addEventListener('abort', finish);
  });
}

/**
 * VS Code's diagnostics (the Problems panel) as the core's problems port. Language services check
 * open documents, so the files asked about are opened (not shown) and their reports let settle.
 */
export function vscodeProblems(local: boolean): ProblemsPort {
  return {
    async collect(open: readonly ProblemScope[], signal: AbortSignal): Promise<readonly FileProblems[]> {
      const uris = open.map((s) => fileUri(s.root, s.rel, local));
      const opened: vscode.Uri[] = [];
      for (const uri of uris) {
        try {
          await vscode.workspace.openTextDocument(uri);
          opened.push(uri);
        } catch {
          // Not a text document VS Code can open (binary, too large): whatever was reported stands.
        }
      }
      if (opened.length > 0) await settle(opened, signal);
      return vscode.languages.getDiagnostics().map(([uri, diagnostics]) => ({
        address: addressOf(uri, local && uri.scheme === 'file'),
        problems: diagnostics.map(toProblem),
      }));
    },
  };
}
