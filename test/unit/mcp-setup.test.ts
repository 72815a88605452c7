import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mcpClientSnippets, mcpSetupMarkdown } from '../../src/mcp/setup.ts';
import { MCP_USAGE } from '../../src/cli/mcp.ts';
import { toolAnnotations } from '../../src/mcp/annotations.ts';
import { TOOL_NAMES } from '../../src/core/contract/names.ts';

const setup = { node: 'node', cli: '/opt/ext/dist/cli.js', roots: ['/home/me/my project', "/home/me/it's"] };
const args = (gate: string): string[] => [
  '/opt/ext/dist/cli.js',
  'mcp',
  '--root',
  '/home/me/my project',
  '--root',
  "/home/me/it's",
  '--gate',
  gate,
];

test('the MCP setup snippets run the server with every workspace folder as a --root, quoted right for each client', () => {
  const byClient = new Map(mcpClientSnippets(setup).map((s) => [s.client, s]));
  assert.deepEqual([...byClient.keys()], ['VS Code', 'Claude Code', 'Codex', 'Gemini CLI', 'Cursor']);
  assert.deepEqual(JSON.parse(byClient.get('VS Code')!.text), {
    servers: { 'workspace-tools': { type: 'stdio', command: 'node', args: args('elicit') } },
  });
  assert.deepEqual(JSON.parse(byClient.get('Cursor')!.text), {
    mcpServers: { 'workspace-tools': { command: 'node', args: args('approve') } },
  });
  // TOML basic strings take JSON's escapes for these characters.
  const toml = byClient.get('Codex')!.text.split('\n');
  assert.equal(toml[0], '[mcp_servers.workspace-tools]');
  assert.equal(toml[1], 'command = "node"');
  assert.deepEqual(JSON.parse(toml[2]!.replace(/^args = /, '')), args('approve'));
  // The shell line, run by bash with `claude` standing for a command that prints its arguments.
  const printed = execFileSync(
    'bash',
    ['-c', `claude() { printf '%s\\n' "$@"; }; ${byClient.get('Claude Code')!.text}`],
    { encoding: 'utf8' },
  );
  assert.deepEqual(printed.trimEnd().split('\n'), ['mcp', 'add', 'workspace-tools', '--', 'node', ...args('approve')]);
  const gemini = execFileSync(
    'bash',
    ['-c', `gemini() { printf '%s\\n' "$@"; }; ${byClient.get('Gemini CLI')!.text}`],
    { encoding: 'utf8' },
  );
  assert.deepEqual(gemini.trimEnd().split('\n'), ['mcp', 'add', 'workspace-tools', 'node', '--', ...args('approve')]);
});

test('the MCP setup document has a section and a fenced snippet per client', () => {
  const markdown = mcpSetupMarkdown(setup);
  assert.deepEqual(markdown.match(/^## .+$/gm), [
    '## VS Code',
    '## Claude Code',
    '## Codex',
    '## Gemini CLI',
    '## Cursor',
  ]);
  assert.equal(markdown.match(/^```(json|sh|toml)$/gm)?.length, 5);
});

test("issue 44 item 13: docs/mcp.md's MCP usage line is the server's own, and its hints name the tools that carry destructiveHint", () => {
  const doc = readFileSync('docs/mcp.md', 'utf8');
  const usage = MCP_USAGE.split('\n')[0]!.replace(/^Usage: workspace-tools /, 'node dist/cli.js ');
  assert.ok(doc.includes(`\n${usage}\n`), `docs/mcp.md shows ${usage}`);
  const hints =
    /`destructiveHint` only on ((?:`\w+`(?:, | and )?)+)/.exec(doc.replace(/\n\s*/g, ' '))?.[1] ??
    assert.fail('no destructiveHint sentence');
  assert.deepEqual(
    [...hints.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort(),
    TOOL_NAMES.filter((name) => toolAnnotations(name).destructiveHint).sort(),
  );
});
