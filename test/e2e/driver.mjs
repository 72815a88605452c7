// What a person does in the workbench, as functions over a playwright page: the command palette,
// the chat view and its tool confirmations. Selectors come from test/host/selectors.mjs only.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../host/ensure.mjs';
import { CHAT, CHAT_CONFIRMATION, CHAT_LABELS, PALETTE, PANES, REVIEW, WORKBENCH } from '../host/selectors.mjs';

export { openWorkbench, whenWorkbenchRestored } from '../host/run-suite.mjs';

/** The extension under test: $WT_EXTENSION_PATH or this repo (which needs a built dist/). */
export const extensionPath = process.env.WT_EXTENSION_PATH || repoRoot;
export const fixtureWorkspace = join(repoRoot, 'test/fixtures/workspace');
export const scriptedModelPath = join(repoRoot, 'test/e2e/scripted-model');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

// ---- Input: every key goes to an element whose focus was read back first, text goes in over a
// selection read back from the editor, and each step waits on the state it produces. Keys sent
// before their target has the focus are lost or land elsewhere (issue 16); a sleep only hides that
// until the machine is slower.

/** The element that has the keyboard focus, described for an error message. */
export function describeFocus(page) {
  return page.evaluate(() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    if (!el || el === document.body) return 'nothing (the page body)';
    const owner = el.parentElement?.closest(
      '.monaco-editor, .quick-input-widget, .monaco-menu, .monaco-dialog-box, .part',
    );
    const cls = (e) => [...e.classList].map((c) => `.${c}`).join('');
    return `<${el.tagName.toLowerCase()}${cls(el)}>${owner ? ` inside ${cls(owner)}` : ''}`;
  });
}

/** Waits until the keyboard focus is in (or on) an element `target` (a Locator) matches. */
export async function waitForFocus(page, target, what, timeout = 30_000) {
  const focused = () =>
    target.evaluateAll((els) => {
      // Down through shadow roots (a menu may render in one) to the element that has the focus.
      let active = document.activeElement;
      while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
      return els.some((el) => el.contains(active));
    });
  try {
    await waitFor(focused, `${what} to have the keyboard focus`, timeout, 50);
  } catch (err) {
    throw new Error(`${err.message}; the focus is on ${await describeFocus(page)}`, { cause: err });
  }
}

/** Presses `key` once `target` has the keyboard focus; the caller waits for the key's effect. */
export async function pressIn(page, target, key, what) {
  await waitForFocus(page, target, what);
  await page.keyboard.press(key);
}

/**
 * Opens the command palette (F1) and sets its filter to `text` (after its `>`) once its input has
 * the focus. Callers wait for the rows they need.
 */
export async function openPalette(page, text = '') {
  const input = page.locator(PALETTE.input);
  await page.keyboard.press('F1');
  await waitForFocus(page, input, "the command palette's input");
  await input.fill(`>${text}`);
  await waitFor(
    async () => (await input.inputValue()) === `>${text}`,
    `the command palette to hold ">${text}"`,
    15_000,
    50,
  );
}

export async function closePalette(page) {
  await pressIn(page, page.locator(PALETTE.widget), 'Escape', 'the command palette');
  await page.locator(PALETTE.widget).waitFor({ state: 'hidden' });
}

/**
 * Every row label the palette lists for `query`. The list is virtualised (only visible rows are
 * in the DOM), so it pages down until its last row has been rendered. Leaves the palette open.
 */
export async function paletteLabels(page, query) {
  await openPalette(page, query);
  await page.locator(PALETTE.row).first().waitFor({ state: 'visible', timeout: 30_000 });
  const rows = () =>
    page.locator(PALETTE.row).evaluateAll(
      (els, labelSel) =>
        els.map((e) => ({
          label: e.querySelector(labelSel)?.textContent?.trim() ?? '',
          index: Number(e.getAttribute('data-index')),
          last: Number(e.getAttribute('aria-posinset')) === Number(e.getAttribute('aria-setsize')),
          focused: e.classList.contains('focused'),
        })),
      PALETTE.labelInRow,
    );
  const seen = new Set();
  for (;;) {
    const shown = await rows();
    for (const r of shown) seen.add(r.label);
    if (shown.length === 0 || shown.some((r) => r.last)) break;
    const focused = shown.find((r) => r.focused)?.index ?? -1;
    await pressIn(page, page.locator(PALETTE.input), 'PageDown', "the command palette's input");
    await waitFor(
      async () => ((await rows()).find((r) => r.focused)?.index ?? -1) > focused,
      'the palette list to page down',
      30_000,
      50,
    );
  }
  return [...seen];
}

