import * as vscode from 'vscode';
import type { Host } from '../host.ts';
import type { DiskWrite, ToolOutcome } from '../../core/contract/tool.ts';
import { fileUri } from '../uri.ts';
import type { NotedOutcome } from '../lm-tools.ts';
import { settle, toProblem } from '../problems.ts';
import { problemLine } from '../../core/problems/render.ts';

function problems(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.severity === vscode.DiagnosticSeverity.Error || d.severity === vscode.DiagnosticSeverity.Warning);
}

const keyOf = (d: vscode.Diagnostic): string => `${d.severity}\u0000${d.source ?? ''}\u0000${d.message}`;

/** One file a save writes, watched for problems: its document, the problems it had before, and why their text is withheld. */
interface Watched {
  readonly display: string;
  readonly uri: vscode.Uri;
  readonly before: Map<string, number>;
  readonly hidden: string | undefined;
}

function watch(host: Pick<Host, 'session' | 'local'>, write: DiskWrite): Watched | undefined {
  try {
    const target = write.path;
    const uri = fileUri(target.root, target.rel, host.local);
    const taint = host.session.media.find(write.mediaId ?? '')?.taint;
    const read = host.session.policy.decide(target.rel, 'read', target.root.localPath).action;
    // Security: a problem's message can quote the file (a spell checker's "Unknown word (hunter2)").
    const hidden = taint
      ? `its content came from the protected "${taint.from}"`
      : read === 'ask' || read === 'deny'
        ? `"${target.display}" is protected from reading`
        : undefined;
    const before = new Map<string, number>();
    for (const d of problems(uri)) before.set(keyOf(d), (before.get(keyOf(d)) ?? 0) + 1);
    return { display: target.display, uri, before, hidden };
  } catch {
    return undefined;
  }
}

/** The problems reported for a watched file since the save that were not there before. */
function freshProblems(file: Watched): vscode.Diagnostic[] {
  const left = new Map(file.before);
  return problems(file.uri).filter((d) => {
    const n = left.get(keyOf(d)) ?? 0;
    if (n > 0) {
      left.set(keyOf(d), n - 1);
      return false;
    }
    return true;
  });
}

/**
 * Wraps a call that saves staged bytes (learned from what it writes): after the write, lists the errors and warnings the language services
 * report for each saved file (a set: every file it writes, not those it deletes) that were not there before, as Copilot does after its edits.
 */
export async function withNewDiagnostics(
  host: Pick<Host, 'session' | 'local'>,
  writes: readonly DiskWrite[],
  run: () => Promise<ToolOutcome>,
  signal: AbortSignal,
): Promise<NotedOutcome> {
  // Saves of staged bytes (an undo's restore is not checked here); a delete leaves no file to check.
  const saved = writes.filter((write) => write.mediaId !== undefined && write.kind !== 'delete');
  if (saved.length === 0) return { outcome: await run() };
  const watched = saved.map((write) => watch(host, write)).filter((w) => w !== undefined);
  const outcome = await run();
  const opened: Watched[] = [];
  for (const file of watched) {
    try {
      await vscode.workspace.openTextDocument(file.uri);
      opened.push(file);
    } catch {
      // Not a text document (or gone): nothing to check.
    }
  }
  if (opened.length === 0) return { outcome };
  await settle(
    opened.map((f) => f.uri),
    signal,
  );
  const found = opened.map((file) => ({ file, fresh: freshProblems(file) })).filter(({ fresh }) => fresh.length > 0);
  if (found.length === 0)
    return {
      outcome,
      note: `No new errors or warnings were reported for ${opened.length === 1 ? 'the saved file' : `the ${opened.length} saved files`}.`,
    };
  const lines = found.flatMap(({ file, fresh }) => {
    const where = opened.length > 1 ? `"${file.display}": ` : '';
    if (file.hidden !== undefined)
      return [
        `- ${where}${fresh.length} new problem(s); their text is not shown because ${file.hidden}. Ask the user to look at them.`,
      ];
    return [
      ...fresh.slice(0, 20).map((d) => `- ${where}${problemLine(toProblem(d))}`),
      ...(fresh.length > 20 ? [`- ${where}… and ${fresh.length - 20} more`] : []),
    ];
  });
  const only = found[0]!;
  if (opened.length === 1 && only.file.hidden !== undefined)
    return {
      outcome,
      note: `${only.fresh.length} new problem(s) were reported for the saved file; their text is not shown because ${only.file.hidden}. Ask the user to look at them.`,
    };
  return {
    outcome,
    note: `New problems reported after the save (line:column; fix them with stage_file + media_apply_patch; list_problems lists them again):\n${lines.join('\n')}`,
  };
}
