// The sandbox's demo (`npm run sandbox -- --demo`): the test-only scripted model
// (test/e2e/scripted-model, copied into the sandbox's profile only, never into the .vsix) sends a
// prompt in agent mode and then walks the real flow through the real chat: it searches the
// workspace, opens the file it found as an artifact and reads it, stages it, patches the staged
// copy (the staged diff opens), and asks to save. Every call waits for the person's click on VS
// Code's own confirmation; nothing is written until they allow the save.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../test/host/ensure.mjs';
import { duration } from '../test/host/progress.mjs';
import { CHAT, REVIEW, WORKBENCH } from '../test/host/selectors.mjs';
import * as d from '../test/e2e/driver.mjs';

const MEDIA_ID = '"media_id":"([^"]+)"';
const FILE = 'src/format.js';
/** The staged diff's tab: its sides in the order it shows them, and the media version (src/vscode/staged/review.ts). */
const DIFF_TAB = /^format\.js \(disk ↔ staged m\d+\)$/;

/** The conversation, as data for the scripted model (see test/e2e/scripted-model/extension.cjs). */
export const DEMO_SCRIPT = {
  prompt: 'Resolve the TODO about Intl.NumberFormat in the price formatting.',
  // Before the prompt: the Workspace Tools view (Staged Changes) in the side bar.
  commands: ['workbench.view.extension.workspaceTools'],
  steps: [
    { tool: 'search_files', input: { pattern: 'TODO' } },
    { tool: 'open_file', input: { path: '{{step 0 /(\\S*format\\.js)/}}' } },
    { tool: 'artifact_read', input: { callId: '{{step 1 /^artifact (\\S+):/}}' } },
    { tool: 'stage_file', input: { path: FILE } },
    {
      tool: 'media_apply_patch',
      input: {
        media_id: `{{step 3 /${MEDIA_ID}/}}`,
        patch: [
          { find: 'as dollars, e.g. 1999', replace: 'in a currency, e.g. 1999' },
          {
            find: 'export function formatPrice(cents) {\n  // TODO: use Intl.NumberFormat and the configured currency\n  return `$${(cents / 100).toFixed(2)}`;',
            replace:
              "export function formatPrice(cents, currency = 'USD') {\n  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);",
          },
        ],
      },
    },
    { tool: 'save_media', input: { media_id: `{{step 4 /${MEDIA_ID}/}}` } },
  ],
  final: 'formatPrice now uses Intl.NumberFormat with a currency argument.\n\n{{step 5}}',
};

/**
 * What the sandbox's code-server needs for the demo: the scripted model's folder (copied into the
 * profile's extensions) and its environment: the script, a log of its events (the walk below
 * reads it), the extension it waits for, and the switch that makes it send the prompt itself.
 */
export function demoSetup(tmp, extensionId) {
  const scriptFile = join(tmp, 'demo-script.json');
  const logFile = join(tmp, 'demo-model.jsonl');
  writeFileSync(scriptFile, JSON.stringify(DEMO_SCRIPT, null, 2));
  return {
    extensions: [join(repoRoot, 'test/e2e/scripted-model')],
    env: {
      WT_SCRIPTED_MODEL_SCRIPT_FILE: scriptFile,
      WT_SCRIPTED_MODEL_LOG: logFile,
      WT_SCRIPTED_MODEL_AWAIT: extensionId,
      WT_SCRIPTED_MODEL_SEND_PROMPT: '1',
    },
    events: () => d.readModelLog(logFile),
  };
}

/**
 * Walks the demo in a page like a person who allows each call once, up to the save: returns when
 * the save's confirmation is waiting with the staged diff open beside it (then the screenshot).
 */
export async function walkDemoToSave(page, events, log, timeout = 180_000) {
  const saveStep = DEMO_SCRIPT.steps.findIndex((s) => s.tool === 'save_media');
  const started = Date.now();
  const since = () => duration(Date.now() - started);
  const failed = () => events().find((e) => e.event === 'error');
  for (const [index, { tool }] of DEMO_SCRIPT.steps.entries()) {
    await d.waitFor(
      () => {
        const err = failed();
        if (err) throw new Error(`the demo model could not start the conversation: ${err.what} failed: ${err.message}`);
        return events().some((e) => e.event === 'tool-call' && e.step === index);
      },
      `the demo model to call ${tool} (step ${index + 1} of ${DEMO_SCRIPT.steps.length})`,
      timeout,
    );
    const pending = await d.pendingToolConfirmation(page, timeout);
    if (index === saveStep) {
      if (!pending.text.includes(FILE))
        throw new Error(`the save's confirmation does not name ${FILE}; it reads: ${pending.text}`);
      await d.waitFor(
        async () => (await d.editorTabLabels(page)).some((l) => DIFF_TAB.test(l)),
        'the staged diff of format.js (disk ↔ staged mN) to open',
        timeout,
      );
      await page.locator(REVIEW.diffEditor).first().waitFor({ state: 'visible', timeout });
      await d.waitFor(
        async () => (await d.diffEditorText(page)).modified.includes('Intl.NumberFormat'),
        'the staged diff to show the patched line',
        timeout,
      );
      log(
        `step ${index + 1}: ${tool} asks (${since()} after the page opened) and waits for the person; the staged diff is open`,
      );
      return;
    }
    log(`step ${index + 1}: ${tool} asks (${since()} after the page opened); allowing it once`);
    await d.answerToolConfirmation(page, 'allowOnce', { timeout });
  }
  throw new Error('the demo script has no save_media step');
}

/**
 * For the picture: the chat wide enough to read the conversation (its side bar's edge dragged
 * left), and the chat's docked notice (a hint to configure more models) dismissed.
 */
export async function arrangeDemoPicture(page) {
  const notice = page.locator(CHAT.inputNoticeDismiss);
  if (await notice.count()) {
    await notice.first().click();
    await notice
      .first()
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(() => {});
  }
  const chat = page.locator(WORKBENCH.auxiliaryBar);
  const before = await chat.boundingBox();
  if (before) {
    // The sash between the editor and the chat lies on the chat's left edge.
    await page.mouse.move(before.x - 1, before.y + before.height / 2);
    await page.mouse.down();
    await page.mouse.move(before.x - 260, before.y + before.height / 2, { steps: 8 });
    await page.mouse.up();
    await d.waitFor(
      async () => ((await chat.boundingBox())?.width ?? 0) > before.width + 100,
      'the chat to widen',
      10_000,
    );
  }
}

/** The demo's file as it is on disk in the sandbox workspace (unchanged until the save is allowed). */
export const demoFileOnDisk = (workspace) => readFileSync(join(workspace, FILE), 'utf8');
