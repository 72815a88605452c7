import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { DEFAULT_LIMITS } from '../../src/core/pipeline/session.ts';
import type { TextEncoding } from '../../src/core/text/encoding.ts';
import { session, runTool } from './harness.ts';
import { join, rejectsWith } from './media-fixtures.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

/** How each encoding writes text, built here from Node's own encoders (not from the code under test). */
const WRITERS: Record<string, (text: string) => Buffer> = {
  utf16le: (text) => Buffer.from(text, 'utf16le'),
  utf16be: (text) => Buffer.from(text, 'utf16le').swap16(),
  utf8bom: (text) => Buffer.from(text, 'utf8'),
  // Every character used below is in latin-1's range, where windows-1252 has the same bytes; "\x80" is its "€".
  windows1252: (text) => Buffer.from(text, 'latin1'),
};
const BOMS: Record<string, number[]> = {
  utf16le: [0xff, 0xfe],
  utf16be: [0xfe, 0xff],
  utf8bom: [0xef, 0xbb, 0xbf],
  windows1252: [],
};

const BEFORE = 'caf\xe9 cr\xe8me\r\n';
const LINE = 'second line';
const AFTER = '\r\nd\xe9j\xe0 vu\r\nno final newline';

for (const encoding of ['utf16le', 'utf16be', 'utf8bom', 'windows1252'] as const) {
  test(`a ${encoding} file opens, stages, patches and saves in its own encoding, every byte outside the patched line unchanged`, async (tc) => {
    const t = session(tc);
    const write = WRITERS[encoding]!;
    const euro = encoding === 'windows1252' ? '\x80' : '€';
    const file = join(t.root, 'menu.txt');
    const original = Buffer.concat([Buffer.from(BOMS[encoding]!), write(BEFORE), write(LINE), write(AFTER)]);
    writeFileSync(file, original);

    const opened = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'menu.txt' })).result);
    assert.deepEqual(
      { encoding: opened.encoding, bytes: opened.bytes, lines: opened.lines, eol: opened.eol, binary: opened.binary },
      { encoding, bytes: original.length, lines: 4, eol: 'crlf', binary: false },
    );
    const page = (await runTool(t.session, TOOLS.artifact_read, { callId: opened.callId })).result;
    assert.deepEqual(
      page.lines.map((l) => l.text),
      ['café crème', 'second line', 'déjà vu', 'no final newline'],
    );

    const staged = (await runTool(t.session, TOOLS.stage_file, { path: 'menu.txt' })).result;
    assert.deepEqual(
      { encoding: staged.encoding, bytes: staged.bytes, lines: staged.lines, eol: staged.eol },
      { encoding: opened.encoding, bytes: original.length, lines: 4, eol: 'crlf' },
    );

    const patched = (
      await runTool(t.session, TOOLS.media_apply_patch, {
        media_id: staged.media_id,
        patch: { find: 'second line', replace: 'deuxième ligne €' },
      })
    ).result;
    assert.deepEqual([patched.added, patched.removed, patched.lines], [1, 1, 4]);
    await runTool(t.session, TOOLS.save_media, { media_id: patched.media_id });

    const expected = Buffer.concat([
      Buffer.from(BOMS[encoding]!),
      write(BEFORE),
      write(`deuxi\xe8me ligne ${euro}`),
      write(AFTER),
    ]);
    assert.deepEqual(readFileSync(file), expected);
    const reopened = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'menu.txt' })).result);
    assert.equal(reopened.encoding, encoding);
  });
}

test("a character the file's encoding cannot hold is a narrated error that makes no media and writes nothing", async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'old.txt');
  const original = Buffer.from('caf\xe9\nsecond\n', 'latin1');
  writeFileSync(file, original);
  const staged = (await runTool(t.session, TOOLS.stage_file, { path: 'old.txt' })).result;
  assert.equal(staged.encoding, 'windows1252');
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, {
      media_id: staged.media_id,
      patch: { find: 'second', replace: 'second ✓' },
    }),
    'E_SANDBOX_INVALID_INPUT',
    '"old.txt" is stored as windows1252, which has no character for "✓" (U+2713) on line 2 of the new text; no media was made and nothing was written. Write it another way (a character windows1252 has, or an escape the file\'s language understands), or ask the user to convert the file to UTF-8 (in VS Code: "Save with Encoding"), stage it again and repeat the edit.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.stage_file, { path: 'old.txt', content: 'one\ntwo 😀\n' }),
    'E_SANDBOX_INVALID_INPUT',
    '"old.txt" is stored as windows1252, which has no character for "😀" (U+1F600) on line 2 of the new text; no media was made and nothing was written. Write it another way (a character windows1252 has, or an escape the file\'s language understands), or ask the user to convert the file to UTF-8 (in VS Code: "Save with Encoding"), stage it again and repeat the edit.',
  );
  assert.deepEqual(
    t.session.media.all().map((m) => m.id),
    [staged.media_id],
  );
  assert.deepEqual(readFileSync(file), original);
});

