import * as vscode from 'vscode';
import type { Host } from './host.ts';
import { runForPerson } from './run-for-person.ts';

/** "Run Shell Command…": the same tool and sandbox as the model's, the output in an editor. */
export async function runShellCommandCommand(host: Host): Promise<void> {
  const command = await vscode.window.showInputBox({
    title: 'Workspace Tools: Run Shell Command',
    prompt:
      'Runs in the first workspace folder inside the OS sandbox: secrets unreadable, writes only under the write roots, no network unless allowed.',
    placeHolder: 'npm test',
    ignoreFocusOut: true,
  });
  if (!command) return;
  const outcome = await runForPerson(host, 'run_shell_command', { command });
  if (!outcome) return;
  const doc = await vscode.workspace.openTextDocument({ content: outcome.text, language: 'log' });
  await vscode.window.showTextDocument(doc, { preview: true });
}
