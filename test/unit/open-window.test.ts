import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session, type TestSession } from './harness.ts';
import { isOpenedFiles, oneFile } from '../../src/core/tools/open_file.ts';
import type { OpenedFiles } from '../../src/core/artifacts/batch.ts';
import type { Gate } from '../../src/core/ports.ts';
import type { GateCall } from '../../src/core/gate.ts';
import type { PageBudget } from '../../src/core/paging/budget.ts';

/** open_file of one path: its text and its one file's result. */
async function openOne(
  t: TestSession,
  input: Record<string, unknown>,
): Promise<{ text: string; result: ReturnType<typeof oneFile> }> {
  const outcome = await t.invoke('open_file', input);
  return { text: outcome.text, result: oneFile(outcome.result) };
}

function write(t: TestSession, rel: string, content: string | Uint8Array): void {
  const file = nodePath.join(t.root, rel);
  mkdirSync(nodePath.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** The text with the run-specific callId replaced by "ID". */
const pin = (text: string, callId: string): string => text.split(callId).join('ID');

describe('a window on open', () => {
  it('open_file with offset and limit returns the handle and that page in one call, the lines as they are under one header line', async (t) => {
    const s = session(t);
    write(s, 'src/app.ts', numbered(120));
    const outcome = await openOne(s, { path: 'src/app.ts', offset: 40, limit: 3 });
    const result = outcome.result;
    assert.ok('callId' in result && result.window && 'page' in result.window);
    assert.deepEqual(
      result.window.page.lines.map((l) => [l.n, l.text]),
      [
        [40, 'line 40'],
        [41, 'line 41'],
        [42, 'line 42'],
      ],
    );
    assert.equal(result.window.page.nextOffset, 43);
    const lines = pin(outcome.text, result.callId).split('\n');
    // One header line: the range, the total and the handle (encoding and line ends only when
    // unusual); the lines unnumbered (the header's first number counts them); no footer, since the
    // page holds what was asked and the header says how many lines there are.
    assert.deepEqual(lines, ['lines 40-42 of 120, artifact ID', 'line 40', 'line 41', 'line 42']);
    assert.equal(s.gate.calls.length, 1, 'one gated call opens and reads');
    assert.equal(s.gate.calls[0]!.summary, 'open src/app.ts and read lines 40-42');
    // The handle stays the point: artifact_read goes on from it.
    const next = await s.invoke('artifact_read', { callId: result.callId, offset: 43, limit: 1 });
    assert.equal(next.result.lines[0]!.text, 'line 43');
  });

  it('reads the page exactly as artifact_read does: negative offsets from the end, limit alone from line 1', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(10));
    const tail = (await openOne(s, { path: 'a.txt', offset: -3 })).result;
    assert.ok(tail.window && 'page' in tail.window);
    const read = (await s.invoke('artifact_read', { callId: tail.callId, offset: -3 })).result;
    assert.deepEqual(tail.window.page, read);
    assert.deepEqual(
      tail.window.page.lines.map((l) => l.n),
      [8, 9, 10],
    );
    assert.equal(s.gate.calls[0]!.summary, 'open a.txt and read from line -3 (counted from the end)');
    const head = await openOne(s, { path: 'a.txt', limit: 2 });
    assert.ok(head.result.window && 'page' in head.result.window);
    assert.deepEqual(
      head.result.window.page.lines.map((l) => l.n),
      [1, 2],
    );
    assert.match(head.text, /^lines 1-2 of 10, artifact [^\n]+\nline 1\nline 2$/);
    const whole = await openOne(s, { path: 'a.txt', offset: 1 });
    // The header gives the total, so the page ends with its last line.
    assert.match(whole.text, /^lines 1-10 of 10, artifact [^\n]+\nline 1\n/);
    assert.ok(whole.text.endsWith('\nline 10'));
  });

  it("a window stopped short by the page's byte cap says so and where to read on", async (t) => {
    const s = session(t);
    write(s, 'wide.txt', Array.from({ length: 400 }, (_, i) => `${i + 1} ${'x'.repeat(300)}`).join('\n') + '\n');
    const wide = await openOne(s, { path: 'wide.txt', offset: 1, limit: 400 });
    assert.ok(wide.result.window && 'page' in wide.result.window && wide.result.window.page.truncated);
    const next = wide.result.window.page.nextOffset;
    assert.ok(next !== undefined && next < 400);
    assert.match(wide.text, new RegExp(`^lines 1-${next - 1} of 400, artifact `));
    assert.match(
      wide.text,
      new RegExp(`\\n\\(page capped at \\d+ KiB: artifact_read \\{callId: "[^"]+", offset: ${next}\\} reads on\\)$`),
    );
  });

  it("the window's header names an encoding or line ends only when they are not UTF-8 and LF", async (t) => {
    const s = session(t);
    write(s, 'crlf.txt', 'one\r\ntwo\r\n');
    const crlf = await openOne(s, { path: 'crlf.txt', limit: 1 });
    assert.match(crlf.text, /^lines 1-1 of 2 \(crlf\), artifact [^\n]+\none$/);
  });

  it('without offset and limit nothing changes: the handle alone', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(3));
    const outcome = await openOne(s, { path: 'a.txt' });
    assert.equal('window' in outcome.result, false);
    assert.doesNotMatch(outcome.text, /line 1/);
    assert.equal(s.gate.calls[0]!.summary, 'open a.txt');
  });

  it('a page that cannot be read still returns the handle, with why (past the end, binary)', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(5));
    const past = await openOne(s, { path: 'a.txt', offset: 9 });
    assert.deepEqual(past.result.window, {
      pageError:
        'offset 9 is past the end: "a.txt" has 5 lines; lines are 1-based. Call artifact_read with an offset from 1 to 5.',
    });
    assert.match(
      past.text,
      /\nNo page: offset 9 is past the end: "a\.txt" has 5 lines; lines are 1-based\. Call artifact_read with an offset from 1 to 5\.\nNext: artifact_read/,
    );
    write(s, 'blob.bin', Buffer.from([0, 1, 2, 0, 255, 0]));
    const binary = await openOne(s, { path: 'blob.bin', limit: 10 });
    assert.ok(binary.result.binary);
    assert.match(
      binary.text,
      /\nNo page: the file is binary, so it has no text lines\.\nNo text lines \(binary\): search its bytes with artifact_grep/,
    );
  });

  it('refuses a bad window with a narrated error before anything is opened', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(5));
    await assert.rejects(s.invoke('open_file', { path: 'a.txt', offset: 0 }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /offset 0 is no line: lines are 1-based \(1 is the first\), and -1 is the last/,
    });
    await assert.rejects(s.invoke('open_file', { path: 'a.txt', limit: 2001 }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /Argument "limit" is invalid/,
    });
    assert.equal(s.gate.calls.length, 0);
  });

  it('open_json_file and open_markdown_file return their structure, the handle and the page', async (t) => {
    const s = session(t);
    write(s, 'p.json', '{\n  "name": "x",\n  "version": "1.0.0"\n}\n');
    const json = await s.invoke('open_json_file', { path: 'p.json', offset: 2, limit: 2 });
    assert.equal(json.result.shape.type, 'object');
    assert.ok(json.result.window && 'page' in json.result.window);
    assert.deepEqual(
      json.result.window.page.lines.map((l) => l.text),
      ['  "name": "x",', '  "version": "1.0.0"'],
    );
    assert.match(
      pin(json.text, json.result.handle.callId),
      /\n {2}"version": string \(5 chars\) @L3\nLines 2-3 of 4:\n2\t {2}"name": "x",\n3\t {2}"version": "1\.0\.0"\n\(more: artifact_read \{callId: "ID", offset: 4\}; artifact_grep \{callId: "ID", pattern\} finds lines\)\n\(artifact_query \{callId: "ID", select: "\/name"\} shows a value by JSON Pointer\)$/,
    );
    write(s, 'r.md', '# Title\n\ntext\n\n## Part\n\nmore\n');
    const md = await s.invoke('open_markdown_file', { path: 'r.md', offset: -3 });
    assert.equal(md.result.outline.length, 2);
    assert.ok(md.result.window && 'page' in md.result.window);
    assert.deepEqual(
      md.result.window.page.lines.map((l) => l.text),
      ['## Part', '', 'more'],
    );
    assert.match(
      md.text,
      /\(end of file\)\n\(artifact_query \{callId: "[^"]+", select: "Title\/Part"\} reads a section\)$/,
    );
    const plain = await s.invoke('open_markdown_file', { path: 'r.md' });
    assert.equal('window' in plain.result, false);
  });
});

