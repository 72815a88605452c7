// A command's writes as a change set, in agent mode with the Workspace Tools agent (issue 43): the
// command edits two source files and writes package.json. By default the two files are applied when
// it ends and package.json is staged (listed in the Staged Changes view, unchanged on disk), and
// undo_save of the command's save_id puts the two files back byte for byte; with
// workspaceTools.shell.review "all" the disk is unchanged and the view lists all three.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { REVIEW, WORKBENCH } from '../host/selectors.mjs';
import * as d from './driver.mjs';
import { SCENARIO_TIMEOUT, runScenario } from './scenario.mjs';

const GREET = join('src', 'greet.js');
const MAIN = join('src', 'main.js');
const fixture = (rel) => readFileSync(join(d.fixtureWorkspace, rel));
const COMMAND =
  'sed -i s/Hello/Hi/ src/greet.js && echo "// touched" >> src/main.js && echo \'{"name":"fixture","scripts":{"postinstall":"node setup.js"}}\' > package.json && echo edited';
const SAVE_ID = '"save_id":"(s\\d+)"';

/** Opens the Staged Changes view in the side bar (the chat is in the other one). */
async function showStagedView(page) {
  const container = d.manifest().contributes.viewsContainers.activitybar[0];
  await d.runCommand(page, `View: Show ${container.title}`);
  await page
    .locator(WORKBENCH.sideBar)
    .getByText('Staged Changes', { exact: false })
    .first()
    .waitFor({ state: 'visible', timeout: 30_000 });
}

/** Waits until the Staged Changes view lists these files as staged (a row with its media id), and none of `notStaged`. */
async function stagedRows(page, names, notStaged = []) {
  const staged = (rows, name) => rows.some((r) => r.includes(name) && /\bm\d+\b/.test(r));
  await d.waitFor(
    async () => {
      const rows = await page.locator(REVIEW.sideBarRow).allInnerTexts();
      return names.every((n) => staged(rows, n)) && !notStaged.some((n) => staged(rows, n)) ? rows : undefined;
    },
    `the Staged Changes view to list ${names.join(', ')} as staged${notStaged.length > 0 ? ` and not ${notStaged.join(', ')}` : ''}`,
    30_000,
  );
}

describe("a command's writes as a change set, with the Workspace Tools agent", () => {
  test(
    "a command edits two files and writes package.json: the two land, package.json is staged and unchanged on disk; undo_save of the command's save_id puts the two back byte for byte",
    { timeout: SCENARIO_TIMEOUT },
    async (t) => {
      const script = {
        prompt: 'Say Hi instead of Hello, touch main.js, and add a postinstall script.',
        steps: [
          {
            tool: 'run_shell_command',
            input: { command: COMMAND },
            confirm: 'allowOnce',
            shows: ['sed -i s/Hello/Hi/ src/greet.js'],
            expect: `edited[\\s\\S]*changes applied: 2 files \\(\\+src/greet\\.js \\+src/main\\.js\\); undo_save \\{${SAVE_ID}\\}[\\s\\S]*staged for review, NOT on disk: package\\.json \\(m\\d+: a protected file`,
          },
          {
            tool: 'undo_save',
            input: { save_id: `{{step 0 /${SAVE_ID}/}}` },
            confirm: 'allowOnce',
            shows: ['src/greet.js', 'src/main.js'],
            expect: '^Undid save s\\d+',
          },
        ],
        final: 'Done.\n\n{{step 1}}',
      };
      await runScenario(t, {
        name: 'shell-change-set',
        script,
        setup: async ({ page }) => {
          await d.selectAgent(page, 'Workspace Tools');
          await showStagedView(page);
        },
        hooks: {
          0: {
            afterResult: async ({ page, wb }) => {
              assert.match(readFileSync(join(wb.workspaceDir, GREET), 'utf8'), /Hi/, 'greet.js was not applied');
              assert.match(
                readFileSync(join(wb.workspaceDir, MAIN), 'utf8'),
                /\/\/ touched/,
                'main.js was not applied',
              );
              assert.equal(existsSync(join(wb.workspaceDir, 'package.json')), false, 'package.json reached the disk');
              await stagedRows(page, ['package.json'], ['greet.js', 'main.js']);
            },
          },
        },
        check: async ({ wb }) => {
          assert.deepEqual(
            readFileSync(join(wb.workspaceDir, GREET)),
            fixture(GREET),
            'greet.js is not back byte for byte',
          );
          assert.deepEqual(
            readFileSync(join(wb.workspaceDir, MAIN)),
            fixture(MAIN),
            'main.js is not back byte for byte',
          );
          assert.equal(existsSync(join(wb.workspaceDir, 'package.json')), false, 'package.json reached the disk');
        },
      });
    },
  );

  test(
    'with workspaceTools.shell.review "all", the same command leaves the disk unchanged and the Staged Changes view lists all three',
    { timeout: SCENARIO_TIMEOUT },
    async (t) => {
      const script = {
        prompt: 'Say Hi instead of Hello, touch main.js, and add a postinstall script.',
        steps: [
          {
            tool: 'run_shell_command',
            input: { command: COMMAND },
            confirm: 'allowOnce',
            shows: ['sed -i s/Hello/Hi/ src/greet.js'],
            expect:
              'edited[\\s\\S]*staged for review, NOT on disk: [^\\n]*package\\.json[^\\n]*src/greet\\.js[^\\n]*src/main\\.js',
            reject: 'changes applied',
          },
        ],
        final: 'Staged for your review.',
      };
      await runScenario(t, {
        name: 'shell-review-all',
        script,
        settings: { 'workspaceTools.shell.review': 'all' },
        setup: async ({ page }) => {
          await d.selectAgent(page, 'Workspace Tools');
          await showStagedView(page);
        },
        check: async ({ wb }) => {
          assert.deepEqual(readFileSync(join(wb.workspaceDir, GREET)), fixture(GREET));
          assert.deepEqual(readFileSync(join(wb.workspaceDir, MAIN)), fixture(MAIN));
          assert.equal(existsSync(join(wb.workspaceDir, 'package.json')), false);
          await stagedRows(wb.page, ['package.json', 'greet.js', 'main.js']);
        },
      });
    },
  );
});
