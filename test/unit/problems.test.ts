import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { isPaged } from '../../src/core/paging/paged.ts';
import { session, type TestSession } from './harness.ts';
import type { FileProblems, Problem, ProblemScope, ProblemsPort } from '../../src/core/problems/port.ts';
import type { Gate } from '../../src/core/ports.ts';
import type { GateCall } from '../../src/core/gate.ts';
import type { ProblemsOutput, ProblemsResult } from '../../src/core/tools/list_problems.ts';

/**
 * The host's language services as the tool sees them: what they report, by file address. (The
 * VS Code port over the real TypeScript service is tested in test/integration/problems.test.ts.)
 */
class ReportedProblems implements ProblemsPort {
  readonly opened: string[][] = [];
  private readonly reports: () => FileProblems[];
  constructor(reports: () => FileProblems[]) {
    this.reports = reports;
  }
  async collect(open: readonly ProblemScope[]): Promise<readonly FileProblems[]> {
    this.opened.push(open.map((s) => s.rel));
    return this.reports();
  }
}

const problem = (
  line: number,
  severity: Problem['severity'],
  message: string,
  extra: Partial<Problem> = {},
): Problem => ({
  severity,
  source: 'ts',
  code: '2322',
  startLine: line,
  startColumn: 5,
  endLine: line,
  endColumn: 9,
  message,
  ...extra,
});

const CANARY = 'CANARY-problem-4c1d';

