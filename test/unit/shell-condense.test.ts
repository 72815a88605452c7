import { describe, test, type TestContext } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { condenseOutput } from '../../src/core/shell/condense.ts';
import type { ShellLine } from '../../src/core/shell/output.ts';
import { renderShellLine } from '../../src/core/shell/output.ts';
import { testDir } from './harness.ts';

/** The environment of a person's shell: without this runner's NODE_TEST_CONTEXT, which makes `node --test` a child reporter. */
const personEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT'));

/** Runs a real command without a terminal (as the sandbox does) and returns its lines as the shell's feed has them. */
function run(cwd: string, command: string, args: readonly string[]): ShellLine[] {
  const done = spawnSync(command, args, { cwd, env: personEnv(), encoding: 'utf8' });
  const lines = (text: string, stream: ShellLine['stream']): ShellLine[] =>
    text === ''
      ? []
      : text
          .split('\n')
          .slice(0, text.endsWith('\n') ? -1 : undefined)
          .map((line) => ({ stream, text: line }));
  return [...lines(done.stdout, 'out'), ...lines(done.stderr, 'err')];
}

/** A package with a passing test file, and (red) a failing one with a failing test inside a suite and a log line. */
function testPackage(t: TestContext, red: boolean): string {
  const dir = testDir(t, 'wt-condense-').path;
  mkdirSync(nodePath.join(dir, 'test'));
  writeFileSync(
    nodePath.join(dir, 'package.json'),
    JSON.stringify({ name: 'pkg', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }),
  );
  writeFileSync(
    nodePath.join(dir, 'test', 'ok.test.js'),
    "import { test } from 'node:test';\ntest('adds', () => {});\ntest('subtracts', () => {});\n",
  );
  if (red) {
    writeFileSync(
      nodePath.join(dir, 'test', 'bad.test.js'),
      [
        "import assert from 'node:assert/strict';",
        "import { describe, test } from 'node:test';",
        "describe('totals', () => {",
        "  test('sum starts at zero', () => { console.log('computing'); assert.equal(1 + 1 + 1, 2); });",
        "  test('keeps order', () => {});",
        '});',
        '',
      ].join('\n'),
    );
  }
  return dir;
}

const texts = (lines: readonly ShellLine[]): string[] => lines.map(renderShellLine);
const bytes = (lines: readonly ShellLine[]): number => Buffer.byteLength(texts(lines).join('\n'));

