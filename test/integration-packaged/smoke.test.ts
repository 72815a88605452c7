// Runs with Workspace Tools installed from its platform .vsix by VS Code's own installer, as a
// person gets it (a production extension: no test API, no test decider), while the suite runs in
// a stand-in development extension (runner/). Every tool of the installed manifest is called once
// through vscode.lm.invokeTool, in a trusted workspace where VS Code's confirmation is the gate.
// Built and run by `node test/run-integration.mjs packaged`.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { EXTENSION_ID, invoke, readText, waitFor, workspaceUri } from '../integration/api.ts';

interface Manifest {
  contributes: { languageModelTools: { name: string }[] };
}

const target =
  process.env.WT_PACKAGE_TARGET ??
  assert.fail('WT_PACKAGE_TARGET is not set: run this suite with node test/run-integration.mjs packaged');

function installed(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed`);
  return ext;
}

const manifestTools = (): string[] =>
  (installed().packageJSON as Manifest).contributes.languageModelTools.map((t) => t.name).sort();

function match(text: string, re: RegExp, what: string): string {
  const found = re.exec(text)?.[1];
  assert.ok(found, `no ${what} in: ${text}`);
  return found;
}
const callIdOf = (text: string): string => match(text, /^artifact (art-[0-9a-f]+-\d+)/, 'artifact callId');
const mediaIdOf = (text: string): string => match(text, /"media_id":"([^"]+)"/, 'media_id');

/** What the steps hand each other. */
const state: { callId?: string; jsonId?: string; mediaId?: string; patchedId?: string; original?: string } = {};

/** One call of each tool, in an order where each finds what it needs. */
const SMOKE: { tool: string; run: () => Promise<void> }[] = [
  {
    tool: 'list_directory',
    run: async () =>
      assert.match(
        await invoke('list_directory', { path: 'src', max_depth: 1 }),
        /^src: 3 entries\nlib\/\ngreet\.js {2}60 B\nmain\.js/,
      ),
  },
  {
    tool: 'find_files',
    run: async () => assert.match(await invoke('find_files', { glob: '**/greet.js' }), /^src\/greet\.js$/m),
  },
  {
    tool: 'search_files',
    run: async () =>
      assert.equal(
        await invoke('search_files', { pattern: 'Hello' }),
        'src/greet.js\n  2:   return `Hello, ${name}!`;',
      ),
  },
  {
    tool: 'open_file',
    run: async () => {
      state.callId = callIdOf(await invoke('open_file', { path: 'src/greet.js' }));
    },
  },
  {
    tool: 'artifact_read',
    run: async () =>
      assert.match(
        await invoke('artifact_read', { callId: state.callId, limit: 1 }),
        /^src\/greet\.js lines 1-1 of 3:\n1\texport function greet\(name\) \{/,
      ),
  },
  // ripgrep: the package carries none, so this runs the rg VS Code ships.
  {
    tool: 'artifact_grep',
    run: async () =>
      assert.equal(
        await invoke('artifact_grep', { callId: state.callId, pattern: 'Hello' }),
        '1 matching line for /Hello/ in src/greet.js:\n2:\t  return `Hello, ${name}!`;',
      ),
  },
  {
    tool: 'open_json_file',
    run: async () => {
      state.jsonId = callIdOf(await invoke('open_json_file', { path: 'data/config.json' }));
    },
  },
  {
    tool: 'artifact_query',
    run: async () =>
      assert.equal(
        await invoke('artifact_query', { callId: state.jsonId, select: '/server/port' }),
        '/server/port in data/config.json (line 8), number:\n8080',
      ),
  },
  {
    tool: 'open_markdown_file',
    run: async () => assert.match(await invoke('open_markdown_file', { path: 'docs/notes.md' }), /# Notes {2}1-10/),
  },
  {
    tool: 'stage_file',
    run: async () => {
      state.original = await readText(workspaceUri('src', 'greet.js'));
      state.mediaId = mediaIdOf(await invoke('stage_file', { path: 'src/greet.js' }));
    },
  },
  {
    tool: 'media_apply_patch',
    run: async () => {
      state.patchedId = mediaIdOf(
        await invoke('media_apply_patch', { media_id: state.mediaId, patch: { find: 'Hello', replace: 'Howdy' } }),
      );
    },
  },
  { tool: 'list_media', run: async () => assert.match(await invoke('list_media', {}), /src\/greet\.js/) },
  // The sandbox library comes from the platform package's node_modules (bubblewrap and socat from the machine).
  {
    tool: 'run_shell_command',
    run: async () =>
      assert.match(
        await invoke('run_shell_command', { command: 'echo from-the-packaged-sandbox' }),
        /from-the-packaged-sandbox/,
      ),
  },
  // The language services of the installed VS Code answer; greet.js has no error.
  {
    tool: 'list_problems',
    run: async () =>
      assert.match(
        await invoke('list_problems', { paths: ['src/greet.js'] }),
        /^No problems reported in src\/greet\.js/,
      ),
  },
  // The language services of the installed VS Code answer for the projects of the files open in editors.
  {
    tool: 'find_symbols',
    run: async () => {
      await vscode.window.showTextDocument(workspaceUri('src', 'greet.js'), { preview: true });
      let last = '';
      await waitFor(
        'greet in find_symbols',
        async () =>
          /\nsrc\/greet\.js\n {2}function greet {2}1-3/.test((last = await invoke('find_symbols', { query: 'greet' }))),
        20_000,
      ).catch((e: unknown) => {
        throw new Error(`${String(e)}; the last answer: ${last}`);
      });
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    },
  },
  {
    tool: 'save_media',
    run: async () => {
      assert.match(
        await invoke('save_media', { media_id: state.patchedId }),
        /"path":"src\/greet\.js","added":1,"removed":1/,
      );
      assert.equal(await readText(workspaceUri('src', 'greet.js')), state.original!.replace('Hello', 'Howdy'));
    },
  },
  {
    tool: 'undo_save',
    run: async () => {
      await invoke('undo_save', {});
      assert.equal(await readText(workspaceUri('src', 'greet.js')), state.original);
    },
  },
];

describe(`Workspace Tools installed from its ${target} .vsix`, () => {
  it("was installed by VS Code's installer from the package for this platform, not loaded from a source folder", async () => {
    const ext = installed();
    // The installer keeps the package's manifest beside the files it extracted.
    const vsixManifest = nodePath.join(ext.extensionPath, '.vsixmanifest');
    assert.ok(
      existsSync(vsixManifest),
      `${ext.extensionPath} holds no .vsixmanifest: the extension was not installed from a .vsix`,
    );
    assert.match(readFileSync(vsixManifest, 'utf8'), new RegExp(`TargetPlatform="${target}"`));
    for (const sourceOnly of ['src', 'test', 'scripts', 'tsconfig.json'])
      assert.equal(
        existsSync(nodePath.join(ext.extensionPath, sourceOnly)),
        false,
        `${sourceOnly} is in the installed extension`,
      );
    // An installed extension runs in production mode: it exports no test API.
    assert.equal(await ext.activate(), undefined);
  });

  it('registers every tool of its manifest', async () => {
    await waitFor('every tool in vscode.lm.tools', () =>
      manifestTools().every((name) => vscode.lm.tools.some((t) => t.name === name)),
    );
  });

  it('the smoke test below calls every tool of the manifest once', () => {
    assert.deepEqual(SMOKE.map((s) => s.tool).sort(), manifestTools());
  });

  for (const step of SMOKE) it(`${step.tool} runs`, step.run);
});
