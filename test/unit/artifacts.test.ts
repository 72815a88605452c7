import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as nodePath from 'node:path';
import { pagedResult, type TestSession, testSession, wholeResult } from './harness.ts';
import { type ToolResult } from '../../src/core/tools/index.ts';
import type { ToolOutcome } from '../../src/core/contract/tool.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { DEFAULT_LIMITS } from '../../src/core/pipeline/session.ts';
import { Policy } from '../../src/core/policy/policy.ts';
import type { ArtifactHandle } from '../../src/core/artifacts/types.ts';
import { readArtifactText } from '../../src/core/artifacts/page.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

const MTIME = new Date('2024-01-02T03:04:05.000Z');

function write(t: TestSession, rel: string, content: string | Uint8Array): string {
  const file = nodePath.join(t.root, rel);
  mkdirSync(nodePath.dirname(file), { recursive: true });
  writeFileSync(file, content);
  utimesSync(file, MTIME, MTIME);
  return file;
}

async function call<N extends ToolName>(
  t: TestSession,
  tool: N,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<ToolOutcome<ToolResult<N>>> {
  return t.invoke(tool, args, signal ? { signal } : {});
}

async function open(t: TestSession, rel: string): Promise<ArtifactHandle> {
  return oneFile((await call(t, 'open_file', { path: rel })).result);
}

/** The text with the run-specific callId replaced by "ID". */
function pin(text: string, callId: string): string {
  return text.split(callId).join('ID');
}

/** Processes whose parent is this one and whose command is `name` (Linux /proc). */
function children(name: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && comm === name ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}

describe('open_file', () => {
  let t: TestSession;
  before(() => {
    t = testSession();
  });
  after(() => t.dispose());

  it('returns a handle with exact facts and no content, rendered in two lines', async () => {
    write(t, 'src/app.ts', 'const a = 1;\nconst b = 2;\n');
    const outcome = await call(t, 'open_file', { path: 'src/app.ts' });
    const handle = oneFile(outcome.result);
    assert.match(handle.callId, /^art-[0-9a-f]{6}-\d+$/);
    assert.deepEqual(
      { ...handle, callId: 'ID' },
      {
        callId: 'ID',
        path: 'src/app.ts',
        bytes: 26,
        lines: 2,
        encoding: 'utf8',
        eol: 'lf',
        binary: false,
        mtime: '2024-01-02T03:04:05.000Z',
      },
    );
    assert.equal(
      pin(outcome.text, handle.callId),
      [
        'artifact ID: src/app.ts, 2 lines, 26 bytes, utf8, lf, modified 2024-01-02T03:04:05.000Z',
        'Next: artifact_read {callId: "ID", offset} pages it (2000 lines or 50 KiB a page); artifact_grep {callId: "ID", pattern} finds lines.',
      ].join('\n'),
    );
    assert.equal(t.gate.calls.at(-1)?.summary, 'open src/app.ts');
  });

  it('keeps the bytes of the moment it was opened when the file changes afterwards', async () => {
    const file = write(t, 'changing.txt', 'old line 1\nold line 2\n');
    const { callId } = await open(t, 'changing.txt');
    writeFileSync(file, 'NEW CONTENT that is longer\nand has\nthree lines\n');
    const page = (await call(t, 'artifact_read', { callId })).result;
    assert.deepEqual(
      page.lines.map((l) => l.text),
      ['old line 1', 'old line 2'],
    );
    const grep = wholeResult((await call(t, 'artifact_grep', { callId, pattern: 'NEW' })).result);
    assert.equal(grep.matchCount, 0);
    const reopened = await open(t, 'changing.txt');
    assert.equal(reopened.lines, 3);
  });

  it('refuses a missing file, a directory, and a special file with narrated errors', async () => {
    await assert.rejects(call(t, 'open_file', { path: 'nope.txt' }), {
      code: 'E_SANDBOX_NOT_FOUND',
      message:
        '"nope.txt" does not exist. Check the path with find_files or list_directory; paths are relative to the workspace folder.',
    });
    mkdirSync(nodePath.join(t.root, 'adir'), { recursive: true });
    await assert.rejects(call(t, 'open_file', { path: 'adir' }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: '"adir" is a directory, not a file. Use list_directory to see what it holds.',
    });
    assert.equal(spawnSync('mkfifo', [nodePath.join(t.root, 'pipe')]).status, 0);
    await assert.rejects(call(t, 'open_file', { path: 'pipe' }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message:
        '"pipe" is a special file (device, socket or pipe), not a regular file, so it cannot be opened as an artifact. Open a regular file instead.',
    });
  });

  it('counts an empty file as 0 lines and reads it as empty', async () => {
    write(t, 'empty.txt', '');
    const handle = await open(t, 'empty.txt');
    assert.deepEqual([handle.bytes, handle.lines, handle.eol], [0, 0, 'none']);
    assert.equal((await call(t, 'artifact_read', { callId: handle.callId })).text, 'empty.txt is empty (0 lines).');
    await assert.rejects(call(t, 'artifact_read', { callId: handle.callId, offset: 2 }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: 'offset 2 is past the end: "empty.txt" is empty (0 lines). There is nothing to read.',
    });
  });
});

describe('artifact_read', () => {
  let t: TestSession;
  let id: string;
  before(async () => {
    t = testSession();
    write(t, 'lines.txt', Array.from({ length: 812 }, (_, i) => `line ${i + 1}`).join('\n'));
    id = (await open(t, 'lines.txt')).callId;
  });
  after(() => t.dispose());

  it('pages by 1-based offset and limit, with nextOffset and a pinned rendering', async () => {
    const outcome = await call(t, 'artifact_read', { callId: id, offset: 10, limit: 3 });
    const page = outcome.result;
    assert.deepEqual(
      { ...page, callId: 'ID' },
      {
        callId: 'ID',
        path: 'lines.txt',
        totalLines: 812,
        startLine: 10,
        endLine: 12,
        lines: [
          { n: 10, text: 'line 10' },
          { n: 11, text: 'line 11' },
          { n: 12, text: 'line 12' },
        ],
        truncated: false,
        nextOffset: 13,
      },
    );
    assert.equal(
      outcome.text,
      'lines.txt lines 10-12 of 812:\n10\tline 10\n11\tline 11\n12\tline 12\n(more: artifact_read offset 13)',
    );
    assert.equal(t.gate.calls.at(-1)?.summary, 'read lines.txt from line 10');
    assert.deepEqual(
      t.gate.calls.at(-1)?.targets.map((x) => x.display),
      ['lines.txt'],
    );
  });

  it('ends at the last line (no final newline) without nextOffset', async () => {
    const outcome = await call(t, 'artifact_read', { callId: id, offset: 811 });
    assert.equal(outcome.text, 'lines.txt lines 811-812 of 812:\n811\tline 811\n812\tline 812\n(end of file)');
    assert.equal(outcome.result.nextOffset, undefined);
  });

  it('reads from the end with a negative offset, and the last lines of a short file whole', async () => {
    const outcome = await call(t, 'artifact_read', { callId: id, offset: -3 });
    assert.equal(
      outcome.text,
      'lines.txt lines 810-812 of 812:\n810\tline 810\n811\tline 811\n812\tline 812\n(end of file)',
    );
    assert.equal(t.gate.calls.at(-1)?.summary, 'read lines.txt from line -3 (counted from the end)');
    const one = await call(t, 'artifact_read', { callId: id, offset: -1, limit: 1 });
    assert.deepEqual(one.result.lines, [{ n: 812, text: 'line 812' }]);
    assert.equal(t.gate.calls.at(-1)?.summary, 'read lines.txt from its last line');
    const all = (await call(t, 'artifact_read', { callId: id, offset: -5000, limit: 2 })).result;
    assert.deepEqual(
      [all.startLine, all.endLine, all.nextOffset],
      [1, 2, 3],
      'more lines back than the file has: from its first line',
    );
  });

  it('narrates an offset past the end with the line count', async () => {
    await assert.rejects(call(t, 'artifact_read', { callId: id, offset: 9000 }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message:
        'offset 9000 is past the end: "lines.txt" has 812 lines; lines are 1-based. Call artifact_read with an offset from 1 to 812.',
    });
  });

  it('rejects offset 0 and a limit over 2000 at validation', async () => {
    await assert.rejects(call(t, 'artifact_read', { callId: id, offset: 0 }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message: /offset 0 is no line: lines are 1-based \(1 is the first\), and -1 is the last/,
    });
    await assert.rejects(call(t, 'artifact_read', { callId: id, limit: 2001 }), { code: 'E_SANDBOX_INVALID_INPUT' });
  });

  it('caps a page at 50 KiB before the 2000-line limit and says where to continue', async () => {
    // 2000 lines of 99 characters + "\n" = 200,000 bytes: a page holds 512 of them (51,200 bytes).
    write(t, 'wide.txt', Array.from({ length: 2000 }, (_, i) => String(i + 1).padEnd(99, '.')).join('\n') + '\n');
    const { callId } = await open(t, 'wide.txt');
    const outcome = await call(t, 'artifact_read', { callId });
    const page = outcome.result;
    assert.deepEqual([page.startLine, page.endLine, page.truncated, page.nextOffset], [1, 512, true, 513]);
    assert.ok(outcome.text.endsWith('\n(page capped at 50 KiB; more: artifact_read offset 513)'));
    const full = (await call(t, 'artifact_read', { callId, offset: 1, limit: 100 })).result;
    assert.deepEqual([full.endLine, full.truncated, full.nextOffset], [100, false, 101]);
  });

  it('cuts a line over 2000 characters with a marker naming its size, and continues after it', async () => {
    write(t, 'long.txt', `short\n${'x'.repeat(1990)}0123456789ABCDEF${'y'.repeat(100_000)}\nafter\n`);
    const { callId } = await open(t, 'long.txt');
    const outcome = await call(t, 'artifact_read', { callId });
    const page = outcome.result;
    assert.deepEqual(
      page.lines.map((l) => [l.n, l.text.length, l.cutBytes]),
      [
        [1, 5, undefined],
        [2, 2000, 102_006],
        [3, 5, undefined],
      ],
    );
    assert.equal(page.lines[1]!.text.slice(-10), '0123456789');
    assert.equal(
      outcome.text.split('\n')[2],
      `2\t${'x'.repeat(1990)}0123456789 …[line cut: 102006 bytes, first 2000 chars shown]`,
    );
    assert.equal(outcome.text.split('\n')[3], '3\tafter');
  });

  it('pages the last line of a 5-million-line file through the index', async () => {
    const file = nodePath.join(t.root, 'five-million.log');
    const out = createWriteStream(file);
    for (let start = 1; start <= 5_000_000; start += 100_000) {
      let chunk = '';
      for (let n = start; n < start + 100_000; n++) chunk += `${n}\n`;
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve) => out.end(() => resolve()));
    const handle = await open(t, 'five-million.log');
    assert.deepEqual([handle.lines, handle.bytes], [5_000_000, statSync(file).size]);
    const last = await call(t, 'artifact_read', { callId: handle.callId, offset: 5_000_000 });
    assert.equal(last.text, 'five-million.log lines 5000000-5000000 of 5000000:\n5000000\t5000000\n(end of file)');
    const middle = (await call(t, 'artifact_read', { callId: handle.callId, offset: 3_333_333, limit: 2 })).result;
    assert.deepEqual(middle.lines, [
      { n: 3_333_333, text: '3333333' },
      { n: 3_333_334, text: '3333334' },
    ]);
    const grep = wholeResult((await call(t, 'artifact_grep', { callId: handle.callId, pattern: '^4999999$' })).result);
    assert.deepEqual(
      grep.lines.map((l) => [l.n, l.text]),
      [[4_999_999, '4999999']],
    );
  });
});

