// What a person does in the workbench, as functions over a playwright page: the command palette,
// the chat view and its tool confirmations. Selectors come from test/host/selectors.mjs only.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../host/ensure.mjs';
import { CHAT, CHAT_LABELS, PALETTE } from '../host/selectors.mjs';

export { openWorkbench, whenWorkbenchRestored } from '../host/run-suite.mjs';

/** The extension under test: $WT_EXTENSION_PATH or this repo (which needs a built dist/). */
export const extensionPath = process.env.WT_EXTENSION_PATH || repoRoot;
export const fixtureWorkspace = join(repoRoot, 'test/fixtures/workspace');
export const scriptedModelPath = join(repoRoot, 'test/e2e/scripted-model');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The manifest of the extension under test. */
export function manifest() {
  return JSON.parse(readFileSync(join(extensionPath, 'package.json'), 'utf8'));
}

/** Polls `fn` until it returns a truthy value; throws `what` after `timeout` ms. */
export async function waitFor(fn, what, timeout = 30_000, interval = 200) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}`);
    await sleep(interval);
  }
}

/** Opens the command palette (F1) with `text` typed after its `>`. */
export async function openPalette(page, text = '') {
  await page.keyboard.press('F1');
  await page.locator(PALETTE.input).waitFor({ state: 'visible' });
  if (text) await page.keyboard.type(text);
  // The list filters asynchronously; wait until it shows at least one row (or settles empty).
  await page.locator(PALETTE.row).first().waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {});
  await sleep(300);
}

export async function closePalette(page) {
  await page.keyboard.press('Escape');
  await page.locator(PALETTE.widget).waitFor({ state: 'hidden' });
}

/**
 * Every row label the palette lists for `query`. The list is virtualised (only visible rows are
 * in the DOM), so it pages down until no new label appears. Leaves the palette open.
 */
export async function paletteLabels(page, query) {
  await openPalette(page, query);
  const seen = new Set();
  for (let i = 0; i < 20; i++) {
    const before = seen.size;
    for (const label of await page.locator(PALETTE.rowLabel).allTextContents()) seen.add(label.trim());
    if (i > 0 && seen.size === before) break;
    await page.keyboard.press('PageDown');
    await sleep(150);
  }
  return [...seen];
}

/** Runs a command by its palette label (e.g. "Chat: Manage Language Models") by clicking its row. */
export async function runCommand(page, label) {
  await openPalette(page, label);
  const row = page.locator(PALETTE.row).filter({ has: page.locator('.label-name', { hasText: label }) }).first();
  await row.waitFor({ state: 'visible', timeout: 10_000 });
  await row.click();
  await page.locator(PALETTE.widget).waitFor({ state: 'hidden' });
}

/** Lines of the scripted model's JSON-lines log (see scripted-model/extension.cjs). */
export function readModelLog(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Selects a model in the chat view's model picker by (part of) its name. */
export async function selectModel(page, name) {
  await page.locator(CHAT.modelPicker).click();
  const row = page.locator(CHAT.modelPickerRow).filter({ hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  await row.click();
  await waitFor(async () => (await page.locator(CHAT.modelPicker).textContent())?.includes(name), `model picker to show ${name}`, 10_000);
}

/** Picks an agent in the chat's agent picker (a contributed custom agent is listed by its front-matter name). */
export async function selectAgent(page, name) {
  await page.locator(CHAT.agentPicker).first().click();
  const row = page.locator(CHAT.agentPickerRow).filter({ hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  await row.click();
  await waitFor(async () => (await page.locator(CHAT.agentPicker).first().textContent())?.includes(name), `the agent picker to show ${name}`, 10_000);
}

/** Types a prompt into the chat input and sends it. */
export async function sendPrompt(page, text) {
  await page.locator(CHAT.input).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** Waits for the next tool confirmation in the chat and returns its text. */
export async function waitForToolConfirmation(page, timeout = 60_000) {
  const part = page.locator(CHAT.toolConfirmation).last();
  await part.waitFor({ state: 'visible', timeout });
  return (await part.textContent()) ?? '';
}

/** Clicks "Skip" on the visible tool confirmation. */
export async function skipTool(page) {
  await page.locator(CHAT.confirmationButton).filter({ hasText: CHAT_LABELS.skip }).first().click();
  await page.locator(CHAT.toolConfirmation).first().waitFor({ state: 'hidden' });
}

/** Picks "Allow Once" from the confirmation's split-button dropdown. */
export async function allowOnce(page) {
  await page.locator(CHAT.confirmationDropdown).first().click();
  const item = page.locator(CHAT.menuItem).filter({ hasText: CHAT_LABELS.allowOnce }).first();
  await item.waitFor({ state: 'visible' });
  // The menu ignores clicks for a moment after it opens.
  await sleep(500);
  await item.click();
  await page.locator(CHAT.toolConfirmation).first().waitFor({ state: 'hidden' });
}

// ---- Agent-mode helpers (test/e2e/agent.e2e.mjs) ----------------------------------------------
// Their selectors come from selectors.mjs too (imports are hoisted: this one joins the one above).
import { CHAT_CONFIRMATION, REVIEW, WORKBENCH } from '../host/selectors.mjs';

/**
 * The pending tool confirmation: waits until one is visible and returns its locator (pinned to
 * that element); its whole `text`; `title` and `message`, the text of what the tool itself asked
 * (without VS Code's "Input" block of raw arguments); and a `settled()` that waits until the
 * person's answer took it away.
 */
export async function pendingToolConfirmation(page, timeout = 60_000) {
  const part = page.locator(CHAT.toolConfirmation).last();
  await part.waitFor({ state: 'visible', timeout });
  const handle = await part.elementHandle({ timeout });
  const textOf = async (sel) => ((await part.locator(sel).first().innerText({ timeout: 5_000 }).catch(() => '')) ?? '').replace(/\u00a0/g, ' ').trim();
  return {
    locator: part,
    text: (await handle.textContent()) ?? '',
    title: await textOf(CHAT_CONFIRMATION.title),
    message: await textOf(CHAT_CONFIRMATION.message),
    /** Waits until this confirmation is answered: detached, hidden, or no longer asking. */
    async settled(ms = 30_000) {
      await page.waitForFunction(
        (el) => !el.isConnected || !el.classList.contains('has-confirmation') || el.getClientRects().length === 0,
        handle, { timeout: ms, polling: 100 });
      await handle.dispose();
    },
  };
}

/**
 * Answers the pending tool confirmation like a person: "skip", "allowSession" (the split
 * button's main action), or a label of its dropdown ("allowOnce", "allowWorkspace", "alwaysAllow").
 * `onMenu` runs while the dropdown is open (e.g. to take a screenshot of it).
 * Returns the confirmation's text as it was before the click.
 */
export async function answerToolConfirmation(page, choice, { timeout = 60_000, onMenu } = {}) {
  const label = CHAT_LABELS[choice];
  if (!label) throw new Error(`unknown confirmation choice ${JSON.stringify(choice)} (one of ${Object.keys(CHAT_LABELS).join(', ')})`);
  const pending = await pendingToolConfirmation(page, timeout);
  const buttons = pending.locator.locator(CHAT.confirmationButton);
  if (choice === 'skip' || choice === 'allowSession') {
    await buttons.filter({ hasText: label }).first().click();
  } else {
    await pending.locator.locator(CHAT.confirmationDropdown).first().click();
    const item = page.locator(CHAT.menuItem).filter({ hasText: label }).first();
    await item.waitFor({ state: 'visible', timeout: 10_000 });
    // The menu ignores clicks for a moment after it opens.
    await sleep(500);
    await onMenu?.();
    await item.click();
  }
  await pending.settled();
  return pending.text;
}

/** Waits for VS Code's modal dialog and returns its message, detail and button labels. */
export async function waitForDialog(page, timeout = 60_000) {
  const box = page.locator(WORKBENCH.dialog).first();
  await box.waitFor({ state: 'visible', timeout });
  const text = async (sel) => ((await page.locator(sel).first().textContent().catch(() => '')) ?? '').trim();
  return {
    message: await text(WORKBENCH.dialogMessage),
    detail: await text(WORKBENCH.dialogDetail),
    buttons: (await page.locator(WORKBENCH.dialogButton).allTextContents()).map((s) => s.trim()).filter(Boolean),
  };
}

/** Clicks a button of the modal dialog by its label and waits until the dialog is gone. */
export async function clickDialogButton(page, label) {
  await page.locator(WORKBENCH.dialogButton).filter({ hasText: label }).first().click();
  await page.locator(WORKBENCH.dialog).first().waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Labels of the open editor tabs. */
export async function editorTabLabels(page) {
  return (await page.locator(WORKBENCH.tabLabel).allTextContents()).map((s) => s.trim());
}

/** Visible text of the open diff editor's sides (Monaco's non-breaking spaces as spaces). */
export async function diffEditorText(page) {
  const text = async (sel) => ((await page.locator(sel).first().innerText().catch(() => '')) ?? '').replace(/\u00a0/g, ' ');
  return { original: await text(REVIEW.diffOriginalLines), modified: await text(REVIEW.diffModifiedLines) };
}

/** Texts of the visible status bar entries. */
export async function statusBarTexts(page) {
  return (await page.locator(`${REVIEW.statusBarItem}:visible`).allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
}