/**
 * Starts a command by its palette label by clicking its row; unlike runCommand it does not wait for
 * the palette to close (the command's own input box may reuse it).
 */
export async function startCommand(page, label) {
  await openPalette(page, label);
  const row = page
    .locator(PALETTE.row)
    .filter({ has: page.locator(PALETTE.labelInRow, { hasText: label }) })
    .first();
  await row.waitFor({ state: 'visible', timeout: 30_000 });
  await row.click();
}

/** Runs a command by its palette label (e.g. "Chat: Manage Language Models") and waits until the palette has closed. */
export async function runCommand(page, label) {
  await startCommand(page, label);
  await page.locator(PALETTE.widget).waitFor({ state: 'hidden' });
}

/**
 * The document shown by the Monaco editor in or around `editor` (a Locator): its model's `uri`;
 * `rows`, its rendered rows top to bottom; and `text`, the rows as lines (the whole document when
 * it fits on screen and no line wraps). Read together: the editor renders a new document's rows in
 * the same task that sets its uri.
 */
export function editorContent(editor) {
  return editor.evaluate((el) => {
    const root = el.closest('.monaco-editor[data-uri]') ?? el.querySelector('.monaco-editor[data-uri]');
    // Rows are positioned by `top`, not kept in DOM order.
    const rows = [...(root?.querySelectorAll('.view-lines .view-line') ?? [])]
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .map((l) => (l.textContent ?? '').replace(/\u00a0/g, ' '));
    return { uri: root?.getAttribute('data-uri') ?? '', rows, text: rows.join('\n') };
  });
}

/** The text of the Monaco editor in or around `editor` (see editorContent). */
export async function editorText(editor) {
  return (await editorContent(editor)).text;
}

/**
 * What the Monaco editor in or around `editor` reports: whether it has the keyboard focus, and
 * the text of its selection as its input element (EditContext or textarea) holds it.
 */
function editorFocusState(editor) {
  return editor.evaluate((el) => {
    const root = el.closest('.monaco-editor[data-uri]') ?? el.querySelector('.monaco-editor[data-uri]');
    const active = document.activeElement;
    if (!root || !active || !root.contains(active)) return { focused: false };
    const context = active.editContext;
    if (context) return { focused: true, selected: context.text.slice(context.selectionStart, context.selectionEnd) };
    if (active.tagName === 'TEXTAREA')
      return { focused: true, selected: active.value.slice(active.selectionStart, active.selectionEnd) };
    return { focused: true };
  });
}

/** Waits until the focus is in `editor` (a command that ends by focusing it has finished with the focus). */
export async function waitForEditorFocus(editor, what = 'the editor', timeoutMs = 30_000) {
  await waitFor(async () => (await editorFocusState(editor)).focused, `${what} to have the focus`, timeoutMs, 50);
}

/**
 * Where to click to select `find` in the editor's rendered lines: just inside its first and last
 * characters, on its line's middle. `find` must occur exactly once, and both points must hit the
 * editor's text (not a widget over it).
 */
function selectionPoints(editor, find) {
  return editor.evaluate((el, wanted) => {
    const root = el.closest('.monaco-editor[data-uri]') ?? el.querySelector('.monaco-editor[data-uri]');
    const lines = [...(root?.querySelectorAll('.view-lines .view-line') ?? [])];
    const hits = lines.filter((l) => (l.textContent ?? '').replace(/\u00a0/g, ' ').includes(wanted));
    const count = hits.reduce((n, l) => n + (l.textContent ?? '').replace(/\u00a0/g, ' ').split(wanted).length - 1, 0);
    if (count !== 1) return { error: `${JSON.stringify(wanted)} occurs ${count} times in the editor's lines` };
    const line = hits[0];
    const at = (line.textContent ?? '').replace(/\u00a0/g, ' ').indexOf(wanted);
    // A Range over the characters, across the token spans Monaco splits a line into.
    const range = document.createRange();
    const walker = document.createTreeWalker(line, 4 /* NodeFilter.SHOW_TEXT */);
    let offset = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const len = node.data.length;
      if (at >= offset && at < offset + len) range.setStart(node, at - offset);
      if (at + wanted.length > offset && at + wanted.length <= offset + len) {
        range.setEnd(node, at + wanted.length - offset);
        break;
      }
      offset += len;
    }
    const box = range.getBoundingClientRect();
    const inset = Math.min(2, box.width / (4 * wanted.length));
    const y = box.top + box.height / 2;
    const points = { from: { x: box.left + inset, y }, to: { x: box.right - inset, y } };
    for (const p of [points.from, points.to]) {
      const hit = document.elementFromPoint(p.x, p.y);
      if (!hit || !line.contains(hit))
        return {
          error: `the point (${p.x}, ${p.y}) over ${JSON.stringify(wanted)} hits ${hit ? hit.className || hit.tagName : 'nothing'}`,
        };
    }
    return points;
  }, find);
}