describe('encodings and line ends', () => {
  let t: TestSession;
  before(() => {
    t = testSession();
  });
  after(() => t.dispose());

  it('reads CRLF lines without the CR, reports eol crlf, and lets "$" match before CRLF', async () => {
    write(t, 'win.txt', 'alpha\r\nbeta end\r\ngamma\r\n');
    const handle = await open(t, 'win.txt');
    assert.deepEqual([handle.eol, handle.lines], ['crlf', 3]);
    const page = (await call(t, 'artifact_read', { callId: handle.callId })).result;
    assert.deepEqual(
      page.lines.map((l) => l.text),
      ['alpha', 'beta end', 'gamma'],
    );
    const grep = wholeResult((await call(t, 'artifact_grep', { callId: handle.callId, pattern: 'end$' })).result);
    assert.deepEqual(
      grep.lines.map((l) => [l.n, l.text]),
      [[2, 'beta end']],
    );
    write(t, 'mixed.txt', 'a\r\nb\nc\n');
    assert.equal((await open(t, 'mixed.txt')).eol, 'mixed');
  });

  it('reads a UTF-8 file with a BOM without the BOM, and "^" matches its first line', async () => {
    write(t, 'bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('first é\nsecond\n')]));
    const handle = await open(t, 'bom.txt');
    assert.deepEqual([handle.encoding, handle.bytes, handle.lines], ['utf8bom', 19, 2]);
    const page = (await call(t, 'artifact_read', { callId: handle.callId })).result;
    assert.deepEqual(
      page.lines.map((l) => l.text),
      ['first é', 'second'],
    );
    const grep = wholeResult((await call(t, 'artifact_grep', { callId: handle.callId, pattern: '^first' })).result);
    assert.deepEqual(
      grep.lines.map((l) => [l.n, l.text]),
      [[1, 'first é']],
    );
  });

  for (const [encoding, bom, swap] of [
    ['utf16le', [0xff, 0xfe], false],
    ['utf16be', [0xfe, 0xff], true],
  ] as const) {
    it(`decodes ${encoding} with a BOM to text, for reading and for grep`, async () => {
      const body = Buffer.from('zwei Zeilen: ü\r\n€ und 😀\r\n', 'utf16le');
      if (swap) body.swap16();
      write(t, `${encoding}.txt`, Buffer.concat([Buffer.from(bom), body]));
      const handle = await open(t, `${encoding}.txt`);
      assert.deepEqual(
        { encoding: handle.encoding, bytes: handle.bytes, lines: handle.lines, eol: handle.eol, binary: handle.binary },
        { encoding, bytes: 2 + body.length, lines: 2, eol: 'crlf', binary: false },
      );
      const page = (await call(t, 'artifact_read', { callId: handle.callId })).result;
      assert.deepEqual(
        page.lines.map((l) => l.text),
        ['zwei Zeilen: ü', '€ und 😀'],
      );
      const grep = wholeResult(
        (await call(t, 'artifact_grep', { callId: handle.callId, pattern: '€', literal: true })).result,
      );
      assert.deepEqual(
        grep.lines.map((l) => [l.n, l.text]),
        [[2, '€ und 😀']],
      );
    });
  }

  it('reads a text file that is not UTF-8 as windows1252 (latin-1 when a byte is undefined there), for reading and for grep', async () => {
    write(
      t,
      'latin1.txt',
      Buffer.concat([Buffer.from('ok line\ncaf'), Buffer.from([0xe9]), Buffer.from(' au lait \x80\n', 'latin1')]),
    );
    const outcome = await call(t, 'open_file', { path: 'latin1.txt' });
    const handle = oneFile(outcome.result);
    assert.deepEqual([handle.encoding, handle.binary, handle.bytes, handle.lines], ['windows1252', false, 23, 2]);
    assert.match(
      pin(outcome.text, handle.callId),
      /^artifact ID: latin1\.txt, 2 lines, 23 bytes, windows1252, lf, modified /,
    );
    const read = await call(t, 'artifact_read', { callId: handle.callId });
    assert.equal(read.text, 'latin1.txt lines 1-2 of 2:\n1\tok line\n2\tcafé au lait €\n(end of file)');
    const grep = wholeResult((await call(t, 'artifact_grep', { callId: handle.callId, pattern: 'café' })).result);
    assert.deepEqual(
      grep.lines.map((l) => [l.n, l.text]),
      [[2, 'café au lait €']],
    );
    write(t, 'undefined.txt', Buffer.from([0x61, 0x81, 0xe9, 0x0a]));
    const latin1 = await open(t, 'undefined.txt');
    assert.equal(latin1.encoding, 'iso88591');
    const page = (await call(t, 'artifact_read', { callId: latin1.callId })).result;
    assert.deepEqual(
      page.lines.map((l) => l.text),
      ['a\u0081é'],
    );
  });

  it('opens a binary file with binary: true; read refuses with E_SANDBOX_BINARY, literal grep finds byte offsets', async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
      Buffer.from('IHDR\0\0needle\x01\x02'),
      Buffer.alloc(40, 0),
    ]);
    write(t, 'logo.png', png);
    const outcome = await call(t, 'open_file', { path: 'logo.png' });
    const handle = oneFile(outcome.result);
    assert.deepEqual([handle.binary, handle.encoding, handle.bytes], [true, 'binary', png.length]);
    // Its bytes start as a PNG's do, with a header that claims absurd dimensions: described, never sent as an image.
    assert.equal(
      pin(outcome.text, handle.callId),
      'artifact ID: logo.png, binary, 66 bytes, modified 2024-01-02T03:04:05.000Z\nImage: image/png, 28261×1701080165 px.\nNot shown as an image: at 28261×1701080165 px and 66 bytes it is over what is decoded to downscale it (25 megapixels, 32.0 MiB). Ask the user for a smaller copy.\nNo text lines (binary): search its bytes with artifact_grep {callId: "ID", pattern, literal: true}.',
    );
    await assert.rejects(call(t, 'artifact_read', { callId: handle.callId }), {
      code: 'E_SANDBOX_BINARY',
      message:
        '"logo.png" is binary (66 bytes), so there are no text lines to read. Search its bytes with artifact_grep and literal: true (matches show byte offsets); to read text, open a text file instead.',
    });
    // The PNG signature holds two line feeds, so the match is on "line" 3 of the bytes.
    const grep = await call(t, 'artifact_grep', {
      callId: handle.callId,
      pattern: 'needle',
      literal: true,
      context: 2,
    });
    assert.equal(
      grep.text,
      [
        '1 matching line for "needle" in logo.png (binary: byte offset and escaped excerpt):',
        '3:\t@18 …NG\\x0d\\x0a\\x1a\\x0a\\x00\\x00\\x00\\x0dIHDR\\x00\\x00needle\\x01\\x02' + '\\x00'.repeat(40),
        '(context lines are not shown for binary artifacts)',
      ].join('\n'),
    );
  });
});