/** A gate that records each call and answers as the person would: yes to the batch, `secretAnswer` to a secret's own modal. */
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

const CANARY = 'CANARY-7f3a-never-to-the-model';

/** Four ordinary files and a secret holding the canary. */
function fiveFiles(s: TestSession): { path: string }[] {
  for (const name of ['a.ts', 'b.ts', 'c.ts', 'd.ts']) write(s, `src/${name}`, `export const ${name[0]} = 1;\n`);
  write(s, '.env', `TOKEN=${CANARY}\n`);
  return [{ path: 'src/a.ts' }, { path: 'src/b.ts' }, { path: '.env' }, { path: 'src/c.ts' }, { path: 'src/d.ts' }];
}

async function openBatch(
  s: TestSession,
  files: readonly Record<string, unknown>[],
  page?: PageBudget,
): Promise<{ text: string; result: OpenedFiles }> {
  const outcome = await s.invoke('open_file', { files }, page ? { page } : {});
  assert.ok(isOpenedFiles(outcome.result));
  return { text: outcome.text, result: outcome.result };
}

describe('several files at once', () => {
  it('attack: a batch of five with one secret: one confirmation for the four, its own modal for the secret, and declined the canary never reaches the model', async (t) => {
    const gate = personGate(false);
    const s = session(t, { overrides: { gate } });
    const { text, result } = await openBatch(s, fiveFiles(s));
    assert.equal(gate.calls.length, 2);
    const [batch, secret] = gate.calls;
    assert.deepEqual(
      [batch!.secret, batch!.targets.map((x) => x.display)],
      [false, ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts']],
    );
    assert.equal(batch!.summary, 'open and read 5 files: src/a.ts, src/b.ts, .env, src/c.ts, src/d.ts');
    assert.deepEqual(
      [secret!.secret, secret!.summary, secret!.targets.map((x) => [x.display, x.action, x.source])],
      [true, 'open .env and read from line 1', [['.env', 'ask', 'secret']]],
    );
    assert.deepEqual(
      result.files.map((f) => [f.path, f.handle !== undefined, f.error?.code]),
      [
        ['src/a.ts', true, undefined],
        ['src/b.ts', true, undefined],
        ['.env', false, 'E_SANDBOX_REFUSED'],
        ['src/c.ts', true, undefined],
        ['src/d.ts', true, undefined],
      ],
    );
    assert.doesNotMatch(text, new RegExp(CANARY));
    assert.doesNotMatch(JSON.stringify(result), new RegExp(CANARY));
    assert.match(
      text,
      /^Opened 4 of 5 files\.\n== src\/a\.ts ==\nlines 1-1 of 1, artifact \S+\nexport const a = 1;\n== src\/b\.ts ==\n/,
    );
    assert.match(
      text,
      /\n== \.env ==\nE_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env" \(the rule "[^"]+"\)\. Do not retry it or look for its contents another way; ask the user for what you need\.\n== src\/c\.ts ==/,
    );
    assert.equal(
      s.session.artifacts.list().some((a) => a.path === '.env'),
      false,
      'the declined secret was never opened',
    );
  });

  it('allowed in its modal, the secret is read with the others', async (t) => {
    const gate = personGate(true);
    const s = session(t, { overrides: { gate } });
    const { text, result } = await openBatch(s, fiveFiles(s));
    assert.equal(
      result.files.every((f) => f.handle !== undefined),
      true,
    );
    assert.match(text, new RegExp(`== \\.env ==\\nlines 1-1 of 1, artifact \\S+\\nTOKEN=${CANARY}\\n`));
  });

  it('attack: a denied path fails only its entry, with its narrated error, and is never asked about or read', async (t) => {
    const gate = personGate(true);
    const s = session(t, { rules: [{ glob: 'private/**', read: 'deny' }], overrides: { gate } });
    write(s, 'private/keys.txt', CANARY);
    write(s, 'ok.txt', 'fine\n');
    const { text, result } = await openBatch(s, [{ path: 'private/keys.txt' }, { path: 'ok.txt', limit: 1 }]);
    assert.equal(gate.calls.length, 1);
    assert.deepEqual(
      gate.calls[0]!.targets.map((x) => x.display),
      ['ok.txt'],
    );
    assert.deepEqual(result.files[0]!.error, {
      code: 'E_SANDBOX_REFUSED',
      message:
        'open_file on "private/keys.txt" was refused by the rule "private/**" (read denied). Do not retry this path; work with other files or ask the user to change workspaceTools.rules.',
    });
    assert.ok(result.files[1]!.handle);
    assert.doesNotMatch(text, new RegExp(CANARY));
  });

  it("a batch with nothing but refused and secret paths asks no batch confirmation, only the secret's modal", async (t) => {
    const gate = personGate(false);
    const s = session(t, { rules: [{ glob: 'private/**', read: 'deny' }], overrides: { gate } });
    write(s, '.env', CANARY);
    const { result } = await openBatch(s, [{ path: 'private/x' }, { path: '.env' }]);
    assert.deepEqual(
      gate.calls.map((c) => [c.secret, c.targets.map((x) => x.display)]),
      [[true, ['.env']]],
    );
    assert.deepEqual(
      result.files.map((f) => f.error?.code),
      ['E_SANDBOX_REFUSED', 'E_SANDBOX_REFUSED'],
    );
  });

  it('a missing file, a folder and a link to a secret fail only their own entries', async (t) => {
    const gate = personGate(false);
    const s = session(t, { overrides: { gate } });
    write(s, 'ok.txt', 'fine\n');
    write(s, '.env', CANARY);
    mkdirSync(nodePath.join(s.root, 'adir'));
    symlinkSync('.env', nodePath.join(s.root, 'innocent.txt'));
    const { text, result } = await openBatch(s, [
      { path: 'nope.txt' },
      { path: 'adir' },
      { path: 'innocent.txt' },
      { path: 'ok.txt' },
    ]);
    assert.deepEqual(
      result.files.map((f) => f.error?.code),
      ['E_SANDBOX_NOT_FOUND', 'E_SANDBOX_INVALID_INPUT', 'E_SANDBOX_REFUSED', undefined],
    );
    assert.match(text, /== nope\.txt ==\nE_SANDBOX_NOT_FOUND: "nope\.txt" does not exist\./);
    assert.doesNotMatch(text, new RegExp(CANARY));
  });

  it('each entry takes its own window, exactly as artifact_read reads it', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(100));
    write(s, 'b.txt', numbered(100));
    const { result } = await openBatch(s, [
      { path: 'a.txt', offset: 50, limit: 2 },
      { path: 'b.txt', offset: -2 },
    ]);
    const pages = result.files.map((f) => (f.window && 'page' in f.window ? f.window.page.lines.map((l) => l.n) : []));
    assert.deepEqual(pages, [
      [50, 51],
      [99, 100],
    ]);
    assert.equal(
      s.gate.calls[0]!.summary,
      'open and read 2 files: a.txt (lines 50-51), b.txt (from line -2 (counted from the end))',
    );
  });

  it('the pages share one page budget: long pages are cut to a fair share and say where their artifact reads on', async (t) => {
    const s = session(t);
    const long = Array.from({ length: 1000 }, (_, i) => `${'x'.repeat(60)} ${i + 1}`).join('\n') + '\n';
    write(s, 'big1.txt', long);
    write(s, 'big2.txt', long);
    write(s, 'small.txt', 'tiny\n');
    const { text, result } = await openBatch(s, [{ path: 'big1.txt' }, { path: 'small.txt' }, { path: 'big2.txt' }]);
    assert.ok(Buffer.byteLength(text) <= 50 * 1024, `${Buffer.byteLength(text)} bytes`);
    assert.deepEqual(result.shared, { bytes: 50 * 1024 });
    const [big1, small, big2] = result.files.map((f) =>
      f.window && 'page' in f.window ? f.window : assert.fail('no page'),
    );
    assert.deepEqual(
      small!.page.lines.map((l) => l.text),
      ['tiny'],
      'a small page is kept whole',
    );
    assert.ok(big1!.cutToShare && big2!.cutToShare);
    assert.ok(Math.abs(big1!.page.lines.length - big2!.page.lines.length) <= 1, 'the large pages get the same share');
    assert.ok(big1!.page.lines.length > 300, `${big1!.page.lines.length} lines`);
    const next = big1!.page.nextOffset!;
    assert.equal(next, big1!.page.lines.length + 1);
    assert.match(
      text,
      new RegExp(
        `\\(cut to share one page with the other files; more: artifact_read \\{callId: "${result.files[0]!.handle!.callId}", offset: ${next}\\}`,
      ),
    );
    const on = await s.invoke('artifact_read', { callId: result.files[0]!.handle!.callId, offset: next, limit: 1 });
    assert.equal(on.result.lines[0]!.text, `${'x'.repeat(60)} ${next}`);
  });

  it("the shared page follows the model's token budget when the host gives one", async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(500));
    write(s, 'b.txt', numbered(500));
    const counted: number[] = [];
    const tokens = {
      budget: 1000,
      count: async (text: string) => {
        const n = Math.ceil(Buffer.byteLength(text) / 3);
        counted.push(n);
        return n;
      },
    };
    const { text, result } = await openBatch(s, [{ path: 'a.txt' }, { path: 'b.txt' }], { bytes: 50 * 1024, tokens });
    assert.ok(Math.ceil(Buffer.byteLength(text) / 3) <= 1000);
    assert.ok(result.files.every((f) => f.window && 'page' in f.window && f.window.page.lines.length > 10));
  });

  it('refuses a malformed batch with a narrated error before anyone is asked', async (t) => {
    const s = session(t);
    await assert.rejects(s.invoke('open_file', { path: 'a.txt', files: [{ path: 'b.txt' }] }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /give either "path" \(one file\) or "files" \(several\), not both and not neither/,
    });
    await assert.rejects(s.invoke('open_file', {}), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /give either "path" \(one file\) or "files" \(several\)/,
    });
    await assert.rejects(s.invoke('open_file', { files: [{ path: 'b.txt' }], offset: 3 }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /with "files", give offset and limit inside each entry/,
    });
    await assert.rejects(
      s.invoke('open_file', { files: Array.from({ length: 21 }, (_, i) => ({ path: `f${i}.txt` })) }),
      { code: 'E_SANDBOX_INVALID_INPUT', message: /Argument "files" is invalid.*20/ },
    );
    await assert.rejects(s.invoke('open_file', { files: [] }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /Argument "files" is invalid/,
    });
    await assert.rejects(s.invoke('open_file', { files: [{ path: 'a.txt', offset: 0 }] }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /offset 0 is no line/,
    });
    assert.equal(s.gate.calls.length, 0);
  });
});

