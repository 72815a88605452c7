import * as vscode from 'vscode';
import { isCancellation, isSandboxError } from '../core/errors.ts';
import { TOOLS, type ToolResult } from '../core/tools/index.ts';
import type { ToolName } from '../core/contract/names.ts';
import type { ToolOutcome } from '../core/contract/tool.ts';
import { invoke } from '../core/pipeline/invoke.ts';
import type { PageBudget } from '../core/paging/budget.ts';
import { throttledProgress } from '../core/results/progress.ts';
import { withSignal } from './cancellation.ts';
import type { Host } from './host.ts';

/** The person's quick picks show every result they asked for (their commands pass a limit); no result artifact. */
const PERSON_PAGE: PageBudget = { bytes: 16 * 1024 * 1024 };

/**
 * Runs a tool for the person from the palette: the same tool, the same gate (a modal dialog is the
 * decider), with progress and cancellation. Returns undefined when refused or failed (already shown).
 */
export async function runForPerson<N extends ToolName>(
  host: Host,
  name: N,
  input: unknown,
): Promise<ToolOutcome<ToolResult<N>> | undefined> {
  try {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Workspace Tools: ${TOOLS[name].displayName}`,
        cancellable: true,
      },
      (progress, token) =>
        withSignal(token, (signal) =>
          invoke(host.session, name, input, {
            signal,
            origin: 'palette',
            page: PERSON_PAGE,
            progress: throttledProgress((_done, message) => progress.report({ message })),
          }),
        ),
    );
  } catch (e) {
    if (isCancellation(e)) return undefined;
    if (!isSandboxError(e)) throw e;
    const text = `Workspace Tools: ${e.what}`;
    if (e.code === 'E_SANDBOX_REFUSED') void vscode.window.showInformationMessage(text);
    else void vscode.window.showErrorMessage(text);
    return undefined;
  }
}