describe('artifact_grep', () => {
  let t: TestSession;
  let id: string;
  before(async () => {
    t = testSession();
    write(
      t,
      'log.txt',
      Array.from({ length: 30 }, (_, i) => ((i + 1) % 3 === 0 ? `${i + 1} ERROR disk full` : `${i + 1} ok`)).join(
        '\n',
      ) + '\n',
    );
    id = (await open(t, 'log.txt')).callId;
  });
  after(() => t.dispose());

  it('returns matching lines with context, groups separated, pinned', async () => {
    const outcome = await call(t, 'artifact_grep', { callId: id, pattern: 'ERROR', context: 1, maxResults: 2 });
    assert.equal(
      outcome.text,
      [
        '2 matching lines for /ERROR/ in log.txt:',
        '2-\t2 ok',
        '3:\t3 ERROR disk full',
        '4-\t4 ok',
        '5-\t5 ok',
        '6:\t6 ERROR disk full',
        '7-\t7 ok',
        '(result limit: stopped at maxResults 2; more lines match. Raise maxResults or narrow the pattern.)',
      ].join('\n'),
    );
    const result = wholeResult(outcome.result);
    assert.deepEqual([result.matchCount, result.limited, result.maxResults], [2, true, 2]);
  });

  it('says nothing about a limit when every match fits, and separates distant groups with --', async () => {
    const outcome = await call(t, 'artifact_grep', {
      callId: id,
      pattern: 'error disk',
      ignore_case: true,
      maxResults: 10,
    });
    const result = wholeResult(outcome.result);
    assert.deepEqual([result.matchCount, result.limited], [10, false]);
    assert.equal(
      outcome.text.split('\n').slice(0, 4).join('\n'),
      '10 matching lines for /error disk/ in log.txt:\n3:\t3 ERROR disk full\n--\n6:\t6 ERROR disk full',
    );
    assert.equal(
      (await call(t, 'artifact_grep', { callId: id, pattern: 'nothing here' })).text,
      'No lines match /nothing here/ in log.txt.',
    );
  });

  it('treats a literal pattern literally', async () => {
    write(t, 'regexy.txt', 'a.b\naxb\n(x)\n');
    const { callId } = await open(t, 'regexy.txt');
    assert.deepEqual(
      wholeResult((await call(t, 'artifact_grep', { callId, pattern: 'a.b', literal: true })).result).lines.map(
        (l) => l.n,
      ),
      [1],
    );
    assert.deepEqual(
      wholeResult((await call(t, 'artifact_grep', { callId, pattern: 'a.b' })).result).lines.map((l) => l.n),
      [1, 2],
    );
    assert.deepEqual(
      wholeResult((await call(t, 'artifact_grep', { callId, pattern: '(x)', literal: true })).result).lines.map(
        (l) => l.n,
      ),
      [3],
    );
  });

  it('narrates an invalid regex quoting ripgrep', async () => {
    await assert.rejects(call(t, 'artifact_grep', { callId: id, pattern: 'disk (full' }), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message:
        'ripgrep rejected the pattern "disk (full": regex parse error: (?:disk (full) ^ error: unclosed group. Fix the regex (ripgrep uses Rust regex syntax: no look-around or backreferences), or pass literal: true to search for the text as written.',
    });
  });

  it('shows the part of a long line around a match that lies past the cut', async () => {
    write(t, 'minified.js', `${'a'.repeat(50_000)}NEEDLE${'b'.repeat(50_000)}\n`);
    const { callId } = await open(t, 'minified.js');
    const result = wholeResult((await call(t, 'artifact_grep', { callId, pattern: 'NEEDLE' })).result);
    const line = result.lines[0]!;
    assert.deepEqual([line.n, line.cutBytes, line.text.length], [1, 100_006, 2001]);
    assert.equal(line.text.slice(0, 1 + 200 + 6), `…${'a'.repeat(200)}NEEDLE`);
  });

  it('output over one page goes whole to a result artifact; the model gets its first page', async () => {
    write(t, 'many.txt', Array.from({ length: 3000 }, (_, i) => `${i} ${'z'.repeat(90)}`).join('\n'));
    const { callId } = await open(t, 'many.txt');
    const outcome = await call(t, 'artifact_grep', { callId, pattern: 'z', maxResults: 3000 });
    assert.ok(Buffer.byteLength(outcome.text) <= 50 * 1024);
    const paged = pagedResult(outcome.result);
    assert.equal(paged.summary, '3000 matching lines for /z/ in many.txt');
    const lines = outcome.text.split('\n');
    assert.match(
      lines[0]!,
      /^3000 matching lines for \/z\/ in many\.txt: more than one page, so the whole result is artifact (art-[0-9a-f]+-\d+) \(3001 lines, 296\.7 KiB; its last line says whether it is complete\)\. Lines 1-510 of it follow\.$/,
    );
    assert.equal(lines[1], `1:\t0 ${'z'.repeat(90)}`);
    assert.equal(
      lines.at(-1),
      `(more: artifact_read {callId: "${paged.artifact.callId}", offset: ${paged.artifact.nextOffset}}; artifact_grep {callId: "${paged.artifact.callId}", pattern} searches all of it)`,
    );
    assert.equal(paged.page.length, paged.artifact.nextOffset - 1);
    let page = (await call(t, 'artifact_read', { callId: paged.artifact.callId, offset: paged.artifact.nextOffset }))
      .result;
    assert.equal(
      page.lines[0]!.text,
      `${paged.artifact.nextOffset}:\t${paged.artifact.nextOffset - 1} ${'z'.repeat(90)}`,
    );
    while (page.nextOffset !== undefined)
      page = (await call(t, 'artifact_read', { callId: paged.artifact.callId, offset: page.nextOffset })).result;
    assert.deepEqual(
      page.lines.slice(-2).map((l) => l.text),
      [`3000:\t2999 ${'z'.repeat(90)}`, 'done complete (3000 matching lines for /z/ in many.txt)'],
    );
  });

  it('kills ripgrep when the call is cancelled', async () => {
    const file = nodePath.join(t.root, 'big.txt');
    const out = createWriteStream(file);
    const chunk = 'a fairly ordinary line of text that will not match the pattern\n'.repeat(16_384);
    for (let i = 0; i < 30; i++)
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    await new Promise<void>((resolve) => out.end(() => resolve()));
    const { callId } = await open(t, 'big.txt');
    const controller = new AbortController();
    // No literal for ripgrep to prefilter on: it runs the regex over all 31 MB (~0.6 s), time enough to cancel it.
    const running = call(
      t,
      'artifact_grep',
      { callId, pattern: '(\\w+\\s+){3,}\\d', ignore_case: true },
      controller.signal,
    );
    for (let i = 0; i < 100 && children('rg').length === 0; i++) await new Promise((r) => setTimeout(r, 2));
    assert.equal(children('rg').length, 1, 'ripgrep is running');
    controller.abort();
    await assert.rejects(running, { code: 'E_SANDBOX_CANCELLED' });
    for (let i = 0; i < 100 && children('rg').length > 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(children('rg'), []);
  });
});

