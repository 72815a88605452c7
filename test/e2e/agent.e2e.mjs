// Agent mode end to end: Copilot Chat's agent (built into VS Code 1.139) driven by a scripted
// model (test/e2e/scripted-model, installed into the test profile only) that calls our tools;
// the test clicks the in-chat tool confirmations like a person and checks what the model got
// back and what is on disk. Screenshots of every step go to test-results/.
//
// The script is data: each step names a tool and its input (see scripted-model/extension.cjs for
// `{{step N /regex/}}` references to earlier results), plus what the person does with the
// confirmation (`confirm`: "skip", "allowOnce" or "none" when none is expected) and a regex the
// tool's result must match (`expect`). Set WT_AGENT_SCRIPT_FILE to run another script.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CHAT } from '../host/selectors.mjs';
import * as d from './driver.mjs';

const DEFAULT_SCRIPT = {
  prompt: 'What is in the root of this workspace?',
  steps: [
    // Skipped: the model must get a refusal, and nothing may change on disk.
    { tool: 'list_directory', input: { path: '.' }, confirm: 'skip', expect: 'skip' },
    { tool: 'list_directory', input: { path: '.' }, confirm: 'allowOnce', expect: 'README\\.md' },
  ],
};

const script = process.env.WT_AGENT_SCRIPT_FILE
  ? JSON.parse(readFileSync(process.env.WT_AGENT_SCRIPT_FILE, 'utf8'))
  : DEFAULT_SCRIPT;

/** path → sha256 of every file under dir, to tell whether the disk changed. */
function snapshot(dir) {
  const out = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = join(e.parentPath, e.name);
    out[relative(dir, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return out;
}

describe('agent mode with the scripted model', () => {
  let wb;
  let tmp;
  let modelLog;
  const events = () => d.readModelLog(modelLog);

  const manifest = d.manifest();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'wt-agent-e2e-'));
    modelLog = join(tmp, 'model.jsonl');
    wb = await d.openWorkbench({
      workspace: d.fixtureWorkspace,
      extensionDevelopmentPath: d.extensionPath,
      extraExtensions: [d.scriptedModelPath],
      extensionEnv: {
        WT_SCRIPTED_MODEL_SCRIPT: JSON.stringify(script),
        WT_SCRIPTED_MODEL_LOG: modelLog,
        // Our tools have no implementation until the extension under test has activated.
        WT_SCRIPTED_MODEL_AWAIT: `${manifest.publisher}.${manifest.name}`,
      },
    });
    await d.whenWorkbenchRestored(wb.page);
  });
  after(async () => {
    await wb?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('the scripted model calls the tools, Skip refuses and Allow Once runs', { timeout: 180_000 }, async (t) => {
    const { page } = wb;
    t.after(async () => {
      if (!t.passed) await wb.screenshot('agent-failure').catch(() => {});
    });
    // On a fresh profile the built-in Copilot Chat waits for "chat setup"; opening the language
    // model manager once enables it and lists the scripted model.
    await d.runCommand(page, 'Manage Language Models');
    await d.waitFor(() => events().some((e) => e.event === 'ready'), 'Copilot Chat and the extension under test to activate', 60_000);
    await page.keyboard.press('Escape');
    await d.selectModel(page, 'Scripted Model');
    await wb.screenshot('agent-0-model-selected');

    await d.sendPrompt(page, script.prompt ?? 'Go.');
    for (const [i, step] of script.steps.entries()) {
      const name = `agent-${i + 1}-${step.tool}`;
      const confirm = step.confirm ?? 'none';
      await d.waitFor(() => events().some((e) => e.event === 'tool-call' && e.step === i), `the model to call step ${i} (${step.tool})`, 60_000);
      const diskBefore = snapshot(wb.workspaceDir);
      if (confirm !== 'none') {
        // Either the confirmation shows, or the call already failed (e.g. the tool is not registered).
        const early = await d.waitFor(async () => {
          if (await page.locator(CHAT.toolConfirmation).count()) return 'confirmation';
          return events().find((e) => e.event === 'request' && e.results?.length > i);
        }, `a confirmation for step ${i} (${step.tool})`, 60_000);
        if (early !== 'confirmation') assert.fail(`step ${i} (${step.tool}) showed no confirmation; the model got: ${early.results[i].text}`);
        const text = await d.waitForToolConfirmation(page);
        await wb.screenshot(`${name}-confirm`);
        assert.match(text, /Allow|Skip/, `step ${i}: confirmation shows its buttons`);
        if (confirm === 'skip') await d.skipTool(page);
        else if (confirm === 'allowOnce') await d.allowOnce(page);
        else throw new Error(`step ${i}: unknown confirm ${JSON.stringify(confirm)}`);
      }
      // The model's next request carries this step's result.
      const withResult = await d.waitFor(
        () => events().find((e) => e.event === 'request' && e.results?.length > i),
        `step ${i}'s result to reach the model`, 60_000);
      const result = withResult.results[i].text;
      if (step.expect) assert.match(result, new RegExp(step.expect, 'i'), `step ${i} (${step.tool}) result`);
      if (confirm === 'skip') assert.deepEqual(snapshot(wb.workspaceDir), diskBefore, `step ${i}: Skip changed the disk`);
      await wb.screenshot(`${name}-done`);
    }

    const final = await d.waitFor(() => events().find((e) => e.event === 'final'), 'the model\'s final answer', 60_000);
    const response = page.locator(CHAT.response).last();
    await d.waitFor(async () => (await response.textContent())?.includes(final.text.split('\n')[0]), 'the final answer on screen', 30_000);
    await wb.screenshot(`agent-${script.steps.length + 1}-final`);
  });
});