/**
 * Selects `find` in the Monaco editor in or around `editor` (a Locator) like a person with the
 * mouse: a click before its first character and a shift-click after its last. Then reads back that
 * the editor has the keyboard focus and that its selection is exactly `find`. When the layout
 * moved under the mouse (a view opening beside it), it measures and clicks again, at most 3 times.
 */
export async function selectInEditor(page, editor, find, what = 'the editor') {
  let state;
  let points;
  for (let attempt = 1; attempt <= 3; attempt++) {
    let unclickable;
    try {
      points = await waitFor(
        async () => {
          const p = await selectionPoints(editor, find);
          unclickable = p.error;
          return p.error ? undefined : p;
        },
        `${what} to show ${JSON.stringify(find)} where it can be clicked`,
        30_000,
        100,
      );
    } catch (err) {
      throw new Error(`${err.message}: ${unclickable}`, { cause: err });
    }
    await page.mouse.click(points.from.x, points.from.y);
    await page.keyboard.down('Shift');
    try {
      await page.mouse.click(points.to.x, points.to.y);
    } finally {
      await page.keyboard.up('Shift');
    }
    const selected = await waitFor(
      async () => {
        state = await editorFocusState(editor);
        return state.focused && state.selected === find;
      },
      `${what} to have the focus and ${JSON.stringify(find)} selected`,
      15_000,
      50,
    ).catch(() => false);
    if (selected) return;
  }
  throw new Error(
    `${what}: after 3 tries (clicks at ${JSON.stringify(points)}), ${state?.focused ? `the selection is ${JSON.stringify(state.selected)}, not ${JSON.stringify(find)}` : `the editor has no focus (it is on ${await describeFocus(page)})`}`,
  );
}

/**
 * Replaces `find` (once in the editor) with `replace`, as one input event over a selection that was
 * read back, then waits until the editor shows exactly `expected` as its whole text.
 */
export async function replaceInEditor(page, editor, { find, replace, expected, what = 'the editor' }) {
  await selectInEditor(page, editor, find, what);
  await page.keyboard.insertText(replace);
  let shown;
  try {
    await waitFor(
      async () => (shown = await editorText(editor)) === expected,
      `${what} to show the edited text`,
      30_000,
      50,
    );
  } catch (err) {
    throw new Error(`${err.message}: it shows ${JSON.stringify(shown)}, not ${JSON.stringify(expected)}`, {
      cause: err,
    });
  }
}

/**
 * Types the one-line `text` into the (empty) Monaco editor in or around `editor` once it has the
 * focus, and waits until it shows exactly that (wrapped over rows, as the chat input wraps it).
 */
export async function typeLineIntoEditor(page, editor, text, what = 'the editor') {
  await editor.click();
  await waitForFocus(page, editor, what);
  await page.keyboard.insertText(text);
  let shown;
  try {
    await waitFor(
      async () => (shown = (await editorContent(editor)).rows.join('')) === text,
      `${what} to show the text typed into it`,
      30_000,
      50,
    );
  } catch (err) {
    throw new Error(`${err.message}: it shows ${JSON.stringify(shown)}, not ${JSON.stringify(text)}`, { cause: err });
  }
}

/**
 * Picks `label` in the open context menu with the keyboard: arrows down until the focused entry
 * (read back) is `label`, then Enter. (A menu entry ignores mouse clicks for its first 100 ms,
 * which nothing on screen tells; the keyboard has no such window.)
 */