describe('open_json_file and artifact_query on JSON', () => {
  let t: TestSession;
  before(() => {
    t = testSession();
  });
  after(() => t.dispose());

  it('tolerates JSONC comments and trailing commas, and returns the top-level shape (pinned)', async () => {
    write(
      t,
      'tsconfig.json',
      [
        '// settings',
        '{',
        '  "compilerOptions": { "strict": true, /* yes */ "target": "ES2023", },',
        '  "include": ["src", "test",],',
        '  "name": "demo",',
        '  "count": 3,',
        '  "extra": null,',
        '}',
      ].join('\n'),
    );
    const outcome = await call(t, 'open_json_file', { path: 'tsconfig.json' });
    const { handle } = outcome.result;
    assert.equal(
      pin(outcome.text, handle.callId),
      [
        'artifact ID: tsconfig.json, 8 lines, 167 bytes, utf8, lf, modified 2024-01-02T03:04:05.000Z',
        'JSON object (5 keys), lines 2-8:',
        '  "compilerOptions": object (2 keys) @L3',
        '  "include": array (2 items) @L4',
        '  "name": string (4 chars) @L5',
        '  "count": number @L6',
        '  "extra": null @L7',
        'Next: artifact_query {callId: "ID", select: "/compilerOptions"} shows a value by JSON Pointer; artifact_read {callId: "ID", offset} pages it (2000 lines or 50 KiB a page); artifact_grep {callId: "ID", pattern} finds lines.',
      ].join('\n'),
    );
  });

  it('summarizes a top-level array by item types', async () => {
    write(t, 'list.json', JSON.stringify([{ a: 1 }, { a: 2 }, 'x', null]));
    const outcome = await call(t, 'open_json_file', { path: 'list.json' });
    assert.deepEqual(outcome.text.split('\n').slice(1, 3), [
      'JSON array (4 items), line 1',
      '  items: object ×2, string ×1, null ×1',
    ]);
  });

  it('gives a narrated error with line and column for invalid JSON, keeping the artifact readable', async () => {
    write(t, 'broken.json', '{\n  "a": 1,\n  "b": [1 2]\n}\n');
    const error = await call(t, 'open_json_file', { path: 'broken.json' }).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    assert.equal(error?.code, 'E_SANDBOX_INVALID_INPUT');
    const callId = /artifact (art-[0-9a-f]+-\d+)/.exec(error!.message)![1]!;
    assert.equal(
      pin(error!.message, callId),
      '"broken.json" is not valid JSON (comments and trailing commas are accepted): CommaExpected at line 3, column 11. It stays open as artifact ID: read around that line with artifact_read (offset 1).',
    );
    const page = (await call(t, 'artifact_read', { callId, offset: 3, limit: 1 })).result;
    assert.equal(page.lines[0]!.text, '  "b": [1 2]');
  });

  it('selects a subtree by JSON Pointer, bounded: deeper levels and long lists summarized (pinned)', async () => {
    const doc = {
      name: 'demo',
      deps: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`pkg${i}`, `^${i}.0.0`])),
      deep: { l1: { l2: { l3: { l4: 'hidden' } }, list: [1, 2, 3] } },
      text: 'x'.repeat(500),
      'a/b': { 'c~d': 1 },
    };
    write(t, 'package.json', JSON.stringify(doc, null, 2));
    const { handle } = (await call(t, 'open_json_file', { path: 'package.json' })).result;
    const deep = await call(t, 'artifact_query', { callId: handle.callId, select: '/deep' });
    assert.equal(
      deep.text,
      [
        '/deep in package.json (lines 65-78), object (1 key):',
        '{',
        '  "l1": {',
        '    "l2": {"l3": {…1 key}},',
        '    "list": [1, 2, 3]',
        '  }',
        '}',
        '({…N keys}, […N items] and "…" mark summarized parts: select a deeper pointer to see them)',
      ].join('\n'),
    );
    const deps = (await call(t, 'artifact_query', { callId: handle.callId, select: '/deps' })).text.split('\n');
    assert.deepEqual(
      [deps[0], deps[1], deps[2], deps[51], deps[52], deps[53]],
      [
        '/deps in package.json (lines 3-64), object (60 keys):',
        '{',
        '  "pkg0": "^0.0.0",',
        '  "pkg49": "^49.0.0",',
        '  … 10 more keys',
        '}',
      ],
    );
    const text = await call(t, 'artifact_query', { callId: handle.callId, select: '/text' });
    assert.equal(text.text.split('\n')[1], `"${'x'.repeat(200)}…" (500 chars)`);
    const escaped = await call(t, 'artifact_query', { callId: handle.callId, select: '/a~1b/c~0d' });
    assert.equal(escaped.text, '/a~1b/c~0d in package.json (line 81), number:\n1');
  });

  it('lists the nearest keys when a pointer selects nothing', async () => {
    write(t, 'scripts.json', JSON.stringify({ scripts: { build: 'tsc', test: 'node --test', lint: 'eslint' } }));
    const { handle } = (await call(t, 'open_json_file', { path: 'scripts.json' })).result;
    await assert.rejects(call(t, 'artifact_query', { callId: handle.callId, select: '/scripts/tset' }), {
      code: 'E_SANDBOX_NOT_FOUND',
      message:
        'JSON Pointer "/scripts/tset" selects nothing: "/scripts" (line 1) is an object with 3 keys, none of them "tset". Nearest: "/scripts/test", "/scripts/lint", "/scripts/build"; call artifact_query with one of those.',
    });
    await assert.rejects(call(t, 'artifact_query', { callId: handle.callId, select: '/scripts/build/x' }), {
      code: 'E_SANDBOX_NOT_FOUND',
      message:
        'JSON Pointer "/scripts/build/x" selects nothing: "/scripts/build" (line 1) is a string, which has no members; select "/scripts/build" itself.',
    });
  });

  it('queries a .json opened with open_file by its extension, and refuses a plain text artifact', async () => {
    write(t, 'plain.json', '{"k": [true]}');
    const json = await open(t, 'plain.json');
    assert.equal(
      (await call(t, 'artifact_query', { callId: json.callId, select: '/k' })).text,
      '/k in plain.json (line 1), array (1 item):\n[true]',
    );
    write(t, 'notes.txt', 'hello');
    const text = await open(t, 'notes.txt');
    await assert.rejects(call(t, 'artifact_query', { callId: text.callId, select: '/k' }), {
      code: 'E_SANDBOX_UNSUPPORTED',
      message: `artifact_query selects inside JSON, Markdown, or a source file whose outline open_file returned, and "notes.txt" (${text.callId}) was opened with open_file as plain text (no outline). Use artifact_grep or artifact_read on it, or reopen it with open_json_file or open_markdown_file.`,
    });
  });
});

