import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedByRules, askedEveryTime, type GateCall, type GateTarget } from '../../src/core/gate.ts';
import { cliGate } from '../../src/cli/gate.ts';
import { mcpGate, type Elicitor } from '../../src/mcp/gate.ts';
import { describeCall } from '../../src/vscode/questions.ts';

const secret: GateTarget = {
  display: '.env',
  action: 'ask',
  rule: '**/.env*',
  source: 'secret',
  reason: 'environment files hold credentials',
};
const linked: GateTarget = { display: 'notes.txt', action: 'default', links: 2 };
const base: GateCall = {
  tool: 'run_shell_command',
  origin: 'headless',
  risk: 'exec',
  summary: 'run `make`',
  targets: [],
  secret: true,
};
const signal = new AbortController().signal;
const noElicitation: Elicitor = { canElicit: () => false, elicit: () => Promise.reject(new Error('not asked')) };

test('why a person is asked is decided in one order: tainted bytes, protected writes, several names, an ask rule', () => {
  const all: GateCall = {
    ...base,
    targets: [secret, linked],
    taint: { from: 'vault/key', rule: 'vault/**' },
    protectedWrites: ['package.json'],
  };
  assert.equal(askedEveryTime(all)?.kind, 'taint');
  const { taint: _taint, ...untainted } = all;
  assert.equal(askedEveryTime(untainted)?.kind, 'protected-writes');
  const { protectedWrites: _writes, ...plain } = untainted;
  assert.deepEqual(askedEveryTime(plain), { kind: 'links', target: linked, links: 2 });
  assert.deepEqual(askedEveryTime({ ...plain, targets: [secret] }), { kind: 'rule', target: secret });
  assert.equal(
    askedEveryTime({ ...plain, targets: [{ display: 'a.txt', action: 'default' }], secret: false }),
    undefined,
  );
});

test('the CLI, the MCP server and VS Code give the same reason for a command that lifts protected writes in a folder with a file of several names', async () => {
  const call: GateCall = { ...base, targets: [linked], protectedWrites: ['package.json'] };
  const cli = await cliGate({ gate: 'approve', allowSecrets: false })(call, signal);
  assert.match(
    cli.reason?.what ?? '',
    /^run_shell_command with allow_protected_writes was refused: it would let the command write protected files \(package\.json\)/,
  );
  const mcp = await mcpGate('elicit', false, noElicitation)(call, signal);
  assert.match(
    mcp.reason?.what ?? '',
    /was refused: allow_protected_writes lets the command write protected files \(package\.json\), so the person must confirm it/,
  );
  assert.equal(
    describeCall(call).message,
    'Allow run_shell_command to run a command that may WRITE PROTECTED FILES in "notes.txt"?',
  );
});

test('attack: an allow rule on the folder approves running a command there without asking (MCP server); it approves reading, never running', async () => {
  const call: GateCall = {
    ...base,
    secret: false,
    targets: [{ display: 'src', action: 'allow', rule: 'src/**', source: 'user' }],
  };
  assert.equal(allowedByRules(call), false);
  assert.equal(allowedByRules({ ...call, tool: 'list_directory', risk: 'read' }), true);
  const verdict = await mcpGate('elicit', false, noElicitation)(call, signal);
  assert.equal(verdict.allow, false);
  assert.match(
    verdict.reason?.what ?? '',
    /run_shell_command on "src" was refused: no rule allows it, so the person must confirm it/,
  );
});