function write(t: TestSession, rel: string, content = 'x\n'): void {
  const file = nodePath.join(t.root, rel);
  mkdirSync(nodePath.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

function personGate(secretAnswer: boolean): Gate & { calls: GateCall[] } {
  const calls: GateCall[] = [];
  return Object.assign(
    async (call: GateCall) => {
      calls.push(call);
      return { allow: call.secret ? secretAnswer : true, decidedBy: 'test' as const };
    },
    { calls },
  );
}

/** A workspace with problems in an ordinary file, a secret, a denied file and a file outside the workspace. */
function workspace(
  t: Parameters<typeof session>[0],
  secretAnswer = false,
): { s: TestSession; port: ReportedProblems; gate: ReturnType<typeof personGate> } {
  const gate = personGate(secretAnswer);
  let root = '';
  const port = new ReportedProblems(() => [
    {
      address: nodePath.join(root, 'src/b.ts'),
      problems: [
        problem(7, 'warning', 'unused'),
        problem(2, 'error', "Type 'string' is not assignable to type 'number'."),
      ],
    },
    { address: nodePath.join(root, 'src/a.ts'), problems: [problem(1, 'hint', 'could be const')] },
    {
      address: nodePath.join(root, '.env'),
      problems: [problem(1, 'warning', `Unknown word (${CANARY})`, { source: 'cSpell', code: undefined })],
    },
    {
      address: nodePath.join(root, 'private/keys.ts'),
      problems: [problem(1, 'error', `Cannot find name '${CANARY}'.`)],
    },
    { address: '/elsewhere/outside.ts', problems: [problem(1, 'error', `outside ${CANARY}`)] },
  ]);
  const s = session(t, { rules: [{ glob: 'private/**', read: 'deny' }], overrides: { gate, problems: port } });
  root = s.root;
  for (const f of ['src/a.ts', 'src/b.ts', '.env', 'private/keys.ts']) write(s, f);
  return { s, port, gate };
}

const whole = (output: ProblemsOutput): ProblemsResult =>
  isPaged(output) ? assert.fail('expected a result within one page') : output;

describe('list_problems', () => {
  it("attack: the workspace's problems leave out denied paths and files outside it, and a secret's messages (they quote it)", async (t) => {
    const { s, gate } = workspace(t);
    const outcome = await s.invoke('list_problems', {});
    assert.deepEqual(
      gate.calls.map((c) => [c.summary, c.secret]),
      [['list the problems of the workspace', false]],
    );
    assert.equal(
      outcome.text,
      [
        `2 problems (1 error, 1 warning) in 1 file in the workspace:`,
        'src/b.ts',
        "  2:5-9 error ts(2322): Type 'string' is not assignable to type 'number'.",
        '  7:5-9 warning ts(2322): unused',
        'Not shown: the problems of 1 protected file (.env), whose messages can quote it; name it in paths to have the user asked.',
        'Problems are what the language services report now (for the files they have looked at); a save reports its new problems itself.',
      ].join('\n'),
    );
    assert.doesNotMatch(JSON.stringify(outcome.result), new RegExp(CANARY));
    assert.doesNotMatch(outcome.text, /private/);
  });

  it('min_severity: "hint" includes every severity', async (t) => {
    const { s } = workspace(t);
    const result = whole((await s.invoke('list_problems', { min_severity: 'hint' })).result);
    assert.deepEqual(
      result.files.map((f) => [f.path, f.problems.map((p) => p.severity)]),
      [
        ['src/a.ts', ['hint']],
        ['src/b.ts', ['error', 'warning']],
      ],
    );
    const errors = whole((await s.invoke('list_problems', { min_severity: 'error' })).result);
    assert.deepEqual(
      errors.files.map((f) => [f.path, f.problems.length]),
      [['src/b.ts', 1]],
    );
  });

  it('paths: named files are opened for the language services first; a folder covers the files under it', async (t) => {
    const { s, port } = workspace(t);
    const result = whole(
      (await s.invoke('list_problems', { paths: ['src/b.ts', 'src'], min_severity: 'hint' })).result,
    );
    assert.deepEqual(port.opened, [['src/b.ts']]);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['src/a.ts', 'src/b.ts'],
    );
  });

  it('attack: a secret named in paths raises its own modal; declined, its problems never reach the model, and a denied path fails only its entry', async (t) => {
    const { s, gate } = workspace(t, false);
    const outcome = await s.invoke('list_problems', { paths: ['src/b.ts', '.env', 'private/keys.ts'] });
    assert.deepEqual(
      gate.calls.map((c) => [c.secret, c.targets.map((x) => x.display)]),
      [
        [false, ['src/b.ts']],
        [true, ['.env']],
      ],
    );
    const result = whole(outcome.result);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['src/b.ts'],
    );
    assert.deepEqual(
      result.failed.map((f) => [f.path, f.error.code]),
      [
        ['.env', 'E_SANDBOX_REFUSED'],
        ['private/keys.ts', 'E_SANDBOX_REFUSED'],
      ],
    );
    assert.match(
      outcome.text,
      /\nprivate\/keys\.ts: E_SANDBOX_REFUSED: list_problems on "private\/keys\.ts" was refused by the rule "private\/\*\*" \(read denied\)\./,
    );
    assert.doesNotMatch(outcome.text, new RegExp(CANARY));
  });

  it('a secret named in paths and allowed in its modal shows its problems', async (t) => {
    const { s } = workspace(t, true);
    const outcome = await s.invoke('list_problems', { paths: ['.env'] });
    assert.match(outcome.text, new RegExp(`\\.env\\n {2}1:5-9 warning cSpell: Unknown word \\(${CANARY}\\)`));
  });

  it('a missing path fails alone with a narrated error', async (t) => {
    const { s } = workspace(t);
    const result = whole((await s.invoke('list_problems', { paths: ['nope.ts', 'src/b.ts'] })).result);
    assert.deepEqual(result.failed, [
      {
        path: 'nope.ts',
        error: {
          code: 'E_SANDBOX_NOT_FOUND',
          message: '"nope.ts" does not exist. Check the path with find_files or list_directory.',
        },
      },
    ]);
    assert.equal(result.files.length, 1);
  });

  it('a result larger than one page goes to a result artifact that artifact_read pages', async (t) => {
    let root = '';
    const many = Array.from({ length: 3000 }, (_, i) =>
      problem(i + 1, 'error', `problem number ${i + 1} ${'y'.repeat(40)}`),
    );
    const port = new ReportedProblems(() => [{ address: nodePath.join(root, 'big.ts'), problems: many }]);
    const s = session(t, { overrides: { problems: port } });
    root = s.root;
    write(s, 'big.ts');
    const outcome = await s.invoke('list_problems', {});
    assert.ok(isPaged(outcome.result));
    assert.ok(Buffer.byteLength(outcome.text) <= 50 * 1024);
    assert.match(
      outcome.text,
      /^3000 problems \(3000 errors\) in 1 file in the workspace: more than one page, so the whole result is artifact (\S+) /,
    );
    const callId = outcome.result.artifact.callId;
    const last = await s.invoke('artifact_read', { callId, offset: -2 });
    assert.deepEqual(
      last.result.lines.map((l) => l.text),
      [
        `  3000:5-9 error ts(2322): problem number 3000 ${'y'.repeat(40)}`,
        'done complete (3000 problems (3000 errors) in 1 file)',
      ],
    );
  });

  it('a host without language services (the CLI) says so', async (t) => {
    const s = session(t);
    await assert.rejects(s.invoke('list_problems', {}), {
      code: 'E_SANDBOX_UNSUPPORTED',
      message:
        "list_problems needs language services (VS Code's Problems panel), and this host has none: the CLI runs no language servers. Check the code another way: ask the user to run the build, the type checker or the tests.",
    });
  });

  it('refuses bad arguments with narrated errors', async (t) => {
    const s = session(t);
    await assert.rejects(s.invoke('list_problems', { paths: [] }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /Argument "paths" is invalid/,
    });
    await assert.rejects(s.invoke('list_problems', { min_severity: 'fatal' }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /Argument "min_severity" is invalid.*one of "error", "warning", "information", "hint"/,
    });
  });
});