describe('open_markdown_file and artifact_query on Markdown', () => {
  let t: TestSession;
  let id: string;
  before(async () => {
    t = testSession();
    write(
      t,
      'README.md',
      [
        '---',
        'title: Demo',
        '---', // 1-3
        '# Demo',
        '',
        'Intro.',
        '', // 4-7
        '```sh',
        '# not a heading',
        '```',
        '', // 8-11
        'Install',
        '=======',
        '', // 12-14 setext h1
        '## Linux',
        'apt install demo',
        '', // 15-17
        'macOS',
        '-----',
        'brew install demo', // 18-20 setext h2
      ].join('\n') + '\n',
    );
    const outcome = await call(t, 'open_markdown_file', { path: 'README.md' });
    id = outcome.result.handle.callId;
  });
  after(() => t.dispose());

  it('returns the heading outline with section ranges: fenced "#" is not a heading, setext headings count (pinned)', async () => {
    const outcome = await call(t, 'open_markdown_file', { path: 'README.md' });
    const callId = outcome.result.handle.callId;
    assert.equal(
      pin(outcome.text, callId),
      [
        'artifact ID: README.md, 20 lines, 137 bytes, utf8, lf, modified 2024-01-02T03:04:05.000Z',
        'Outline (4 headings; line ranges are whole sections):',
        '# Demo  4-11',
        '# Install  12-20',
        '  ## Linux  15-17',
        '  ## macOS  18-20',
        'Next: artifact_query {callId: "ID", select: "Install/Linux"} reads a section; artifact_read {callId: "ID", offset} pages it (2000 lines or 50 KiB a page); artifact_grep {callId: "ID", pattern} finds lines.',
      ].join('\n'),
    );
  });

  it('reads a section by heading path (pinned)', async () => {
    const outcome = await call(t, 'artifact_query', { callId: id, select: 'Install/Linux' });
    assert.equal(
      outcome.text,
      '## Install/Linux in README.md (lines 15-17):\n15\t## Linux\n16\tapt install demo\n17\t\n(end of section)',
    );
    const setext = await call(t, 'artifact_query', { callId: id, select: 'macos' });
    assert.equal(setext.text.split('\n')[0], '## Install/macOS in README.md (lines 18-20):');
  });

  it('lists valid heading paths near one that matches nothing', async () => {
    await assert.rejects(call(t, 'artifact_query', { callId: id, select: 'Install/Linx' }), {
      code: 'E_SANDBOX_NOT_FOUND',
      message:
        'No heading matches the path "Install/Linx" in "README.md". Headings near it: "Install/Linux", "Install", "Install/macOS", "Demo". Call artifact_query with one of those (segments are heading titles separated by "/").',
    });
  });

  it('refuses to parse a Markdown file over 4 MiB, naming the artifact it still opened', async () => {
    write(t, 'huge.md', '# Huge\n' + 'word '.repeat(1024 * 1024) + '\n');
    const error = await call(t, 'open_markdown_file', { path: 'huge.md' }).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    assert.equal(error?.code, 'E_SANDBOX_TOO_LARGE');
    const callId = /artifact (art-[0-9a-f]+-\d+)/.exec(error!.message)![1]!;
    assert.equal(
      pin(error!.message, callId),
      '"huge.md" is 5.0 MiB, more than the 4.0 MiB that can be parsed or shown as a whole. It is open as artifact ID: find what you need with artifact_grep and page it with artifact_read.',
    );
    assert.equal((await call(t, 'artifact_read', { callId, limit: 1 })).result.lines[0]!.text, '# Huge');
  });

  it('pages a section longer than a page with nextOffset inside the section', async () => {
    write(t, 'big.md', ['# Big', ...Array.from({ length: 2500 }, (_, i) => `row ${i}`), '# After', 'x'].join('\n'));
    const { handle } = (await call(t, 'open_markdown_file', { path: 'big.md' })).result;
    const outcome = await call(t, 'artifact_query', { callId: handle.callId, select: 'Big' });
    assert.ok(
      outcome.text.endsWith('\n(more: artifact_read offset 2001, section ends at line 2501)'),
      outcome.text.slice(-120),
    );
  });
});

