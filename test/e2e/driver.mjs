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
