// A day's work (issue 46), as a person has it in the real workbench with the scripted model: five
// everyday tasks on a small `node --test` package in a git repository, in VS Code's default Agent
// (Copilot's built-in tools) and in the Workspace Tools agent, each plan written as a capable model
// would write it with that tool set, plain commands included (`npm test`, `git add -A`, `git commit`):
//   1. the tests fail: run them, read the code, fix one line, run them again and commit;
//   2. rename a module and update its 3 importers, run the tests, commit;
//   3. add a function with a new test file, run the tests;
//   4. delete a dead file and its one import, run the tests;
//   5. "what does the config loader do and where is it used?" (search, read 3 files), then `cat .env`.
// Printed for each agent: calls, bytes to the model, clicks (and which), time, whether every change
// was reviewed before it reached the disk, and whether `.env` reached the model. Asserted (the
// issue's "Done when"): ours ≤ the default Agent's calls, ≤ 1.2× its bytes, ≤ 8 clicks, every change
// reviewed before disk, `.env` kept out, all five outcomes right on disk in both.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as d from './driver.mjs';
import { makeDayFixture } from './day-fixture.mjs';
import { CANARY, MEDIA_ID, SCENARIO_TIMEOUT, runScenario } from './scenario.mjs';

const PROMPT =
  'The tests fail: fix and commit. Then rename src/util.js to src/strings.js and commit; add average() with its own test file; remove the dead src/legacy code; and tell me what the config loader does and where it is used.';

/** The `i`th id of a stage_file result with changes. */
const nthId = (step, i) => `{{step ${step} /"media_ids":\\[(?:"m\\d+",){${i}}"(m\\d+)"/}}`;

const FIX = { find: 'total + value, 1)', replace: 'total + value, 0)' };
const AVERAGE_FIND = 'total + value, 0);\n}\n';
const AVERAGE = `${AVERAGE_FIND}\nexport function average(values) {\n  return values.length === 0 ? 0 : sum(values) / values.length;\n}\n`;
const AVERAGE_TEST =
  "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { average } from '../src/sum.js';\n\ntest('average of 1, 2, 3 is 2', () => {\n  assert.equal(average([1, 2, 3]), 2);\n});\n\ntest('average of nothing is 0', () => {\n  assert.equal(average([]), 0);\n});\n";
const IMPORTERS = [
  ['src/report.js', "'./util.js'", "'./strings.js'"],
  ['src/cli.js', "'./util.js'", "'./strings.js'"],
  ['test/util.test.js', "'../src/util.js'", "'../src/strings.js'"],
];
const LEGACY_IMPORT = "export { legacyTotal } from './legacy/total.js';\n";
const COMMIT_FIX = 'npm test && git add -A && git commit -qm "Fix sum: start from 0"';
const COMMIT_RENAME = 'npm test && git add -A && git commit -qm "Rename util.js to strings.js"';
const LOADER_FILES = ['src/config.js', 'src/report.js', 'src/cli.js'];