export async function pickMenuItem(page, label) {
  const menu = page.locator(CHAT.menu);
  await menu.first().waitFor({ state: 'visible', timeout: 30_000 });
  await page.locator(CHAT.menuItem).filter({ hasText: label }).first().waitFor({ state: 'visible', timeout: 30_000 });
  await waitForFocus(page, menu, 'the menu');
  const focusedLabel = () =>
    page.evaluate(
      (sel) => {
        let active = document.activeElement;
        while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
        return active?.closest(sel.item)?.querySelector(sel.label)?.textContent?.trim() ?? '';
      },
      { item: CHAT.menuEntry, label: CHAT.menuEntryLabel },
    );
  const seen = [];
  for (let current = await focusedLabel(); current !== label; current = await focusedLabel()) {
    if (seen.includes(current) && current)
      throw new Error(`the menu has no entry ${JSON.stringify(label)} (its entries: ${seen.join(', ')})`);
    seen.push(current);
    await pressIn(page, menu, 'ArrowDown', 'the menu');
    await waitFor(async () => (await focusedLabel()) !== current, 'the menu to move its focus', 15_000, 50);
  }
  await pressIn(page, menu, 'Enter', 'the menu');
  await menu.first().waitFor({ state: 'hidden', timeout: 30_000 });
}

/** Lines of the scripted model's JSON-lines log (see scripted-model/extension.cjs). */
export function readModelLog(file) {
  if (!existsSync(file)) return [];
  // The model appends while we read: a last line without its newline is still being written.
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.pop();
  return lines.filter(Boolean).map((l) => JSON.parse(l));
}

/** Selects a model in the chat view's model picker by (part of) its name. */
export async function selectModel(page, name) {
  await page.locator(CHAT.modelPicker).click();
  const row = page.locator(CHAT.modelPickerRow).filter({ hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout: 30_000 });
  await row.click();
  await waitFor(
    async () => (await page.locator(CHAT.modelPicker).textContent())?.includes(name),
    `model picker to show ${name}`,
    30_000,
  );
}

/** Picks an agent in the chat's agent picker (a contributed custom agent is listed by its front-matter name). */
export async function selectAgent(page, name) {
  await page.locator(CHAT.agentPicker).first().click();
  const row = page.locator(CHAT.agentPickerRow).filter({ hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout: 30_000 });
  await row.click();
  await waitFor(
    async () => (await page.locator(CHAT.agentPicker).first().textContent())?.includes(name),
    `the agent picker to show ${name}`,
    30_000,
  );
}

/** Types a prompt into the chat input, checks it is all there, sends it and waits until the chat shows it as a request. */
export async function sendPrompt(page, text) {
  const input = page.locator(CHAT.input).first();
  await typeLineIntoEditor(page, input, text, 'the chat input');
  await pressIn(page, input, 'Enter', 'the chat input');
  await page.locator(CHAT.request).filter({ hasText: text }).first().waitFor({ state: 'visible', timeout: 30_000 });
}

// ---- Agent-mode helpers (test/e2e/agent.e2e.mjs) ----------------------------------------------

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
  const textOf = async (sel) =>
    (
      (await part
        .locator(sel)
        .first()
        .innerText({ timeout: 5_000 })
        .catch(() => '')) ?? ''
    )
      .replace(/\u00a0/g, ' ')
      .trim();
  // The tool's message renders (as markdown) after the part appears; callers check it is there.
  await waitFor(
    async () => (await textOf(CHAT_CONFIRMATION.message)) !== '',
    "the confirmation's message",
    30_000,
    50,
  ).catch(() => {});
  return {
    locator: part,
    text: (await handle.textContent()) ?? '',
    title: await textOf(CHAT_CONFIRMATION.title),
    message: await textOf(CHAT_CONFIRMATION.message),
    /** Waits until this confirmation is answered: detached, hidden, or no longer asking. */
    async settled(ms = 30_000) {
      await page.waitForFunction(
        (el) => !el.isConnected || !el.classList.contains('has-confirmation') || el.getClientRects().length === 0,
        handle,
        { timeout: ms, polling: 100 },
      );
      await handle.dispose();
    },
  };
}

/**
 * Answers the pending tool confirmation like a person: "skip", "allowSession" (the split
 * button's main action), or a label of its dropdown ("allowOnce", "allowWorkspace", "alwaysAllow");
 * "save" for a save's own confirmation (its main button, beside "Skip").
 * `onMenu` runs while the dropdown is open (e.g. to take a screenshot of it).
 * Returns the confirmation's text as it was before the click.
 */
