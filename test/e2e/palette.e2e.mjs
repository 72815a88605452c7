// The workbench as a person sees it: the command palette lists the extension's commands and its
// view container opens; "Search Files…" asks in VS Code's modal dialog and lists matches without
// the secrets; "Stage Current File" shows the Staged Changes view, the status bar entry and the
// staged diff; "Open File as Artifact…" opens a read-only snapshot; "Show Audit Log" shows one line
// per call and no file contents. The tests run in order on one workbench (each builds on the
// calls before it). Screenshots go to test-results/palette-*.png; with WT_UPDATE_SCREENSHOTS=1 the
// review screenshot is also copied to media/screenshot-review.png (the README's).
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { repoRoot } from '../host/ensure.mjs';
import { CHAT, PALETTE, PANES, QUICK_INPUT, REVIEW, WORKBENCH } from '../host/selectors.mjs';
import * as d from './driver.mjs';

const CANARY = 'WT_CANARY_ENV_7f3a';

/**
 * The fixture plus two files that make the secret search meaningful: a source file that mentions
 * API_TOKEN (a match that must be listed) and a secret that is not hidden (deploy/prod.env, which
 * ripgrep would search by default; only the `*.env` ask rule keeps it out). `.env` is the fixture's.
 */
function prepareWorkspace(dir) {
  cpSync(d.fixtureWorkspace, dir, { recursive: true });
  writeFileSync(join(dir, 'src/config.js'), "export const apiToken = process.env.API_TOKEN ?? '';\n");
  mkdirSync(join(dir, 'deploy'));
  writeFileSync(join(dir, 'deploy/prod.env'), `API_TOKEN=${CANARY}\n`);
}

/** Answers the input box titled `title` with `text` (replacing its prefilled value) and waits until it closes. */
async function answerInputBox(page, title, text) {
  const titled = page.locator(QUICK_INPUT.title).filter({ hasText: title });
  await titled.waitFor({ state: 'visible', timeout: 30_000 });
  const input = page.locator(QUICK_INPUT.input);
  await d.waitForFocus(page, input, `the input box "${title}"`);
  await input.fill(text);
  await d.waitFor(
    async () => (await input.inputValue()) === text,
    `the input box to hold ${JSON.stringify(text)}`,
    15_000,
    50,
  );
  await d.pressIn(page, input, 'Enter', `the input box "${title}"`);
  await titled.waitFor({ state: 'hidden', timeout: 30_000 });
}

/**
 * Waits for a quick pick whose title matches `re` and names its count ("…: 2 results"), and until
 * it lists that many rows (the searches here find a few, all rendered at once); returns its title
 * and rows (each row's label and detail, as its aria-label).
 */
async function waitForQuickPick(page, re) {
  const title = page.locator(QUICK_INPUT.title).filter({ hasText: re });
  await title.waitFor({ state: 'visible', timeout: 30_000 });
  const titleText = ((await title.textContent()) ?? '').trim();
  const count = Number(/: (\d+) results?\b/.exec(titleText)?.[1]);
  assert.ok(count > 0, `the quick pick's title names no result count: ${titleText}`);
  const rows = page.locator(QUICK_INPUT.row);
  await d.waitFor(
    async () => (await rows.count()) === count,
    `the quick pick to list ${count} rows (its title: ${titleText})`,
    30_000,
    50,
  );
  await d.waitForFocus(page, page.locator(QUICK_INPUT.widget), `the quick pick "${titleText}"`);
  return {
    title: titleText,
    rows: await rows.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? '')),
    text: (await page.locator(QUICK_INPUT.widget).innerText()) ?? '',
  };
}

/** Rows of the side bar's tree views as { label, description }. */
async function sideBarRows(page) {
  return page.locator(REVIEW.sideBarRow).evaluateAll(
    (els, sel) =>
      els.map((e) => ({
        label: e.querySelector(sel.label)?.textContent?.trim() ?? '',
        description: e.querySelector(sel.description)?.textContent?.trim() ?? '',
      })),
    { label: PANES.sideBarRowLabel, description: PANES.sideBarRowDescription },
  );
}

