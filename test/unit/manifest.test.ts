import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { agentToolReferences, languageModelToolEntries } from '../../src/core/pipeline/manifest.ts';
import { TOOL_NAMES } from '../../src/core/contract/names.ts';
import { TOOLS } from '../../src/core/tools/index.ts';

interface Manifest {
  name: string;
  publisher: string;
  displayName: string;
  main: string;
  engines: { vscode: string; node: string };
  bin: Record<string, string>;
  capabilities: {
    untrustedWorkspaces: { supported: string; description: string };
    virtualWorkspaces: { supported: string; description: string };
  };
  contributes: {
    languageModelTools: unknown[];
    chatAgents: { path: string }[];
    commands: { command: string; title: string }[];
  };
}
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as Manifest;

test('package.json languageModelTools equal the entries generated from the zod schemas', () => {
  assert.deepEqual(manifest.contributes.languageModelTools, JSON.parse(JSON.stringify(languageModelToolEntries())));
});

test('the manifest lists every tool of the registry, in the order of tools/names.ts', () => {
  assert.deepEqual(
    (manifest.contributes.languageModelTools as { name: string }[]).map((t) => t.name),
    [...TOOL_NAMES],
  );
  assert.deepEqual(Object.keys(TOOLS).sort(), [...TOOL_NAMES].sort());
  for (const name of TOOL_NAMES) assert.equal(TOOLS[name].name, name, `TOOLS.${name} is defined with another name`);
});

test('docs/tools.md has one row for every tool of the registry, in order, with its risk', () => {
  const rows = [...readFileSync('docs/tools.md', 'utf8').matchAll(/^\| `([a-z_]+)` \| (read|write|exec) \|/gm)].map(
    (m) => `${m[1]} ${m[2]}`,
  );
  assert.deepEqual(
    rows,
    TOOL_NAMES.map((name) => `${name} ${TOOLS[name].risk}`),
  );
});

test('every tool schema is a strict object (unknown arguments are rejected)', () => {
  for (const entry of languageModelToolEntries()) {
    assert.equal(entry.inputSchema['type'], 'object', entry.name);
    assert.equal(entry.inputSchema['additionalProperties'], false, entry.name);
    assert.equal(entry.canBeReferencedInPrompt, true);
    assert.match(entry.icon, /^\$\([a-z-]+\)$/);
  }
});

test('find_files has no ignore_case or literal; follow accepts only false with the bundled backend', () => {
  const find = languageModelToolEntries().find((e) => e.name === 'find_files')!;
  const props = find.inputSchema['properties'] as Record<string, { const?: unknown; type?: string }>;
  assert.equal('ignore_case' in props, false);
  assert.equal('literal' in props, false);
  assert.equal(props['follow']?.const, false);
});

test('the descriptions of stage_file and save_media lead with the unsaved-mutation trap', () => {
  assert.match(TOOLS.stage_file.description, /^The edit is in memory; nothing changes on disk until save_media/);
  assert.match(TOOLS.save_media.description, /^This is the step that makes an edit real/);
});

test('the manifest is a real extension manifest', () => {
  assert.equal(manifest.name, 'workspace-tools');
  assert.equal(manifest.publisher, 'workspace-tools');
  assert.equal(manifest.displayName, 'Workspace Tools');
  assert.equal(manifest.main, './dist/extension.js');
  assert.deepEqual(manifest.bin, { 'workspace-tools': './dist/cli.js' });
  assert.match(manifest.engines.vscode, /^\^1\.(\d+)\.\d+$/);
  assert.ok(Number(/^\^1\.(\d+)/.exec(manifest.engines.vscode)![1]) >= 100);
  assert.equal(manifest.engines.node, '>=22');
  assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
  assert.equal(manifest.capabilities.virtualWorkspaces.supported, 'limited');
  assert.ok(manifest.capabilities.untrustedWorkspaces.description.length > 20);
  assert.ok(manifest.capabilities.virtualWorkspaces.description.length > 20);
});

test('every write tool requires a writable workspace, so untrusted and read-only hosts refuse it', () => {
  for (const name of TOOL_NAMES) {
    if (TOOLS[name].risk === 'write') assert.ok(TOOLS[name].requires.includes('writable'), name);
  }
});

test('the contributed Workspace Tools agent offers every tool of ours and nothing else', () => {
  assert.deepEqual(manifest.contributes.chatAgents, [{ path: './agents/workspace-tools.agent.md' }]);
  const text = readFileSync(manifest.contributes.chatAgents[0]!.path, 'utf8');
  const front = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1] ?? assert.fail('the agent file has no front matter');
  assert.match(front, /^name: Workspace Tools$/m);
  assert.match(front, /^description: .{20,}$/m);
  const tools = JSON.parse(/^tools: (.*)$/m.exec(front)?.[1] ?? '[]') as string[];
  assert.deepEqual(tools, agentToolReferences('workspace-tools.workspace-tools'));
  assert.equal(tools.length, TOOL_NAMES.length);
  assert.ok(
    tools.every((t) => t.startsWith('workspace-tools.workspace-tools/')),
    'only our own tools',
  );
  // The body teaches the workflow, and that a refusal is not retried.
  for (const word of [
    'find_files',
    'open_file',
    'artifact_read',
    'artifact_grep',
    'stage_file',
    'media_apply_patch',
    'save_media',
    'E_SANDBOX_REFUSED',
    'Do not retry',
  ]) {
    assert.ok(text.includes(word), word);
  }
});

test('Show Gate Status is in the palette', () => {
  assert.ok(
    manifest.contributes.commands.some(
      (c) => c.command === 'workspaceTools.showGateStatus' && c.title === 'Show Gate Status',
    ),
  );
});