describe('artifact lifetime', () => {
  it('evicts the least recently used artifact beyond the disk budget; its callId then says to reopen', async () => {
    const t = testSession({ overrides: { limits: () => ({ ...DEFAULT_LIMITS, artifactBudgetBytes: 250 }) } });
    try {
      write(t, 'a.txt', 'a'.repeat(100));
      write(t, 'b.txt', 'b'.repeat(100));
      write(t, 'c.txt', 'c'.repeat(100));
      const a = await open(t, 'a.txt');
      const b = await open(t, 'b.txt');
      await call(t, 'artifact_read', { callId: a.callId });
      const c = await open(t, 'c.txt');
      assert.deepEqual(
        t.session.artifacts.list().map((x) => x.callId),
        [c.callId, a.callId],
      );
      await assert.rejects(call(t, 'artifact_read', { callId: b.callId }), {
        code: 'E_SANDBOX_NOT_FOUND',
        message: `Artifact "${b.callId}" (b.txt) was evicted to keep artifacts within their disk budget; its snapshot is gone. Open "b.txt" again with open_file (it will show the file as it is now).`,
      });
      assert.deepEqual(readdirSync(t.session.artifacts.spoolDir).sort(), ['1.spool', '3.spool']);
      write(t, 'huge.txt', 'h'.repeat(300));
      await assert.rejects(call(t, 'open_file', { path: 'huge.txt' }), {
        code: 'E_SANDBOX_TOO_LARGE',
        message:
          '"huge.txt" is 300 bytes, more than the whole artifact disk budget (250 bytes), so it cannot be opened as an artifact. Search it with search_files instead, or ask the user to raise the artifact budget setting.',
      });
    } finally {
      await t.dispose();
    }
  });

  it('narrates an unknown callId before any I/O (at the gate step)', async () => {
    const t = testSession();
    try {
      await assert.rejects(call(t, 'artifact_grep', { callId: 'art-000000-9', pattern: 'x' }), {
        code: 'E_SANDBOX_NOT_FOUND',
        message:
          'No artifact has callId "art-000000-9": artifacts live only as long as the editor session and this id is not one of them. Open the file again with open_file and use the callId it returns.',
      });
      assert.equal(t.gate.calls.length, 0);
    } finally {
      await t.dispose();
    }
  });

  it('re-checks policy on every artifact call: a path denied after it was opened cannot be read', async () => {
    let policy = new Policy([]);
    const t = testSession({ overrides: { policy: () => policy } });
    try {
      write(t, 'notes/plan.txt', 'plan\n');
      const { callId } = await open(t, 'notes/plan.txt');
      policy = new Policy([{ glob: 'notes/**', read: 'deny' }]);
      await assert.rejects(call(t, 'artifact_read', { callId }), {
        code: 'E_SANDBOX_REFUSED',
        message:
          'artifact_read on "notes/plan.txt" was refused by the rule "notes/**" (read denied). Do not retry this path; work with other files or ask the user to change workspaceTools.rules.',
      });
    } finally {
      await t.dispose();
    }
  });

  it('removes stale spool folders of dead runs at start, and keeps live ones and unrelated files', async () => {
    const t = testSession();
    try {
      const dir = t.session.artifacts.options.dir;
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
      mkdirSync(nodePath.join(dir, `wt-run-${dead}-abc123`));
      writeFileSync(nodePath.join(dir, `wt-run-${dead}-abc123`, '1.spool'), 'left over');
      mkdirSync(nodePath.join(dir, `wt-run-${process.pid}-def456`));
      writeFileSync(nodePath.join(dir, 'unrelated.txt'), 'x');
      assert.equal(await t.session.artifacts.start(), 1);
      assert.deepEqual(
        readdirSync(dir)
          .filter((n) => !n.startsWith(`wt-run-${process.pid}-${t.session.artifacts.spoolDir.slice(-6)}`))
          .sort(),
        ['unrelated.txt', `wt-run-${process.pid}-def456`],
      );
    } finally {
      await t.dispose();
    }
  });

  it('removes every spool file on dispose, and reports changes to listeners', async () => {
    const t = testSession();
    const changes: string[] = [];
    t.session.artifacts.onDidChange((c) => changes.push(c.type));
    write(t, 'x.txt', 'x\n');
    const { callId } = await open(t, 'x.txt');
    const spoolDir = t.session.artifacts.spoolDir;
    assert.deepEqual(readdirSync(spoolDir), ['1.spool']);
    assert.equal(await readArtifactText(t.session.artifacts, callId), 'x\n');
    assert.equal(t.session.artifacts.get(callId).kind, 'text');
    assert.equal(statSync(spoolDir).mode & 0o777, 0o700, 'snapshots are private to this user');
    await t.session.artifacts.dispose();
    assert.equal(existsSync(spoolDir), false);
    assert.deepEqual(changes, ['opened', 'closed']);
    await t.dispose();
  });
});