describe('condenseOutput: command output as a person reads it', () => {
  // TAP is what node --test prints without a terminal up to Node 22; spec from Node 23 on and in a terminal.
  test('a green node --test run in TAP is its summary: the passing tests counted, the totals on one line', (t) => {
    const raw = run(testPackage(t, false), process.execPath, ['--test', '--test-reporter=tap']);
    assert.ok(
      raw.some((l) => l.text === 'ok 1 - adds'),
      `a real TAP run: ${texts(raw).join('\n')}`,
    );
    const condensed = texts(condenseOutput(raw));
    assert.equal(condensed.length, 2, condensed.join('\n'));
    assert.equal(condensed[0], '# 2 passing tests not listed');
    assert.match(
      condensed[1]!,
      /^# tests 2, suites 0, pass 2, fail 0, cancelled 0, skipped 0, todo 0, duration_ms [\d.]+$/,
    );
    assert.ok(
      bytes(condenseOutput(raw)) * 2 < bytes(raw),
      `condensed ${bytes(condenseOutput(raw))} B of ${bytes(raw)} B`,
    );
  });

  test("a red node --test run in TAP keeps every failure: its test point, location, error, expected and actual values, the project's stack frame, what the test printed, and the summary; node's own frames and durations go", (t) => {
    const raw = run(testPackage(t, true), process.execPath, ['--test', '--test-reporter=tap']);
    const condensed = texts(condenseOutput(raw));
    const shown = condensed.join('\n');
    for (const failure of raw.filter((l) => /^\s*not ok /.test(l.text)))
      assert.ok(condensed.includes(failure.text), `${failure.text} is kept:\n${shown}`);
    assert.ok(
      raw.some((l) => /^\s+not ok 1 - sum starts at zero$/.test(l.text)),
      'the failing test is nested in its suite',
    );
    assert.match(shown, /^ {6}location: '.*bad\.test\.js:4:3'$/m, "the failure's location");
    assert.match(
      shown,
      /^ {6}error: \|-\n {8}Expected values to be strictly equal:\n {8}\n {8}3 !== 2/m,
      'the error, as printed',
    );
    assert.match(shown, /^ {6}expected: 2\n {6}actual: 3$/m, 'expected and actual');
    assert.match(
      shown,
      /^ {8}TestContext\.<anonymous> \(file:\/\/.*bad\.test\.js:4:\d+\)$/m,
      'the stack frame in the project',
    );
    assert.match(shown, /^# computing$/m, 'what the test printed');
    assert.match(
      shown,
      /^# 3 passing tests not listed\n# tests 4, suites 1, pass 3, fail 1, cancelled 0, skipped 0, todo 0, duration_ms [\d.]+$/m,
    );
    assert.doesNotMatch(
      shown,
      /node:internal|duration_ms: |^ok \d|# Subtest/m,
      "node's frames, durations, passing tests and subtest headers",
    );
    assert.ok(
      bytes(condenseOutput(raw)) * 2 < bytes(raw),
      `condensed ${bytes(condenseOutput(raw))} B of ${bytes(raw)} B`,
    );
  });

  test('a green node --test run in spec is its summary', (t) => {
    const raw = run(testPackage(t, false), process.execPath, ['--test', '--test-reporter=spec']);
    assert.ok(
      raw.some((l) => /^✔ adds \([\d.]+ms\)$/.test(l.text)),
      `a real spec run: ${texts(raw).join('\n')}`,
    );
    const condensed = texts(condenseOutput(raw));
    assert.equal(condensed.length, 2, condensed.join('\n'));
    assert.equal(condensed[0], 'ℹ 2 passing tests not listed');
    assert.match(
      condensed[1]!,
      /^ℹ tests 2, suites 0, pass 2, fail 0, cancelled 0, skipped 0, todo 0, duration_ms [\d.]+$/,
    );
  });

  test("a red node --test run in spec keeps the failed suite and test, the failure's location, error, values and project frame once, and the summary", (t) => {
    const raw = run(testPackage(t, true), process.execPath, ['--test', '--test-reporter=spec']);
    const condensed = texts(condenseOutput(raw));
    const shown = condensed.join('\n');
    for (const failure of raw.filter((l) => /^\s*(✖|▶) /.test(l.text)))
      assert.ok(condensed.includes(failure.text), `${failure.text} is kept:\n${shown}`);
    assert.match(shown, /^test at test\/bad\.test\.js:4:3$/m, "the failure's location");
    assert.match(
      shown,
      /^ {2}AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:\n {2}\n {2}3 !== 2$/m,
      'the error',
    );
    assert.match(
      shown,
      /^ {6}at TestContext\.<anonymous> \(file:\/\/.*bad\.test\.js:4:\d+\)\n {6}\{$/m,
      "the project's frame, and the brace of the error's properties",
    );
    assert.match(shown, /^ {4}actual: 3,\n {4}expected: 2,$/m, 'actual and expected');
    assert.match(shown, /^computing$/m, 'what the test printed');
    assert.match(
      shown,
      /^ℹ 3 passing tests not listed\nℹ tests 4, suites 1, pass 3, fail 1, cancelled 0, skipped 0, todo 0, duration_ms [\d.]+$/m,
    );
    assert.equal(condensed.filter((l) => l.includes('3 !== 2')).length, 1, "the failure's details once");
    assert.doesNotMatch(shown, /node:internal|<anonymous>\)|✔/, "node's frames and passing tests");
    assert.ok(
      bytes(condenseOutput(raw)) * 1.5 < bytes(raw),
      `condensed ${bytes(condenseOutput(raw))} B of ${bytes(raw)} B`,
    );
  });

  test("npm test keeps npm's own lines and its failure on stderr around the condensed run", (t) => {
    const raw = run(testPackage(t, true), 'npm', ['test']);
    const condensed = texts(condenseOutput(raw));
    assert.deepEqual(condensed.slice(0, 3), ['', '> pkg@1.0.0 test', '> node --test']);
    assert.ok(
      raw.filter((l) => l.stream === 'err').every((l) => condensed.includes(renderShellLine(l))),
      'every stderr line is kept',
    );
    assert.ok(
      condensed.some((l) => /^(#|ℹ) tests \d+, .*fail [1-9]/.test(l)),
      condensed.join('\n'),
    );
  });

  test('output that is not TAP (git status, git log) is left as it is', (t) => {
    const dir = testDir(t, 'wt-condense-git-').path;
    const git = (...args: string[]): ShellLine[] =>
      run(dir, 'git', ['-c', 'user.name=Pat', '-c', 'user.email=pat@example.com', ...args]);
    git('init', '-q');
    writeFileSync(nodePath.join(dir, 'a.txt'), 'a\n');
    git('add', '-A');
    git('commit', '-qm', 'first');
    writeFileSync(nodePath.join(dir, 'a.txt'), 'b\n');
    writeFileSync(nodePath.join(dir, 'new.txt'), 'n\n');
    for (const args of [['status'], ['log', '-3']]) {
      const raw = git(...args);
      assert.ok(raw.length > 3, `git ${args.join(' ')} printed: ${texts(raw).join('\n')}`);
      assert.deepEqual(condenseOutput(raw), raw, `git ${args.join(' ')}`);
    }
  });

  test('colour codes are stripped and a progress line that rewrote itself shows its last state', () => {
    const lines: ShellLine[] = [
      { stream: 'out', text: '\u001b[32m✔ built\u001b[39m in 2 s' },
      { stream: 'err', text: 'downloading 10%\rdownloading 55%\rdownloading 100%' },
      { stream: 'out', text: 'plain' },
    ];
    assert.deepEqual(condenseOutput(lines), [
      { stream: 'out', text: '✔ built in 2 s' },
      { stream: 'err', text: 'downloading 100%' },
      { stream: 'out', text: 'plain' },
    ]);
  });
});