test("the encoding the user's files.encoding gives a file decides open, stage and save; a BOM still wins", async (tc) => {
  const asked: string[] = [];
  const encodingOf = (path: { rel: string }): TextEncoding | undefined => {
    asked.push(path.rel);
    return path.rel.startsWith('ru/') ? 'windows1251' : undefined;
  };
  const t = session(tc, { overrides: { encodingOf } });
  mkdirSync(join(t.root, 'ru'));
  // "Привет\n" in windows-1251; detection alone would read it as windows1252 ("Ïðèâåò").
  const file = join(t.root, 'ru', 'hello.txt');
  const original = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x0a]);
  writeFileSync(file, original);
  const opened = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'ru/hello.txt' })).result);
  assert.equal(opened.encoding, 'windows1251');
  const page = (await runTool(t.session, TOOLS.artifact_read, { callId: opened.callId })).result;
  assert.deepEqual(
    page.lines.map((l) => l.text),
    ['Привет'],
  );
  const staged = (await runTool(t.session, TOOLS.stage_file, { path: 'ru/hello.txt' })).result;
  assert.equal(staged.encoding, 'windows1251');
  const patched = (
    await runTool(t.session, TOOLS.media_apply_patch, {
      media_id: staged.media_id,
      patch: { find: 'Привет', replace: 'Привет, мир' },
    })
  ).result;
  await runTool(t.session, TOOLS.save_media, { media_id: patched.media_id });
  assert.deepEqual(
    readFileSync(file),
    Buffer.concat([original.subarray(0, 6), Buffer.from([0x2c, 0x20, 0xec, 0xe8, 0xf0]), Buffer.from([0x0a])]),
  );
  assert.ok(asked.includes('ru/hello.txt'));

  writeFileSync(
    join(t.root, 'ru', 'bom.txt'),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Привет\n')]),
  );
  assert.equal(oneFile((await runTool(t.session, TOOLS.open_file, { path: 'ru/bom.txt' })).result).encoding, 'utf8bom');
  assert.equal((await runTool(t.session, TOOLS.stage_file, { path: 'ru/bom.txt' })).result.encoding, 'utf8bom');
});

test('a large non-UTF-8 file is transcoded chunk by chunk on every backend, falling back to latin-1 for a byte windows-1252 leaves undefined', async (tc) => {
  const body = Buffer.from('caf\xe9 cr\xe8me\n'.repeat(100_000), 'latin1'); // 1.1 MB: several read chunks
  for (const fs of [
    undefined,
    new NodeFs({ localPaths: false }),
    new NodeFs({ localPaths: false, streaming: false }),
  ]) {
    const t = session(
      tc,
      fs ? { fs, overrides: { limits: () => ({ ...DEFAULT_LIMITS, nonStreamingMaxBytes: 8 * 1024 * 1024 }) } } : {},
    );
    writeFileSync(join(t.root, 'cp.txt'), Buffer.concat([body, Buffer.from('end \x80\n', 'latin1')]));
    writeFileSync(join(t.root, 'l1.txt'), Buffer.concat([body, Buffer.from([0x81, 0x0a])]));
    const cp = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'cp.txt' })).result);
    assert.deepEqual([cp.encoding, cp.lines, cp.bytes], ['windows1252', 100_001, body.length + 6]);
    const last = (await runTool(t.session, TOOLS.artifact_read, { callId: cp.callId, offset: 100_000 })).result;
    assert.deepEqual(
      last.lines.map((l) => l.text),
      ['café crème', 'end €'],
    );
    const l1 = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'l1.txt' })).result);
    assert.deepEqual([l1.encoding, l1.lines], ['iso88591', 100_001]);
    const tail = (await runTool(t.session, TOOLS.artifact_read, { callId: l1.callId, offset: 100_001 })).result;
    assert.deepEqual(
      tail.lines.map((l) => l.text),
      ['\u0081'],
    );
    assert.equal((await runTool(t.session, TOOLS.stage_file, { path: 'l1.txt' })).result.encoding, 'iso88591');
  }
});