describe('backends without local paths', () => {
  it('streams from a backend that streams but has no local paths', async () => {
    const t = testSession({ fs: new NodeFs({ localPaths: false }) });
    try {
      write(t, 's.txt', 'one\ntwo\n');
      const handle = await open(t, 's.txt');
      assert.deepEqual([handle.lines, handle.bytes], [2, 8]);
      assert.deepEqual(
        (await call(t, 'artifact_read', { callId: handle.callId })).result.lines.map((l) => l.text),
        ['one', 'two'],
      );
    } finally {
      await t.dispose();
    }
  });

  it('reads whole files up to the non-streaming cap, and refuses larger ones with E_SANDBOX_TOO_LARGE', async () => {
    const t = testSession({
      fs: new NodeFs({ localPaths: false, streaming: false }),
      overrides: { limits: () => ({ ...DEFAULT_LIMITS, nonStreamingMaxBytes: 1024 }) },
    });
    try {
      write(t, 'small.txt', 'fits\n');
      assert.equal((await open(t, 'small.txt')).lines, 1);
      write(t, 'large.txt', 'z'.repeat(2048));
      await assert.rejects(call(t, 'open_file', { path: 'large.txt' }), {
        code: 'E_SANDBOX_TOO_LARGE',
        message:
          '"large.txt" is 2.0 KiB, more than the 1.0 KiB this workspace\'s filesystem can open without streaming. Search it with search_files instead, or ask the user to raise the non-streaming size limit setting.',
      });
    } finally {
      await t.dispose();
    }
  });
});
