import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { invoke, invokeFailing, testApi } from './api.ts';

interface ManifestTool {
  name: string;
  inputSchema: object;
}

function callIdOf(text: string): string {
  const id = /artifact (art-[0-9a-f]+-\d+)/.exec(text)?.[1];
  assert.ok(id, `no callId in ${text}`);
  return id;
}

describe('tools through vscode.lm.invokeTool', () => {
  // The manifest is generated from the registry (npm run manifest; manifest.test.ts checks it), so its list is every tool.
  it('vscode.lm.tools lists every tool of the manifest with its schema, and the host registers each', async () => {
    const api = await testApi();
    const manifest = vscode.extensions.getExtension('workspace-tools.workspace-tools')!.packageJSON as {
      contributes: { languageModelTools: ManifestTool[] };
    };
    const declared = manifest.contributes.languageModelTools.map((t) => t.name);
    for (const declared of manifest.contributes.languageModelTools) {
      const tool = vscode.lm.tools.find((t) => t.name === declared.name);
      assert.ok(tool, `${declared.name} is not in vscode.lm.tools`);
      assert.deepEqual(tool.inputSchema, declared.inputSchema, declared.name);
    }
    assert.deepEqual(
      [...api.host.tools.names].sort(),
      [...declared].sort(),
      'registered in a trusted local workspace: every tool of the manifest',
    );
  });

  it('open_file, artifact_read and artifact_grep page and search a snapshot', async () => {
    const opened = await invoke('open_file', { path: 'src/greet.js' });
    assert.match(opened, /^artifact art-[0-9a-f]+-\d+: src\/greet\.js, 3 lines, 60 bytes, utf8, lf/);
    assert.doesNotMatch(opened, /Hello/, 'open_file returns no content');
    const callId = callIdOf(opened);
    assert.equal(
      await invoke('artifact_read', { callId, limit: 2 }),
      'src/greet.js lines 1-2 of 3:\n1\texport function greet(name) {\n2\t  return `Hello, ${name}!`;\n(more: artifact_read offset 3)',
    );
    assert.equal(
      await invoke('artifact_grep', { callId, pattern: 'Hello' }),
      '1 matching line for /Hello/ in src/greet.js:\n2:\t  return `Hello, ${name}!`;',
    );
    assert.match(
      await invokeFailing('artifact_read', { callId, offset: 99 }),
      /^E_SANDBOX_INVALID_INPUT: .*offset 99 is past the end.*3 lines/,
    );
  });

  it('open_json_file gives the shape and artifact_query a JSON Pointer', async () => {
    const opened = await invoke('open_json_file', { path: 'data/config.json' });
    assert.match(opened, /JSON object \(6 keys\), lines 1-15:\n {2}"name": string \(7 chars\) @L2/);
    assert.equal(
      await invoke('artifact_query', { callId: callIdOf(opened), select: '/server/port' }),
      '/server/port in data/config.json (line 8), number:\n8080',
    );
  });

  it('open_markdown_file gives the outline and artifact_query a section', async () => {
    const opened = await invoke('open_markdown_file', { path: 'docs/notes.md' });
    assert.match(
      opened,
      /Outline \(3 headings; line ranges are whole sections\):\n# Notes {2}1-10\n {2}## Todo {2}3-7\n {2}## Done {2}8-10/,
    );
    assert.match(
      await invoke('artifact_query', { callId: callIdOf(opened), select: 'Notes/Todo' }),
      /write more tests/,
    );
  });

  it('list_directory lists the fixture with types and sizes', async () => {
    const listing = await invoke('list_directory', { path: 'src', max_depth: 1 });
    assert.match(listing, /^src: 3 entries\nlib\/\ngreet\.js {2}60 B\nmain\.js {2}\d+ B$/);
  });

  it("list_directory of a big folder reads it on the listing's worker thread, from the packaged bundle, as on the extension host's own", async () => {
    const api = await testApi();
    const root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const big = nodePath.join(root, 'big-listing');
    for (let d = 0; d < 20; d++) {
      mkdirSync(nodePath.join(big, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(nodePath.join(big, `d${d}`, `f${f}.txt`), 'x'.repeat(f));
    }
    try {
      const folders = (api.host.session.fs as { folders?: { readonly onWorker: boolean } }).folders;
      assert.ok(folders, 'the local workspace is read through NodeFs');
      const first = await invoke('list_directory', { path: 'big-listing' });
      assert.match(
        first,
        /^big-listing: 2020 entries\nd0\/\n {2}f0\.txt {2}0 B\n {2}f1\.txt {2}1 B\n {2}f10\.txt {2}10 B\n/,
      );
      // The first listing (2,020 entries) starts the worker if it is not up; wait on that state, a listing at a time.
      for (let i = 0; i < 100 && !folders.onWorker; i++)
        await invoke('list_directory', { path: 'big-listing', max_depth: 1 });
      assert.ok(folders.onWorker, 'the worker came up');
      assert.equal(await invoke('list_directory', { path: 'big-listing' }), first);
      assert.deepEqual(
        api.host.log.warnings.filter((w) => /worker/i.test(w)),
        [],
      );
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  });

  it('search_files and find_files run ripgrep and never surface the .env canary', async () => {
    assert.equal(await invoke('search_files', { pattern: 'Hello' }), 'src/greet.js\n  2:   return `Hello, ${name}!`;');
    const found = await invoke('find_files', { glob: '**/*.js' });
    assert.equal(
      found
        .split('\n')
        .filter((l) => l.endsWith('.js'))
        .sort()
        .join('\n'),
      'src/greet.js\nsrc/lib/math.js\nsrc/main.js',
    );
    for (const input of [
      { pattern: 'WT_CANARY_ENV_[0-9a-f]+', hidden: true, no_ignore: true },
      { pattern: 'API_TOKEN=', hidden: true, literal: true },
      { pattern: 'canary', ignore_case: true, hidden: true },
    ]) {
      const text = await invoke('search_files', input);
      assert.doesNotMatch(text, /7f3a|^\.env/m);
    }
    assert.doesNotMatch(await invoke('find_files', { glob: '**/*', hidden: true, no_ignore: true }), /^\.env/m);
  });

  it('unknown arguments are rejected by name', async () => {
    assert.match(
      await invokeFailing('find_files', { glob: '*', ignore_case: true }),
      /^E_SANDBOX_INVALID_INPUT: find_files: Unknown argument "ignore_case"/,
    );
  });
});