/** The Output panel's text as logical lines (Monaco splits a wrapped line across several `.view-line`s). */
async function outputLines(page) {
  const parts = await page.locator(PANES.panelLine).allTextContents();
  return parts
    .join('')
    .replace(/\u00a0/g, ' ')
    .split(/(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[)/)
    .map((l) => l.trim())
    .filter(Boolean);
}

describe('command palette', () => {
  let wb;
  let tmp;
  const page = () => wb.page;
  /** Every call the tests made, in order: the audit log must have exactly these. */
  const calls = [];

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'wt-palette-e2e-'));
    prepareWorkspace(join(tmp, 'workspace'));
    wb = await d.openWorkbench({
      workspace: join(tmp, 'workspace'),
      extensionDevelopmentPath: d.extensionPath,
      name: 'palette',
    });
    await d.whenWorkbenchRestored(wb.page);
  });
  // What was on screen when a test failed: test-results/palette-failure-<test>.png.
  afterEach(async (t) => {
    if (!t.passed && wb?.page)
      await wb.screenshot(`palette-failure-${t.name.replace(/\W+/g, '-').slice(0, 60)}`).catch(() => {});
  });
  after(async () => {
    try {
      await wb?.close();
    } finally {
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('lists every Workspace Tools command under its category', { timeout: 180_000 }, async () => {
    const { contributes } = d.manifest();
    // Commands hidden from the palette (`"when": "false"`: a view's item action) are not listed.
    const hidden = new Set(
      (contributes?.menus?.commandPalette ?? []).filter((m) => m.when === 'false').map((m) => m.command),
    );
    const expected = (contributes?.commands ?? [])
      .filter((c) => !hidden.has(c.command))
      .map((c) => (c.category ? `${c.category}: ${c.title}` : c.title));
    assert.ok(expected.length > 0, 'package.json contributes no commands');
    // The development extension's contributions arrive shortly after the workbench restores.
    let labels = [];
    await d
      .waitFor(
        async () => {
          labels = await d.paletteLabels(wb.page, 'Workspace Tools');
          if (expected.every((e) => labels.includes(e))) return true;
          await d.closePalette(wb.page);
          return false;
        },
        'the palette to list the commands',
        30_000,
        500,
      )
      .catch(() => {});
    await wb.screenshot('palette-workspace-tools');
    await d.closePalette(wb.page);
    assert.deepEqual(
      expected.filter((e) => !labels.includes(e)),
      [],
      `missing from the palette (it listed: ${labels.join(' | ')})`,
    );
  });

  test('opens the Workspace Tools view container with its views', { timeout: 180_000 }, async () => {
    const { contributes } = d.manifest();
    const container = contributes?.viewsContainers?.activitybar?.[0];
    assert.ok(container, 'package.json contributes no activity bar view container');
    await d.runCommand(wb.page, `View: Show ${container.title}`);
    const sideBar = wb.page.locator(WORKBENCH.sideBar);
    for (const view of contributes.views?.[container.id] ?? []) {
      await sideBar.getByText(view.name, { exact: false }).first().waitFor({ state: 'visible', timeout: 30_000 });
    }
    await wb.screenshot('view-container');
  });

  test(
    'Search Files… asks in a modal dialog, then lists the matches without the secrets',
    { timeout: 240_000 },
    async () => {
      // A pattern on the canary's own line: .env and deploy/prod.env match it, and src/config.js.
      await d.startCommand(page(), 'Workspace Tools: Search Files…');
      await answerInputBox(page(), 'Workspace Tools: Search Files', 'API_TOKEN');
      const dialog = await d.waitForDialog(page());
      await wb.screenshot('palette-search-confirm');
      assert.match(dialog.message, /^Allow search_files to read/);
      assert.match(dialog.detail, /API_TOKEN/);
      assert.ok(dialog.buttons.includes('Allow Once'), `dialog buttons: ${dialog.buttons.join(' | ')}`);
      await d.clickDialogButton(page(), 'Allow Once');
      calls.push('search_files');

      const secret = await waitForQuickPick(page(), /^Search "API_TOKEN": \d+ results?/);
      await wb.screenshot('palette-search-results');
      // A row's aria-label: "<icon> <path>:<line>, <matched line>".
      const listed = secret.rows.map((r) => /^\S*\s+(\S+):\d+,/.exec(r)?.[1] ?? r);
      assert.deepEqual(listed, ['src/config.js'], `listed: ${JSON.stringify(secret.rows)}`);
      for (const row of secret.rows) assert.ok(!row.includes(CANARY), `the canary is listed: ${row}`);
      assert.ok(!secret.text.includes(CANARY) && !secret.title.includes(CANARY), 'the canary is on screen');
      await d.pressIn(page(), page().locator(QUICK_INPUT.widget), 'Escape', 'the search results');
      await page().locator(QUICK_INPUT.widget).waitFor({ state: 'hidden' });

      // An ordinary search; picking its result opens the file at the line.
      await d.startCommand(page(), 'Workspace Tools: Search Files…');
      await answerInputBox(page(), 'Workspace Tools: Search Files', 'Hello');
      assert.match((await d.waitForDialog(page())).message, /^Allow search_files to read/);
      await d.clickDialogButton(page(), 'Allow Once');
      calls.push('search_files');
      const plain = await waitForQuickPick(page(), /^Search "Hello": 1 result/);
      assert.match(plain.rows[0] ?? '', /src\/greet\.js:2.*Hello, \$\{name\}/);
      // Enter picks the focused row: it must be that one.
      assert.match((await page().locator(PALETTE.focusedRow).getAttribute('aria-label')) ?? '', /src\/greet\.js:2/);
      await d.pressIn(page(), page().locator(QUICK_INPUT.widget), 'Enter', 'the search results');
      await page()
        .locator(`${PANES.tabByResource('greet.js')}.active`)
        .waitFor({ state: 'visible', timeout: 30_000 });
      await d.waitFor(
        async () => /Ln 2, Col 1/.test((await page().locator(PANES.cursorPosition).textContent()) ?? ''),
        'the cursor on line 2',
        30_000,
      );
    },
  );

  test(
    'Stage Current File shows the change in the Staged Changes view, the status bar and a diff',
    { timeout: 240_000 },
    async () => {
      const onDisk = join(wb.workspaceDir, 'src/greet.js');
      const before = readFileSync(onDisk, 'utf8');
      assert.ok(
        await page()
          .locator(`${PANES.tabByResource('greet.js')}.active`)
          .isVisible(),
        'src/greet.js is not the active editor (the search test opens it)',
      );

      await d.startCommand(page(), 'Workspace Tools: Stage Current File');
      const dialog = await d.waitForDialog(page());
      await wb.screenshot('palette-stage-confirm');
      assert.equal(dialog.message, 'Allow stage_file to stage a change to "src/greet.js"?');
      await d.clickDialogButton(page(), 'Allow Once');
      calls.push('stage_file');

      // The staged diff opens beside, titled "<file> (disk ↔ staged <media id>)" (disk on the left); the status bar counts it.
      await d.waitFor(
        async () => (await d.editorTabLabels(page())).some((l) => /^greet\.js \(disk ↔ staged m\d+\)$/.test(l)),
        'the staged diff tab',
        30_000,
      );
      const staged = page()
        .locator(REVIEW.statusBarItem)
        .filter({ hasText: /\b1 staged\b/ });
      await staged.waitFor({ state: 'visible', timeout: 30_000 });
      assert.equal(await staged.locator('.codicon-diff').count(), 1, 'the status bar entry has no $(diff) icon');

      // The status bar entry opens the view; the entry shows +/− against disk (nothing changed yet).
      await staged.click();
      await d.waitFor(
        async () =>
          (await sideBarRows(page())).find((r) => r.label === 'src/greet.js' && /^\+0 −0 · m\d+/.test(r.description)),
        'the Staged Changes entry',
        30_000,
      );
      // Its command (Review Staged) then opens the staged diff again and ends with the focus in it:
      // waited for, so that it cannot land between the selection below and the typing.
      const stagedSide = page().locator(REVIEW.diffModifiedEditor).first();
      const what = 'the staged side of the diff';
      await d.waitForEditorFocus(stagedSide, `${what} (focused by Review Staged)`);

      // The person edits the staged side of the diff ("Hello" → "Welcome") and saves it: a new
      // version of the staged file, still not on disk. The word is selected with the mouse and the
      // selection read back before anything is typed; the whole text is checked before saving.
      await d.replaceInEditor(page(), stagedSide, {
        find: 'Hello',
        replace: 'Welcome',
        expected: before.replace('Hello', 'Welcome'),
        what,
      });
      await d.pressIn(page(), stagedSide, 'Control+S', what);
      const row = await d.waitFor(
        async () =>
          (await sideBarRows(page())).find(
            (r) => r.label === 'src/greet.js' && /^\+1 −1 · m\d+ · edited by you \(\+1 −1\)/.test(r.description),
          ),
        'the entry to show the edit',
        30_000,
      );
      // The diff of the new version (its id in the title) takes the edited tab's place.
      const edited = /· (m\d+) ·/.exec(row.description)[1];
      await d.waitFor(
        async () => (await d.editorTabLabels(page())).includes(`greet.js (disk ↔ staged ${edited})`),
        `the diff of ${edited}`,
        30_000,
      );
      // Both sides: the new diff renders them one after the other, and a CI run read the original side still empty.
      const { modified, original } = await d.waitFor(
        async () => {
          const sides = await d.diffEditorText(page());
          return /Welcome/.test(sides.modified) && sides.original.length > 0 ? sides : undefined;
        },
        'the diff to show the edited text beside the original',
        30_000,
      );
      assert.match(modified, /return `Welcome, \$\{name\}!`;/);
      assert.match(original, /return `Hello, \$\{name\}!`;/);
      assert.ok(await staged.isVisible(), `status bar: ${(await d.statusBarTexts(page())).join(' | ')}`);
      assert.equal(readFileSync(onDisk, 'utf8'), before, 'staging changed the file on disk');

      // For the screenshot: the chat side bar hidden, the Staged Changes view wide enough for its entry.
      await d.runCommand(page(), 'View: Hide Secondary Side Bar');
      await page().locator(CHAT.input).first().waitFor({ state: 'hidden', timeout: 30_000 });
      const sideBar = page().locator(WORKBENCH.sideBar);
      const narrow = (await sideBar.boundingBox())?.width ?? 0;
      const sash = await page().locator(PANES.sideBarSash).boundingBox();
      if (sash) {
        await page().mouse.move(sash.x + sash.width / 2, sash.y + 200);
        await page().mouse.down();
        await page().mouse.move(sash.x + 140, sash.y + 200, { steps: 5 });
        await page().mouse.up();
        await d.waitFor(
          async () => ((await sideBar.boundingBox())?.width ?? 0) > narrow + 100,
          'the side bar to widen',
          30_000,
          50,
        );
      }
      await page().mouse.move(900, 700); // no hover in the picture
      await page().locator(`${PANES.hover}:visible`).first().waitFor({ state: 'hidden', timeout: 30_000 });
      // The diff's highlights of the changed word, on both sides.
      await page().locator(REVIEW.diffInsertedText).first().waitFor({ state: 'visible', timeout: 30_000 });
      await page().locator(REVIEW.diffRemovedText).first().waitFor({ state: 'visible', timeout: 30_000 });
      const shot = await wb.screenshot('palette-review');
      if (process.env.WT_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(repoRoot, 'media/screenshot-review.png'));
      assert.ok(row);
    },
  );

  test('Open File as Artifact… opens a read-only snapshot', { timeout: 240_000 }, async () => {
    await d.startCommand(page(), 'Workspace Tools: Open File as Artifact…');
    await answerInputBox(page(), 'Workspace Tools: Open File as Artifact', 'docs/notes.md');
    const dialog = await d.waitForDialog(page());
    assert.equal(dialog.message, 'Allow open_file to read "docs/notes.md"?');
    await d.clickDialogButton(page(), 'Allow Once');
    calls.push('open_file');
    // The status bar names the artifact (its callId) the model would page; the message shows for
    // 8 s, so it is looked for first.
    await d.waitFor(
      async () =>
        (await d.statusBarTexts(page())).find((t) => /artifact \S+: docs\/notes\.md, 10 lines, \d+ bytes/.test(t)),
      'the artifact status message',
      30_000,
      50,
    );

    const tab = page().locator(`${PANES.tabByResource('notes.md')}.active`);
    await tab.waitFor({ state: 'visible', timeout: 30_000 });
    const editor = page().locator(PANES.activeGroupEditor).first();
    const editorText = () => d.editorText(editor);
    await d.waitFor(async () => (await editorText()).includes('Nothing here yet.'), 'the artifact text', 30_000);
    // Not the file: its tooltip is the artifact's path, not the workspace file's.
    const tooltip = await d.hoverTooltip(page(), tab, "the artifact's tab");
    assert.match(tooltip, /^\/\[art-[0-9a-f]+-\d+\]\/docs\/notes\.md\b/);
    assert.ok(!tooltip.includes(wb.workspaceDir), `the tab is the workspace file: ${tooltip}`);
    await page().mouse.move(0, 500);

    // Read-only: typing is refused.
    const textBefore = await editorText();
    await editor.click();
    await d.pressIn(page(), editor, 'x', 'the artifact editor');
    await page()
      .locator(PANES.editorOverlayMessage)
      .filter({ hasText: 'Cannot edit in read-only editor' })
      .waitFor({ state: 'visible', timeout: 30_000 });
    assert.equal(await editorText(), textBefore, 'the read-only artifact changed');
    await wb.screenshot('palette-artifact');

    // A snapshot: once the file has changed on disk, a new artifact of it shows the change (so the
    // change has reached the extension), and this one still shows what was opened.
    const snapshotUri = (await d.editorContent(editor)).uri;
    assert.match(snapshotUri, /^artifact:/);
    writeFileSync(join(wb.workspaceDir, 'docs/notes.md'), '# Changed on disk\n');
    await d.runCommand(page(), 'View: Keep Editor'); // the next artifact opens beside this one, not in its place
    await d.startCommand(page(), 'Workspace Tools: Open File as Artifact…');
    await answerInputBox(page(), 'Workspace Tools: Open File as Artifact', 'docs/notes.md');
    assert.equal((await d.waitForDialog(page())).message, 'Allow open_file to read "docs/notes.md"?');
    await d.clickDialogButton(page(), 'Allow Once');
    calls.push('open_file');
    const newer = await d.waitFor(
      async () => {
        const shown = await d.editorContent(editor);
        return shown.uri.startsWith('artifact:') && shown.uri !== snapshotUri ? shown : undefined;
      },
      'the second artifact in the editor',
      30_000,
    );
    assert.equal(newer.text, '# Changed on disk\n');
    assert.equal(
      await page().locator(PANES.tabByResource('notes.md')).count(),
      2,
      "the first artifact's tab was replaced",
    );
    // Back to the first tab: its document is the snapshot as it was opened.
    await page()
      .locator(`${PANES.tabByResource('notes.md')}:not(.active)`)
      .click();
    const older = await d.waitFor(
      async () => {
        const shown = await d.editorContent(editor);
        return shown.uri === snapshotUri ? shown : undefined;
      },
      'the first artifact in the editor again',
      30_000,
    );
    assert.equal(older.text, textBefore, 'the first artifact no longer shows the snapshot');
    assert.ok(!textBefore.includes('Changed on disk'));
  });

  test('Show Audit Log shows one line per call and no file contents', { timeout: 180_000 }, async () => {
    await d.runCommand(page(), 'Workspace Tools: Show Audit Log');
    await page().locator(PANES.panel).waitFor({ state: 'visible', timeout: 30_000 });
    let lines = [];
    await d.waitFor(
      async () => {
        lines = await outputLines(page());
        return lines.filter((l) => / open_file "docs\/notes\.md" /.test(l)).length === 2;
      },
      'the audit log in the Output panel',
      30_000,
    );
    await wb.screenshot('palette-audit-log');
    const audited = lines
      .map((l) =>
        /^\S+ \S+ \[(?:info|warning)\] (\w+) "([^"]*)" (allowed|refused|invalid) by (\w+) in \d+ ms: (.*)$/.exec(l),
      )
      .filter(Boolean);
    assert.deepEqual(
      audited.map((m) => m[1]),
      calls,
      `audit lines:\n${lines.join('\n')}`,
    );
    assert.deepEqual(
      audited.map((m) => m[3]),
      calls.map(() => 'allowed'),
    );
    assert.deepEqual(
      audited.map((m) => m[4]),
      calls.map(() => 'person'),
    );
    assert.deepEqual(
      audited.filter((m) => m[1] !== 'search_files').map((m) => m[2]),
      ['src/greet.js', 'docs/notes.md', 'docs/notes.md'],
    );
    for (const m of audited) assert.match(m[5], /^ok \d+ bytes$/);
    // No contents: not the canary, not a searched pattern's matches, not a line of an opened file.
    const all = lines.join('\n');
    for (const text of [
      CANARY,
      'API_TOKEN',
      'Hello, ',
      'export function',
      'Nothing here yet',
      'Changed on disk',
      'reviewed by a person',
    ]) {
      assert.ok(!all.includes(text), `the audit log contains ${JSON.stringify(text)}`);
    }
  });
});