/** The Workspace Tools agent's plan: our tools only; every change staged, then saved after one look. */
const OURS = {
  prompt: PROMPT,
  steps: [
    {
      task: 1,
      tool: 'run_shell_command',
      input: { command: 'npm test' },
      confirm: 'allowSession',
      shows: ['npm test'],
      expect: 'not ok[\\s\\S]*exit code 1',
    },
    {
      task: 1,
      tool: 'open_file',
      input: { path: 'src/sum.js', offset: 1, limit: 200 },
      confirm: 'allowSession',
      shows: ['src/sum.js'],
      expect: 'total \\+ value, 1\\)',
    },
    {
      task: 1,
      tool: 'stage_file',
      input: { path: 'src/sum.js', patch: FIX },
      confirm: 'allowSession',
      shows: ['src/sum.js'],
      expect: MEDIA_ID,
    },
    {
      task: 1,
      tool: 'save_media',
      input: { media_id: `{{step 2 /${MEDIA_ID}/}}` },
      confirm: 'save',
      shows: ['src/sum.js'],
      expect: '"save_id"',
    },
    { task: 1, tool: 'run_shell_command', input: { command: COMMIT_FIX }, expect: 'exit code 0' },
    {
      task: 2,
      tool: 'stage_file',
      input: {
        changes: [
          { path: 'src/util.js', action: 'move', to: 'src/strings.js' },
          ...IMPORTERS.map(([path, find, replace]) => ({ path, patch: { find, replace } })),
        ],
      },
      expect: '"media_ids"',
    },
    {
      task: 2,
      tool: 'save_media',
      input: { media_ids: [0, 1, 2, 3].map((i) => nthId(5, i)) },
      confirm: 'save',
      shows: ['src/strings.js', ...IMPORTERS.map(([path]) => path)],
      expect: '"save_id"',
    },
    { task: 2, tool: 'run_shell_command', input: { command: COMMIT_RENAME }, expect: 'exit code 0' },
    {
      task: 3,
      tool: 'stage_file',
      input: {
        changes: [
          { path: 'src/sum.js', patch: { find: AVERAGE_FIND, replace: AVERAGE } },
          { path: 'test/average.test.js', content: AVERAGE_TEST },
        ],
      },
      expect: '"media_ids"',
    },
    {
      task: 3,
      tool: 'save_media',
      input: { media_ids: [0, 1].map((i) => nthId(8, i)) },
      confirm: 'save',
      shows: ['src/sum.js', 'test/average.test.js'],
      expect: '"save_id"',
    },
    { task: 3, tool: 'run_shell_command', input: { command: 'npm test' }, expect: 'exit code 0' },
    {
      task: 4,
      tool: 'stage_file',
      input: {
        changes: [
          { path: 'src/legacy/total.js', action: 'delete' },
          { path: 'src/index.js', patch: { find: LEGACY_IMPORT, replace: '' } },
        ],
      },
      expect: '"media_ids"',
    },
    {
      task: 4,
      tool: 'save_media',
      input: { media_ids: [0, 1].map((i) => nthId(11, i)) },
      confirm: 'save',
      shows: ['src/legacy/total.js', 'src/index.js'],
      expect: '"save_id"',
    },
    { task: 4, tool: 'run_shell_command', input: { command: 'npm test' }, expect: 'exit code 0' },
    {
      task: 5,
      tool: 'search_files',
      input: { pattern: 'loadConfig' },
      confirm: 'allowSession',
      shows: ['"loadConfig"'],
      expect: 'src/config\\.js',
    },
    { task: 5, tool: 'open_file', input: { files: LOADER_FILES.map((path) => ({ path })) }, expect: 'DEFAULTS' },
    { task: 5, tool: 'run_shell_command', input: { command: 'cat .env' }, expect: 'Permission denied', reject: CANARY },
  ],
  final:
    'Fixed and committed, renamed and committed, average() added with its test, the legacy code removed. loadConfig reads config.json over defaults; report.js and cli.js use it.',
};

/** VS Code's default Agent's plan: Copilot's built-in tools, its terminal for commands; it asks what it asks. */
const terminal = (command, goal) => ({
  tool: 'run_in_terminal',
  input: { command, explanation: goal, goal, mode: 'sync' },
  confirm: 'mainIfAsked',
});
const file = (path) => `{{workspaceFolder}}/${path}`;
const DEFAULT_AGENT = {
  prompt: PROMPT,
  steps: [
    { task: 1, ...terminal('npm test', 'Run the tests'), expect: 'fail' },
    {
      task: 1,
      tool: 'read_file',
      input: { filePath: file('src/sum.js'), startLine: 1, endLine: 200 },
      expect: 'total \\+ value, 1\\)',
    },
    {
      task: 1,
      tool: 'replace_string_in_file',
      input: { filePath: file('src/sum.js'), oldString: FIX.find, newString: FIX.replace },
    },
    { task: 1, ...terminal(COMMIT_FIX, 'Test and commit the fix') },
    { task: 2, ...terminal('git mv src/util.js src/strings.js', 'Rename the module') },
    // multi_replace_string_in_file is not offered to this model: one replace a file.
    ...IMPORTERS.map(([path, oldString, newString]) => ({
      task: 2,
      tool: 'replace_string_in_file',
      input: { filePath: file(path), oldString, newString },
    })),
    { task: 2, ...terminal(COMMIT_RENAME, 'Test and commit the rename') },
    {
      task: 3,
      tool: 'replace_string_in_file',
      input: { filePath: file('src/sum.js'), oldString: AVERAGE_FIND, newString: AVERAGE },
    },
    { task: 3, tool: 'create_file', input: { filePath: file('test/average.test.js'), content: AVERAGE_TEST } },
    { task: 3, ...terminal('npm test', 'Run the tests') },
    { task: 4, ...terminal('rm -r src/legacy', 'Delete the dead code') },
    {
      task: 4,
      tool: 'replace_string_in_file',
      input: { filePath: file('src/index.js'), oldString: LEGACY_IMPORT, newString: '' },
    },
    { task: 4, ...terminal('npm test', 'Run the tests') },
    { task: 5, tool: 'grep_search', input: { query: 'loadConfig', isRegexp: false } },
    ...LOADER_FILES.map((path) => ({
      task: 5,
      tool: 'read_file',
      input: { filePath: file(path), startLine: 1, endLine: 200 },
    })),
    { task: 5, ...terminal('cat .env', 'Read the settings') },
  ],
  final: OURS.final,
};

