// Staged deletes, moves and change sets in agent mode (issue 24), with the scripted model and the
// person's clicks in a real workbench: one save_media for a rename-with-edit and a delete, its one
// confirmation listing both with their diffs, Undo Save of the set, a set that conflicts, protected
// and secret files on either side of a move or as a delete, and five one-line edits side by side
// with Copilot's replace_string_in_file. See scenario.mjs for how a script runs.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DIALOG_LABELS } from '../host/selectors.mjs';
import * as d from './driver.mjs';
import {
  MEDIA_ID,
  SCENARIO_TIMEOUT,
  assertCanaryNeverReached,
  changedFiles,
  runScenario,
  snapshot,
} from './scenario.mjs';

const A_TS = 'export const a = 1;\r\nexport function double(x) {\r\n  return x * 2;\r\n}\r\n';
const B_TS = A_TS.replace('const a = 1', 'const b = 1');
// Not text: a delete keeps whatever bytes the file held.
const OLD_TXT = Buffer.from([0x6f, 0x6c, 0x64, 0x0a, 0xff, 0x00, 0x0a]);
const SAVE_ID = '"save_id":"(s\\d+)"';

describe('change sets in agent mode with the scripted model', () => {
  test(
    'a rename of src/a.ts to src/b.ts with an edit and a delete of old.txt, saved with one save_media after one confirmation listing both with their diffs; Undo Save restores both byte for byte; a set whose second file conflicts writes nothing',
    { timeout: SCENARIO_TIMEOUT },
    async (t) => {
      const script = {
        prompt: 'Rename a.ts to b.ts (and its constant), and delete old.txt.',
        steps: [
          {
            tool: 'stage_file',
            input: {
              path: 'src/a.ts',
              action: 'move',
              to: 'src/b.ts',
              patch: { find: 'const a = 1', replace: 'const b = 1' },
            },
            confirm: 'allowOnce',
            shows: ['src/a.ts', 'src/b.ts'],
            expect: `^\\{${MEDIA_ID},"path":"src/b\\.ts","action":"move","from":"src/a\\.ts","added":1,"removed":1\\}`,
          },
          {
            tool: 'stage_file',
            input: { path: 'old.txt', action: 'delete' },
            confirm: 'allowOnce',
            shows: ['old.txt'],
            expect: `^\\{${MEDIA_ID},"path":"old\\.txt","action":"delete"`,
          },
          {
            tool: 'save_media',
            input: { media_ids: [`{{step 0 /${MEDIA_ID}/}}`, `{{step 1 /${MEDIA_ID}/}}`] },
            confirm: 'save',
            shows: ['Save 2 files as one set?', 'move src/a.ts → src/b.ts  +1 −1', 'delete old.txt  +0 −0'],
            expect: `^\\{${SAVE_ID}\\}\\nSaved: move src/a\\.ts → src/b\\.ts \\+1 −1; delete old\\.txt \\+0 −0\\.\\nNo new errors or warnings were reported for the saved file\\.$`,
          },
          {
            tool: 'undo_save',
            input: { save_id: `{{step 2 /${SAVE_ID}/}}` },
            confirm: 'allowOnce',
            shows: ['src/b.ts', 'old.txt'],
            expect: '^Undid save s\\d+: "src/b\\.ts", "src/a\\.ts", "old\\.txt" are back as before, byte for byte\\.$',
          },
          // The second file of this set changes on disk before the save: nothing of the set is written.
          {
            tool: 'stage_file',
            input: { path: 'src/greet.js', patch: { find: 'Hello', replace: 'Hi' } },
            confirm: 'allowOnce',
            shows: ['src/greet.js'],
            expect: MEDIA_ID,
          },
          {
            tool: 'stage_file',
            input: { path: 'src/main.js', content: '// replaced\n' },
            confirm: 'allowOnce',
            shows: ['src/main.js'],
            expect: MEDIA_ID,
          },
          {
            tool: 'save_media',
            input: { media_ids: [`{{step 4 /${MEDIA_ID}/}}`, `{{step 5 /${MEDIA_ID}/}}`] },
            confirm: 'save',
            shows: ['src/greet.js', 'src/main.js'],
            expect:
              '^E_SANDBOX_CONFLICT: "src/main\\.js" changed on disk after m\\d+ was staged\\. Nothing in the set was written\\.',
            reject: 'save_id',
          },
        ],
        final: 'Renamed, deleted, undone; the conflicting set was not written.\n\n{{step 6}}',
      };
      let beforeSet;
      const MAIN_BY_PERSON = '// the person edited this meanwhile\n';
      await runScenario(t, {
        name: 'change-set',
        script,
        setup: ({ wb }) => {
          writeFileSync(join(wb.workspaceDir, 'src/a.ts'), A_TS);
          writeFileSync(join(wb.workspaceDir, 'old.txt'), OLD_TXT);
        },
        hooks: {
          2: {
            beforeAnswer: async ({ page, wb, screenshot }) => {
              beforeSet = snapshot(wb.workspaceDir);
              const pending = await d.pendingToolConfirmation(page);
              // One look: the set open as one multi-file diff; one confirmation listing each file, in the order saved.
              await d.waitFor(
                async () =>
                  (await d.editorTabLabels(page)).some((l) =>
                    /^Save set: disk ↔ staged m\d+, m\d+ \(2 files\)$/.test(l),
                  ),
                "the set's multi-file diff tab",
                30_000,
              );
              assert.ok(
                pending.message.indexOf('src/b.ts') < pending.message.indexOf('old.txt'),
                'the move is listed before the delete',
              );
              await screenshot('step2-set-diff');
            },
            afterResult: ({ wb }) => {
              const root = wb.workspaceDir;
              assert.equal(existsSync(join(root, 'src/a.ts')), false, 'src/a.ts is gone');
              assert.deepEqual(
                readFileSync(join(root, 'src/b.ts')),
                Buffer.from(B_TS),
                'src/b.ts holds the moved file with its edit, byte for byte',
              );
              assert.equal(existsSync(join(root, 'old.txt')), false, 'old.txt is deleted');
              assert.deepEqual(
                changedFiles(beforeSet, snapshot(root)),
                ['old.txt', 'src/a.ts', 'src/b.ts'],
                'the save changed exactly the set',
              );
            },
          },
          3: {
            afterResult: ({ wb }) => {
              assert.deepEqual(
                changedFiles(beforeSet, snapshot(wb.workspaceDir)),
                [],
                'Undo Save put every file back as before the save',
              );
              assert.deepEqual(readFileSync(join(wb.workspaceDir, 'src/a.ts')), Buffer.from(A_TS));
              assert.deepEqual(readFileSync(join(wb.workspaceDir, 'old.txt')), OLD_TXT);
            },
          },
          5: {
            afterResult: ({ wb }) => {
              writeFileSync(join(wb.workspaceDir, 'src/main.js'), MAIN_BY_PERSON);
            },
          },
        },
        check: async (ctx) => {
          // After the undo, only the person's own edit of src/main.js differs from the start.
          assert.deepEqual(changedFiles(ctx.initialDisk, ctx.disk()), ['src/main.js']);
          assert.equal(readFileSync(join(ctx.wb.workspaceDir, 'src/main.js'), 'utf8'), MAIN_BY_PERSON);
          await assertCanaryNeverReached(ctx);
        },
      });
    },
  );

  const SETTINGS = '.vscode/settings.json';
  test(
    'attack: a move onto .vscode/settings.json, a move of .env and a delete of a protected Makefile each raise our modal; declining changes nothing',
    { timeout: SCENARIO_TIMEOUT },
    async (t) => {
      const script = {
        prompt: 'Tidy up the configuration files.',
        steps: [
          // Staging a move changes nothing: the save is what writes the protected file, and it asks.
          {
            tool: 'stage_file',
            input: { path: 'data/config.json', action: 'move', to: SETTINGS, replace: true },
            confirm: 'allowOnce',
            shows: ['data/config.json', SETTINGS],
            dialog: {
              message: `Allow stage_file to stage a change to the protected file "${SETTINGS}"?`,
              click: 'Allow Once',
            },
            expect: MEDIA_ID,
          },
          {
            tool: 'save_media',
            input: { media_id: `{{step 0 /${MEDIA_ID}/}}` },
            confirm: 'save',
            shows: [SETTINGS],
            dialog: {
              message: `Allow save_media to write the protected file "${SETTINGS}"?`,
              click: DIALOG_LABELS.cancel,
            },
            expect: `^E_SANDBOX_REFUSED: The user declined save_media on the protected file "\\.vscode/settings\\.json"`,
            reject: 'save_id',
          },
          // Moving a secret reads it: asked at once.
          {
            tool: 'stage_file',
            input: { path: '.env', action: 'move', to: 'env.txt' },
            confirm: 'allowOnce',
            shows: ['.env', 'env.txt'],
            dialog: {
              message: 'Allow stage_file to stage a change to the protected file ".env"?',
              click: DIALOG_LABELS.cancel,
            },
            expect: '^E_SANDBOX_REFUSED',
            reject: 'media_id',
          },
          {
            tool: 'stage_file',
            input: { path: 'Makefile', action: 'delete' },
            confirm: 'allowOnce',
            shows: ['Makefile'],
            dialog: {
              message: 'Allow stage_file to stage a change to the protected file "Makefile"?',
              click: 'Allow Once',
            },
            expect: MEDIA_ID,
          },
          {
            tool: 'save_media',
            input: { media_id: `{{step 3 /${MEDIA_ID}/}}` },
            confirm: 'save',
            shows: ['delete Makefile'],
            dialog: {
              message: 'Allow save_media to write the protected file "Makefile"?',
              click: DIALOG_LABELS.cancel,
            },
            expect: '^E_SANDBOX_REFUSED: The user declined save_media on the protected file "Makefile"',
            reject: 'save_id',
          },
        ],
        final: 'Nothing was changed.\n\n{{step 4}}',
      };
      await runScenario(t, {
        name: 'change-set-protected',
        script,
        setup: ({ wb }) => {
          mkdirSync(join(wb.workspaceDir, '.vscode'), { recursive: true });
          writeFileSync(join(wb.workspaceDir, SETTINGS), '{}\n');
          writeFileSync(join(wb.workspaceDir, 'Makefile'), 'all:\n\techo ok\n');
        },
        check: async (ctx) => {
          assert.deepEqual(changedFiles(ctx.initialDisk, ctx.disk()), [], 'a declined move or delete changed the disk');
          assert.equal(existsSync(join(ctx.wb.workspaceDir, 'env.txt')), false);
          await assertCanaryNeverReached(ctx);
        },
      });
    },
  );

  test(
    "five one-line edits: two calls (one stage_file with changes, one save_media), one look (the set as one multi-file diff) and one click (Save, the confirmation fitting without scrolling), and the bytes the model gets at most twice Copilot's replace_string_in_file on the same five files",
    { timeout: SCENARIO_TIMEOUT },
    async (t) => {
      const FILES = [1, 2, 3, 4, 5].map((n) => `src/log${n}.js`);
      const moduleText = (n) =>
        `import { write } from './sink.js';\n\nconst level = 'debug';\n\nexport function log${n}(message) {\n  write(level, message);\n}\n`;
      const stage = {
        tool: 'stage_file',
        input: {
          changes: FILES.map((path) => ({
            path,
            patch: { find: "const level = 'debug';", replace: "const level = 'info';" },
          })),
        },
        // Staging writes nothing: allowed for the session once; the save is what is reviewed.
        confirm: 'allowSession',
        shows: FILES,
        expect: '^\\{"media_ids":\\["m\\d+","m\\d+","m\\d+","m\\d+","m\\d+"\\]\\}',
      };
      const ids = FILES.map((_, i) => `{{step 0 /"media_ids":\\[(?:"m\\d+",){${i}}"(m\\d+)"/}}`);
      const save = {
        tool: 'save_media',
        input: { media_ids: ids },
        confirm: 'save',
        shows: ['Save 5 files as one set?', ...FILES],
        expect: `^\\{${SAVE_ID}\\}`,
      };
      // Copilot's own edit tool on the same five files in the same run: the same one-line change, back.
      const copilot = FILES.map((path) => ({
        tool: 'replace_string_in_file',
        input: {
          filePath: `{{workspaceFolder}}/${path}`,
          oldString: "const level = 'info';",
          newString: "const level = 'debug';",
        },
      }));
      const script = {
        prompt: 'Log at info level in all five loggers.',
        steps: [stage, save, ...copilot],
        final: 'Done.',
      };
      await runScenario(t, {
        name: 'five-files',
        script,
        setup: ({ wb }) => {
          FILES.forEach((path, i) => writeFileSync(join(wb.workspaceDir, path), moduleText(i + 1)));
        },
        hooks: {
          1: {
            beforeAnswer: async ({ page, screenshot }) => {
              await d.waitFor(
                async () =>
                  (await d.editorTabLabels(page)).some((l) =>
                    /^Save set: disk ↔ staged m\d+(, m\d+){4} \(5 files\)$/.test(l),
                  ),
                "the set's multi-file diff tab",
                30_000,
              );
              const pending = await d.pendingToolConfirmation(page);
              // Everything the person reads fits: no line of the message lies outside what its box shows (nothing to scroll to).
              const hidden = await pending.locator.evaluate((part) => {
                const box = part.querySelector('.chat-confirmation-widget-message-scrollable')?.getBoundingClientRect();
                if (!box) return ['no message box'];
                const texts = [
                  ...part.querySelectorAll('.chat-confirmation-widget-message li, .chat-confirmation-widget-message p'),
                ];
                return texts
                  .filter((el) => {
                    const r = el.getBoundingClientRect();
                    return r.top < box.top - 1 || r.bottom > box.bottom + 1;
                  })
                  .map((el) => el.textContent);
              });
              assert.deepEqual(hidden, [], 'lines of the confirmation of a set of five are scrolled out of sight');
              await screenshot('step1-set-of-five');
            },
            afterResult: ({ wb }) => {
              FILES.forEach((path, i) =>
                assert.equal(
                  readFileSync(join(wb.workspaceDir, path), 'utf8'),
                  moduleText(i + 1).replace("'debug'", "'info'"),
                  `${path} after the save`,
                ),
              );
            },
          },
        },
        check: async (ctx) => {
          const results = ctx
            .events()
            .filter((e) => e.event === 'request' && e.results?.length >= 7)
            .at(-1)
            .results.map((r) => Buffer.byteLength(r.text));
          const oursBytes = results.slice(0, 2).reduce((a, b) => a + b, 0);
          const copilotBytes = results.slice(2, 7).reduce((a, b) => a + b, 0);
          const line = `[five-files] bytes the model received for the same one-line change in five files: ours ${oursBytes} (2 calls: stage_file with changes ${results[0]}, save_media ${results[1]}; 2 confirmations, 1 of them the save) vs Copilot replace_string_in_file ${copilotBytes} (5 calls: ${results.slice(2, 7).join(' + ')}); ratio ${(oursBytes / copilotBytes).toFixed(2)}`;
          console.log(line);
          t.diagnostic(line);
          assert.ok(oursBytes <= 2 * copilotBytes, line);
          await assertCanaryNeverReached(ctx);
        },
      });
    },
  );
});