describe('one read format for a window and a batch', () => {
  /** A config loader and its two users: the reads of "what does the config loader do and where is it used?". */
  function loaderAndUsers(s: TestSession): { path: string }[] {
    write(
      s,
      'src/config.js',
      Array.from({ length: 28 }, (_, i) =>
        i === 0
          ? "import { readFileSync } from 'node:fs';"
          : `export const setting${i} = process.env.SETTING_${i} ?? ${i};`,
      ).join('\n') + '\n',
    );
    write(
      s,
      'src/server.js',
      "import { setting1 } from './config.js';\n".repeat(1) +
        Array.from({ length: 18 }, (_, i) => `console.log('server', setting1, ${i});`).join('\n') +
        '\n',
    );
    write(
      s,
      'test/config.test.js',
      "import test from 'node:test';\nimport { setting2 } from '../src/config.js';\ntest('setting2', () => { if (setting2 !== 2) throw new Error('x'); });\n",
    );
    return [{ path: 'src/config.js' }, { path: 'src/server.js' }, { path: 'test/config.test.js' }];
  }

  it('each file of a batch reads exactly as open_file {path, offset, limit} reads it, under a line naming it; the batch is no longer than the single reads together', async (t) => {
    const s = session(t);
    const files = loaderAndUsers(s);
    const { text, result } = await openBatch(s, files);
    const singles = await Promise.all(
      files.map(async (f) => (await s.invoke('open_file', { path: f.path, offset: 1 })).text),
    );
    const ids = result.files.map((f) => f.handle?.callId ?? assert.fail(`${f.path} not opened`));
    const alone = singles.map((single, i) => single.replace(/artifact \S+$/m, `artifact ${ids[i]!}`));
    const [batchBytes, singleBytes] = [
      Buffer.byteLength(text),
      singles.reduce((sum, x) => sum + Buffer.byteLength(x), 0),
    ];
    t.diagnostic(`batch of 3: ${batchBytes} B; the three windows read alone: ${singleBytes} B`);
    assert.equal(text, files.map((f, i) => `== ${f.path} ==\n${alone[i]!}`).join('\n'));
    assert.match(
      text,
      /^== src\/config\.js ==\nlines 1-28 of 28, artifact \S+\nimport \{ readFileSync \} from 'node:fs';\n/,
    );
    // Before: 2,964 B (a metadata header, `Lines 1-28 of 28:`, numbered lines and `(end of file)` each).
    assert.equal(
      batchBytes,
      singleBytes + files.reduce((sum, f) => sum + `== ${f.path} ==\n`.length, 0) + files.length - 1,
    );
  });
});