/** The five outcomes on disk: the fix, the rename, the new function and test, the removal, both commits; and the tests pass. */
function assertOutcomes(root, who) {
  const read = (path) => readFileSync(join(root, path), 'utf8');
  assert.match(
    read('src/sum.js'),
    /total \+ value, 0\)[\s\S]*export function average/,
    `${who}: src/sum.js is fixed and has average()`,
  );
  assert.equal(existsSync(join(root, 'src/util.js')), false, `${who}: src/util.js is gone`);
  assert.match(read('src/strings.js'), /export function slug/, `${who}: src/strings.js holds slug()`);
  for (const [path, , replace] of IMPORTERS)
    assert.ok(read(path).includes(replace), `${who}: ${path} imports ${replace}`);
  assert.equal(read('test/average.test.js'), AVERAGE_TEST, `${who}: the new test file`);
  assert.equal(existsSync(join(root, 'src/legacy')), false, `${who}: src/legacy/ is gone, folder and all`);
  assert.ok(!read('src/index.js').includes('legacy'), `${who}: src/index.js no longer imports the legacy code`);
  const git = (...args) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' });
  assert.deepEqual(
    git('log', '--format=%s').trim().split('\n'),
    ['Rename util.js to strings.js', 'Fix sum: start from 0', 'Report package'],
    `${who}: the two commits`,
  );
  assert.deepEqual(
    git('status', '--porcelain').split('\n').filter(Boolean).sort(),
    [' D src/legacy/total.js', ' M src/index.js', ' M src/sum.js', '?? test/average.test.js'],
    `${who}: what is left uncommitted is tasks 3 and 4`,
  );
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT'));
  execFileSync('node', ['--test'], { cwd: root, env, stdio: 'pipe' });
}

/** What the person and the model had of one agent's day. */
function figures(ctx, script) {
  const results = ctx
    .events()
    .filter((e) => e.event === 'request' && e.results?.length >= script.steps.length)
    .at(-1).results;
  const final = ctx.events().find((e) => e.event === 'final');
  const workTree = (files) => files.filter((f) => !f.startsWith('.git/'));
  const edits = ctx.steps.filter((s) => workTree(s.files).length > 0);
  const editTasks = [1, 2, 3, 4];
  const reviewedTasks = editTasks.filter((task) =>
    edits.filter((s) => script.steps[s.index].task === task).every((s) => s.confirm === 'save'),
  );
  // Where the secret reached the model: the request, and the part that carried it.
  const envWhere = ctx
    .received()
    .flatMap((r, i) =>
      r.messages.flatMap((m) =>
        m.parts
          .filter((p) => JSON.stringify(p).includes(CANARY))
          .map(
            (p) => `request ${i} ${m.role} ${p.type}${p.name ? ` ${p.name}` : ''}: ${JSON.stringify(p).slice(0, 160)}`,
          ),
      ),
    );
  return {
    calls: results.length,
    bytes: results.reduce((n, r) => n + Buffer.byteLength(r.text), 0),
    perCall: results.map((r, i) => `${script.steps[i].tool} ${Buffer.byteLength(r.text)}`),
    clicks: ctx.clicks.reduce((n, c) => n + c.count, 0),
    clicked: ctx.clicks.map((c) => `${c.tool}: ${c.what}${c.count > 1 ? ` (${c.count} clicks)` : ''}`),
    seconds: Math.round((final.time - ctx.started) / 1000),
    reviewed: `${reviewedTasks.length} of ${editTasks.length} edit tasks`,
    allReviewed: reviewedTasks.length === editTasks.length,
    unreviewed: edits.filter((s) => s.confirm !== 'save').map((s) => `${s.tool}: ${workTree(s.files).join(', ')}`),
    envReached: envWhere.length > 0,
    envWhere: [...new Set(envWhere)].slice(0, 3),
  };
}