export async function answerToolConfirmation(page, choice, { timeout = 60_000, onMenu } = {}) {
  const label = CHAT_LABELS[choice];
  if (!label)
    throw new Error(
      `unknown confirmation choice ${JSON.stringify(choice)} (one of ${Object.keys(CHAT_LABELS).join(', ')})`,
    );
  const pending = await pendingToolConfirmation(page, timeout);
  const buttons = pending.locator.locator(CHAT.confirmationButton);
  if (choice === 'skip' || choice === 'allowSession' || choice === 'save') {
    await buttons.filter({ hasText: label }).first().click();
  } else {
    await pending.locator.locator(CHAT.confirmationDropdown).first().click();
    await page.locator(CHAT.menuItem).filter({ hasText: label }).first().waitFor({ state: 'visible', timeout: 30_000 });
    await onMenu?.();
    await pickMenuItem(page, label);
  }
  await pending.settled();
  return pending.text;
}

/** Waits for VS Code's modal dialog and returns its message, detail and button labels. */
export async function waitForDialog(page, timeout = 60_000) {
  const box = page.locator(WORKBENCH.dialog).first();
  await box.waitFor({ state: 'visible', timeout });
  const text = async (sel) =>
    (
      (await page
        .locator(sel)
        .first()
        .textContent()
        .catch(() => '')) ?? ''
    ).trim();
  return {
    message: await text(WORKBENCH.dialogMessage),
    detail: await text(WORKBENCH.dialogDetail),
    buttons: (await page.locator(WORKBENCH.dialogButton).allTextContents()).map((s) => s.trim()).filter(Boolean),
  };
}

/** Clicks a button of the modal dialog by its label and waits until the dialog is gone. */
export async function clickDialogButton(page, label) {
  await page.locator(WORKBENCH.dialogButton).filter({ hasText: label }).first().click();
  await page.locator(WORKBENCH.dialog).first().waitFor({ state: 'hidden', timeout: 30_000 });
}

/**
 * Waits for a modal editor (e.g. the one "Manage Language Models" opens) showing `text`, closes it
 * with Escape once it has the focus, and waits until it is gone.
 */
export async function closeModalEditor(page, text) {
  const modal = page.locator(WORKBENCH.modalEditor).filter({ hasText: text }).first();
  await modal.waitFor({ state: 'visible', timeout: 30_000 });
  await pressIn(page, modal, 'Escape', `the modal editor showing ${JSON.stringify(text)}`);
  await modal.waitFor({ state: 'hidden', timeout: 30_000 });
}

/**
 * Hovers `target` until the workbench shows its tooltip, and returns the tooltip's text. A tooltip
 * shows after a delay and goes away when what is under it renders again (a tab's label updating),
 * so when none shows, the mouse leaves and comes back, at most 3 times.
 */
export async function hoverTooltip(page, target, what) {
  const tooltip = page.locator(`${PANES.hover}:visible`).first();
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(0, 500);
    await target.hover();
    try {
      await tooltip.waitFor({ state: 'visible', timeout: 15_000 });
      return ((await tooltip.innerText()) ?? '').trim();
    } catch (err) {
      if (attempt === 3) throw new Error(`${what} shows no tooltip after being hovered 3 times`, { cause: err });
    }
  }
}

/** Labels of the open editor tabs. */
export async function editorTabLabels(page) {
  return (await page.locator(WORKBENCH.tabLabel).allTextContents()).map((s) => s.trim());
}

/** Visible text of the open diff editor's sides (Monaco's non-breaking spaces as spaces). */
export async function diffEditorText(page) {
  const text = async (sel) =>
    (
      (await page
        .locator(sel)
        .first()
        .innerText()
        .catch(() => '')) ?? ''
    ).replace(/\u00a0/g, ' ');
  return { original: await text(REVIEW.diffOriginalLines), modified: await text(REVIEW.diffModifiedLines) };
}

/** Texts of the visible status bar entries. */
export async function statusBarTexts(page) {
  return (await page.locator(`${REVIEW.statusBarItem}:visible`).allInnerTexts()).map((s) =>
    s.replace(/\s+/g, ' ').trim(),
  );
}
