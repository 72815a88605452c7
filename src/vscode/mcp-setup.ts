import * as vscode from 'vscode';
import * as nodePath from 'node:path';
import { mcpSetupMarkdown } from '../mcp/setup.ts';

/** "Workspace Tools: Set Up the MCP Server for Other Agents": the snippets for this workspace, in an untitled Markdown document. */
export function registerMcpSetup(extensionPath: string): vscode.Disposable {
  return vscode.commands.registerCommand('workspaceTools.showMcpSetup', async () => {
    const roots = (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file')
      .map((f) => f.uri.fsPath);
    const content = mcpSetupMarkdown({ node: 'node', cli: nodePath.join(extensionPath, 'dist', 'cli.js'), roots });
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
    await vscode.window.showTextDocument(doc, { preview: true });
  });
}