const line = (who, f) =>
  `[day] ${who}: ${f.calls} calls, ${f.bytes} bytes to the model, ${f.clicks} clicks (${f.clicked.join('; ') || 'none'}), ${f.seconds} s, changes reviewed before disk: ${f.reviewed}${f.unreviewed.length ? ` (unreviewed: ${f.unreviewed.join(' | ')})` : ''}, .env ${f.envReached ? `reached the model (${f.envWhere.join(' | ')})` : 'kept out'}\n[day]   bytes per call: ${f.perCall.join(', ')}`;

describe("a day's work in both agents", () => {
  test(
    'five everyday tasks on a node --test package in a git repository: the Workspace Tools agent (every change reviewed) takes no more calls than the default Agent, at most 1.2× its bytes and 8 clicks, keeps .env out, and both leave the same five outcomes on disk',
    { timeout: 3 * SCENARIO_TIMEOUT },
    async (t) => {
      const fixtureRoot = mkdtempSync(join(tmpdir(), 'wt-day-'));
      // The workbench (and so every terminal and sandboxed command) inherits this runner's
      // NODE_TEST_CONTEXT, which turns `node --test` into a child reporter: a person's shell has none.
      const testContext = process.env.NODE_TEST_CONTEXT;
      delete process.env.NODE_TEST_CONTEXT;
      try {
        const fixture = join(fixtureRoot, 'day');
        makeDayFixture(fixture);
        const day = {};
        // WT_DAY_ONLY=ours|default: one agent's day alone, nothing compared (while working on one side).
        const only = process.env.WT_DAY_ONLY;
        const agents = [
          ['default Agent', DEFAULT_AGENT, undefined],
          ['Workspace Tools agent', OURS, 'Workspace Tools'],
        ].filter(([, , agent]) => !only || (only === 'ours') === (agent !== undefined));
        for (const [who, script, agent] of agents) {
          await runScenario(t, {
            name: `day-${agent ? 'ours' : 'default'}`,
            script,
            workspace: fixture,
            setup: async ({ page }) => {
              if (agent) await d.selectAgent(page, agent);
            },
            check: async (ctx) => {
              day[who] = figures(ctx, script);
              const text = line(who, day[who]);
              console.log(text);
              t.diagnostic(text);
              assertOutcomes(ctx.wb.workspaceDir, who);
            },
          });
        }
        if (only) return;
        const ours = day['Workspace Tools agent'];
        const theirs = day['default Agent'];
        const summary = `[day] ours/default: calls ${ours.calls}/${theirs.calls}, bytes ${ours.bytes}/${theirs.bytes} (${(ours.bytes / theirs.bytes).toFixed(2)}×), clicks ${ours.clicks}/${theirs.clicks}`;
        console.log(summary);
        t.diagnostic(summary);
        assert.ok(ours.calls <= theirs.calls, `ours takes more calls than the default Agent: ${summary}`);
        assert.ok(ours.bytes <= 1.2 * theirs.bytes, `ours sends more than 1.2× the default Agent's bytes: ${summary}`);
        assert.ok(ours.clicks <= 8, `ours takes more than 8 clicks: ${ours.clicked.join('; ')}`);
        assert.ok(ours.allReviewed, `a change reached the disk unreviewed: ${ours.unreviewed.join(' | ')}`);
        assert.equal(ours.envReached, false, '.env reached the model');
      } finally {
        if (testContext !== undefined) process.env.NODE_TEST_CONTEXT = testContext;
        rmSync(fixtureRoot, { recursive: true, force: true });
      }
    },
  );
});
