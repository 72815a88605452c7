// Issue 28 in the real workbench: a test-only extension (the scripted model's) defines our MCP
// server through VS Code's MCP server definition provider API; the scripted model calls its tools
// in agent mode; open_file on .env makes the server ask through VS Code's elicitation form, the
// person declines, and the canary never reaches the model.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cacheDir, repoRoot } from '../host/ensure.mjs';
import * as d from './driver.mjs';

const CANARY = 'WT_CANARY_ENV_7f3a';
const STEP_TIMEOUT = 90_000;

test(
  "MCP in agent mode: our server defined by an extension; open_file on .env asks through VS Code's elicitation form; declined, the canary never reaches the model",
  { timeout: 480_000 },
  async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'wt-mcp-e2e-'));
    const modelLog = join(tmp, 'model.jsonl');
    const receivedLog = join(tmp, 'received.jsonl');
    const events = () => d.readModelLog(modelLog);
    const script = {
      prompt: 'Read .env over MCP.',
      steps: [
        { tool: 'mcp:list_roots', input: {} },
        { tool: 'mcp:open_file', input: { path: '.env' } },
      ],
    };
    let shot = 0;
    let wb;
    const screenshot = (what) => wb.screenshot(`mcp-${String(shot++).padStart(2, '0')}-${what}`);
    try {
      wb = await d.openWorkbench({
        workspace: d.fixtureWorkspace,
        extensionDevelopmentPath: d.scriptedModelPath,
        name: 'mcp',
        extensionEnv: {
          WT_SCRIPTED_MODEL_SCRIPT: JSON.stringify(script),
          WT_SCRIPTED_MODEL_LOG: modelLog,
          WT_SCRIPTED_MODEL_RECEIVED: receivedLog,
          WT_MCP_SERVER: JSON.stringify({
            command: process.execPath,
            args: [join(repoRoot, 'dist/cli.js'), 'mcp', '--gate', 'approve'],
          }),
        },
      });
      const { page } = wb;
      await d.whenWorkbenchRestored(page);
      await d.runCommand(page, 'Manage Language Models');
      await d.waitFor(() => events().some((e) => e.event === 'ready'), 'Copilot Chat to activate', STEP_TIMEOUT);
      await d.closeModalEditor(page, 'Scripted Model');
      await d.selectModel(page, 'Scripted Model');
      await screenshot('model-selected');
      await d.sendPrompt(page, script.prompt);

      // Step 0: a read-only tool; VS Code runs it with no confirmation of its own (readOnlyHint).
      const offered = (
        await d.waitFor(
          () => events().find((e) => e.event === 'request' && e.tools?.length),
          'the first agent request',
          STEP_TIMEOUT,
        )
      ).tools;
      assert.ok(
        offered.some((n) => /^mcp_.*_open_file$/.test(n)),
        `the agent offers our MCP tools; offered: ${offered.join(' ')}`,
      );
      const roots = await d.waitFor(
        () => events().find((e) => e.event === 'request' && e.results?.length >= 1),
        "list_roots's result",
        STEP_TIMEOUT,
      );
      assert.equal(roots.results[0].text, `workspace\t${wb.workspaceDir}`);

      // Step 1: open_file on .env. VS Code asks no confirmation for a read-only tool either: our
      // server's elicitation is what asks, in the chat's form, with "refuse" chosen by default.
      // The form: the innermost element holding both the question and its Submit button.
      const form = page
        .locator('div')
        .filter({ hasText: 'Workspace Tools: allow open_file?' })
        .filter({ has: page.getByRole('button', { name: 'Submit' }) })
        .last();
      await form.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
      const submit = form.getByRole('button', { name: 'Submit' });
      const question = await form.innerText();
      assert.match(question, /Asked because "\.env" matches the secret rule/);
      assert.match(question, /refuse/);
      assert.match(question, /allow once/);
      assert.equal(
        events().some((e) => e.event === 'request' && e.results?.length >= 2),
        false,
        'the model got a result while the person was being asked',
      );
      await screenshot('elicitation');
      // The person submits the form as it comes: the default refuses.
      await submit.click();
      const refused = await d.waitFor(
        () => events().find((e) => e.event === 'request' && e.results?.length >= 2),
        "open_file's result",
        STEP_TIMEOUT,
      );
      assert.match(
        refused.results[1].text,
        /E_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env"/,
      );
      await d.waitFor(() => events().find((e) => e.event === 'final'), "the model's final answer", STEP_TIMEOUT);
      await screenshot('final');
      // Nothing the model received, in any request, holds the canary.
      const received = readFileSync(receivedLog, 'utf8');
      assert.ok(received.length > 0);
      assert.equal(received.includes(CANARY), false, 'the canary reached the model');
    } catch (err) {
      if (wb?.page) await screenshot('failure').catch(() => {});
      throw err;
    } finally {
      await wb?.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);

// Issue 44 item 5: the MCP Inspector's CLI (the way its README shows it) announces an empty roots
// list; the server used to keep no folder, and every file call failed.
const INSPECTOR_VERSION = '2.12.0';

/** The Inspector's CLI launcher, installed from npm into the host cache on first use. */
function ensureInspector() {
  const dir = join(cacheDir(), `mcp-inspector-${INSPECTOR_VERSION}`);
  const launcher = join(dir, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
  if (!existsSync(launcher)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-package-lock', `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`],
      { cwd: dir, stdio: 'ignore', timeout: 300_000 },
    );
  }
  return launcher;
}

test(
  `issue 44 item 5: the MCP Inspector ${INSPECTOR_VERSION} CLI, with its default roots, finds and lists files under --root`,
  { timeout: 360_000 },
  () => {
    const launcher = ensureInspector();
    const ws = realpathSync(mkdtempSync(join(tmpdir(), 'wt-mcp-inspector-')));
    try {
      writeFileSync(join(ws, 'a.txt'), 'hello\n');
      const inspect = (...args) =>
        JSON.parse(
          execFileSync(
            process.execPath,
            [
              launcher,
              '--cli',
              process.execPath,
              join(repoRoot, 'dist/cli.js'),
              'mcp',
              '--root',
              ws,
              '--gate',
              'approve',
              '--method',
              'tools/call',
              ...args,
            ],
            { cwd: ws, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] },
          ),
        );
      assert.deepEqual(inspect('--tool-name', 'find_files', '--tool-arg', 'glob=*.txt').content, [
        { type: 'text', text: '1 file:\na.txt' },
      ]);
      assert.deepEqual(inspect('--tool-name', 'list_roots').content, [
        { type: 'text', text: `${ws.split('/').pop()}\t${ws}` },
      ]);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  },
);
