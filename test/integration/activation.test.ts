import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';

const EXTENSION_ID = 'workspace-tools.workspace-tools';

interface ManifestTool {
  name: string;
}

function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed in this extension host`);
  return ext;
}

describe('activation', () => {
  it('loads the extension from the development path', () => {
    const ext = extension();
    assert.equal(ext.packageJSON.name, 'workspace-tools');
    assert.equal(ext.packageJSON.publisher, 'workspace-tools');
  });

  it('activates', async () => {
    const ext = extension();
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  it('registers a language model tool for every tool the manifest declares', async () => {
    const ext = extension();
    await ext.activate();
    const declared = ((ext.packageJSON.contributes?.languageModelTools ?? []) as ManifestTool[]).map((t) => t.name);
    assert.ok(declared.length > 0, 'package.json contributes no languageModelTools');
    const registered = vscode.lm.tools.map((t) => t.name);
    const missing = declared.filter((name) => !registered.some((r) => r.startsWith(name)));
    assert.deepEqual(missing, [], `declared but not in vscode.lm.tools (which has: ${registered.join(', ')})`);
  });
});

describe('MCP setup', () => {
  it('"Set Up the MCP Server for Other Agents" opens the snippets for this workspace, running the extension\'s own dist/cli.js', async () => {
    const ext = extension();
    await ext.activate();
    await vscode.commands.executeCommand('workspaceTools.showMcpSetup');
    const doc = vscode.window.activeTextEditor?.document;
    assert.ok(doc, 'an editor shows the snippets');
    assert.equal(doc.languageId, 'markdown');
    const text = doc.getText();
    assert.match(text, /^# Workspace Tools as an MCP server/);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder);
    const vscodeSnippet = /## VS Code[\s\S]*?```json\n([\s\S]*?)\n```/.exec(text)?.[1];
    assert.ok(vscodeSnippet, text);
    const server = (JSON.parse(vscodeSnippet) as { servers: Record<string, { args: string[] }> }).servers[
      'workspace-tools'
    ];
    assert.deepEqual(server?.args, [`${ext.extensionPath}/dist/cli.js`, 'mcp', '--root', folder, '--gate', 'elicit']);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });
});
