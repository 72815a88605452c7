// Runs in code-server started WITHOUT --disable-workspace-trust, on a folder nobody trusted (the
// profile is fresh and the trust prompt is off, so the window opens in restricted mode).
// Built and run by `node test/run-integration.mjs untrusted` (test/build-tests.mjs bundles this
// folder with test/integration/index.ts as the runner).
import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { TOOLS } from '../../src/core/tools/index.ts';
import { TOOL_NAMES } from '../../src/core/contract/names.ts';
import { invoke, invokeFailing, testApi } from '../integration/api.ts';
import { invokeTool } from '../../src/core/pipeline/invoke.ts';

const WRITE_TOOLS = TOOL_NAMES.filter((name) => TOOLS[name].risk === 'write');
const READ_TOOLS = TOOL_NAMES.filter((name) => TOOLS[name].risk === 'read');

/** Our tools as VS Code lists them (all of them carry the `workspace-tools` tag). */
const listedTools = (): string[] =>
  vscode.lm.tools
    .filter((t) => t.tags.includes('workspace-tools'))
    .map((t) => t.name)
    .sort();

describe('untrusted workspace', () => {
  it('the window is in restricted mode', () => {
    assert.equal(vscode.workspace.isTrusted, false);
    assert.ok(vscode.workspace.workspaceFolders?.length, 'a folder is open');
  });

  it('the extension registers only the read tools', async () => {
    const api = await testApi();
    assert.deepEqual([...WRITE_TOOLS].sort(), ['media_apply_patch', 'save_media', 'stage_file', 'undo_save']);
    for (const name of WRITE_TOOLS) assert.ok(!api.host.tools.names.includes(name), `${name} is registered`);
    assert.deepEqual([...api.host.tools.names].sort(), [...READ_TOOLS].sort());
  });

  it('vscode.lm.tools lists the read tools; a write tool it lists has no implementation', async () => {
    // VS Code 1.139 hands the extension host every tool a manifest declares, including those its
    // `when` clause disables (MainThreadLanguageModelTools sends getAllToolsIncludingDisabled()),
    // so the write tools may be listed; what matters is that none of them can run.
    const listed = listedTools();
    for (const name of READ_TOOLS) assert.ok(listed.includes(name), `vscode.lm.tools does not list ${name}`);
    for (const name of WRITE_TOOLS.filter((n) => listed.includes(n))) {
      const message = await invokeFailing(
        name,
        name === 'stage_file'
          ? { path: 'src/main.js' }
          : name === 'save_media'
            ? { media_id: 'm1' }
            : { media_id: 'm1', patch: { find: 'a', replace: 'b' } },
      );
      assert.match(
        message,
        new RegExp(`^Tool ${name} does not have an implementation registered`),
        `${name}: ${message}`,
      );
    }
  });

  it('the session refuses a write itself too, whoever asks (defence in depth behind the registration)', async () => {
    const api = await testApi();
    await assert.rejects(
      invokeTool(api.host.session, TOOLS.stage_file, { path: 'src/main.js' }, { origin: 'api' }),
      (e: unknown) =>
        e instanceof Error && /not trusted/.test(e.message) && (e as { code?: string }).code === 'E_SANDBOX_REFUSED',
    );
    assert.equal(api.host.session.media.heads().length, 0);
  });

  it('every read asks in a modal dialog, even outside a chat turn', async () => {
    const api = await testApi();
    assert.ok(api.decider, 'the test decider is active');
    const asked = api.decider.asked.length;
    assert.match(await invoke('list_directory', { path: 'src', max_depth: 1 }), /^src: \d+ entries/);
    assert.equal(api.decider.asked.length, asked + 1, 'list_directory did not ask');
    const last = api.decider.asked.at(-1)!;
    assert.equal(last.tool, 'list_directory');
    assert.equal(last.secret, false);
    assert.equal(api.host.log.entries.at(-1)?.decidedBy, 'person');

    api.decider.answer = 'decline';
    try {
      assert.match(
        await invokeFailing('open_file', { path: 'README.md' }),
        /^E_SANDBOX_REFUSED: The user declined open_file/,
      );
    } finally {
      api.decider.answer = 'allow-once';
    }
  });

  it('the manifest keeps the write tools out of chat until the workspace is trusted (when: isWorkspaceTrusted)', async () => {
    const { packageJSON } = vscode.extensions.getExtension('workspace-tools.workspace-tools')!;
    const tools = packageJSON.contributes.languageModelTools as { name: string; when?: string }[];
    for (const name of WRITE_TOOLS) assert.equal(tools.find((t) => t.name === name)?.when, 'isWorkspaceTrusted', name);
    assert.equal(packageJSON.capabilities.untrustedWorkspaces.supported, 'limited');
  });
});
