import * as vscode from 'vscode';
import type { Host } from '../host.ts';
import type { DiskWrite, ToolOutcome } from '../../core/tool.ts';
import { fileUri } from '../uri.ts';
import type { NotedOutcome } from '../lm-tools.ts';
import { settle, toProblem } from '../problems.ts';
import { problemLine } from '../../core/problems/render.ts';

function problems(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.severity === vscode.DiagnosticSeverity.Error || d.severity === vscode.DiagnosticSeverity.Warning);
}

const keyOf = (d: vscode.Diagnostic): string => `${d.severity}\u0000${d.source ?? ''}\u0000${d.message}`;

/**
 * Wraps a call that saves staged bytes (learned from what it writes): after the write, lists the errors and warnings the language services
 * report for the saved file that were not there before, as Copilot does after its edits.
 */
export async function withNewDiagnostics(host: Pick<Host, 'session' | 'local'>, writes: readonly DiskWrite[], run: () => Promise<ToolOutcome>, signal: AbortSignal): Promise<NotedOutcome> {
  // A save of staged bytes (an undo's restore is not checked here).
  const saved = writes.find((write) => write.mediaId !== undefined);
  if (saved === undefined) return { outcome: await run() };
  const before = new Map<string, number>();
  let uri: vscode.Uri | undefined;
  let hidden: string | undefined;
  try {
    const target = saved.path;
    uri = fileUri(target.root, target.rel, host.local);
    const taint = host.session.media.find(saved.mediaId ?? '')?.taint;
    const read = host.session.policy.decide(target.rel, 'read', target.root.localPath).action;
    // Security: a problem's message can quote the file (a spell checker's "Unknown word (hunter2)").
    if (taint) hidden = `its content came from the protected "${taint.from}"`;
    else if (read === 'ask' || read === 'deny') hidden = `"${target.display}" is protected from reading`;
  } catch {
    uri = undefined;
  }
  if (uri) for (const d of problems(uri)) before.set(keyOf(d), (before.get(keyOf(d)) ?? 0) + 1);
  const outcome = await run();
  if (!uri) return { outcome };
  try {
    await vscode.workspace.openTextDocument(uri);
  } catch {
    return { outcome };
  }
  await settle([uri], signal);
  const fresh = problems(uri).filter((d) => {
    const left = before.get(keyOf(d)) ?? 0;
    if (left > 0) { before.set(keyOf(d), left - 1); return false; }
    return true;
  });
  if (fresh.length === 0) return { outcome, note: 'No new errors or warnings were reported for the saved file.' };
  if (hidden !== undefined) return { outcome, note: `${fresh.length} new problem(s) were reported for the saved file; their text is not shown because ${hidden}. Ask the user to look at them.` };
  const lines = fresh.slice(0, 20).map((d) => `- ${problemLine(toProblem(d))}`);
  return { outcome, note: `New problems reported after the save (line:column; fix them with stage_file + media_apply_patch; list_problems lists them again):\n${lines.join('\n')}${fresh.length > 20 ? `\n- … and ${fresh.length - 20} more` : ''}` };
}
