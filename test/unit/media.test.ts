import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { session, runTool } from './harness.ts';
import { join, manualClock, rejectsWith } from './media-fixtures.ts';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

test('stage → patch → patch leaves the disk unchanged; save writes exactly the last version', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'src', 'app.ts');
  mkdirSync(join(t.root, 'src'));
  writeFileSync(file, 'const a = 1;\nconst b = 2;\nexport { a, b };\n');

  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'src/app.ts' });
  assert.deepEqual(staged.result, {
    media_id: 'm1',
    path: 'src/app.ts',
    bytes: 43,
    lines: 3,
    encoding: 'utf8',
    eol: 'lf',
    isNew: false,
  });
  const first = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'const a = 1;', replace: 'const a = 10;' },
  });
  assert.deepEqual(first.result, {
    media_id: 'm2',
    parent_id: 'm1',
    path: 'src/app.ts',
    added: 1,
    removed: 1,
    bytes: 44,
    lines: 3,
  });
  const second = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm2',
    patch: { find: 'const b = 2;\n', replace: 'const b = 2;\nconst c = 3;\n' },
  });
  assert.deepEqual(second.result, {
    media_id: 'm3',
    parent_id: 'm2',
    path: 'src/app.ts',
    added: 1,
    removed: 0,
    bytes: 57,
    lines: 4,
  });

  assert.equal(readFileSync(file, 'utf8'), 'const a = 1;\nconst b = 2;\nexport { a, b };\n');

  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm3' });
  assert.deepEqual(saved.result, {
    media_id: 'm3',
    path: 'src/app.ts',
    added: 2,
    removed: 1,
    bytes: 57,
    created: false,
    method: 'rename',
    stale: [],
    save_id: 's1',
  });
  assert.equal(readFileSync(file, 'utf8'), 'const a = 10;\nconst b = 2;\nconst c = 3;\nexport { a, b };\n');
});

test('renderings are pinned: stage, patch, save', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'a.txt'), 'one\ntwo\n');
  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'a.txt' });
  assert.equal(
    staged.text,
    '{"media_id":"m1","path":"a.txt","lines":2}\nNothing written: patch it (media_apply_patch), then save_media.',
  );
  const patched = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'two', replace: '2' },
  });
  assert.equal(
    patched.text,
    '{"media_id":"m2","path":"a.txt","added":1,"removed":1}\nIn memory only (m1 stays valid): save_media media_id "m2" writes it.',
  );
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.equal(saved.text, '{"save_id":"s1","path":"a.txt","added":1,"removed":1}');
  const created = await runTool(t.session, TOOLS.stage_file, { path: 'b.txt', content: 'new\n' });
  assert.equal(
    created.text,
    '{"media_id":"m3","path":"b.txt","lines":1,"new":true}\nNothing written yet: save_media (media_ids for several).',
  );
});

test('earlier media ids stay valid: saving the middle version rebases the later one, which saves cleanly', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'n.txt');
  writeFileSync(file, 'a\nb\nc\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'n.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'a\n', replace: 'A\n' } });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm2', patch: { find: 'c\n', replace: 'C\n' } });
  const middle = await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.deepEqual(middle.result, {
    media_id: 'm2',
    path: 'n.txt',
    added: 1,
    removed: 1,
    bytes: 6,
    created: false,
    method: 'rename',
    stale: [],
    save_id: 's1',
  });
  assert.equal(readFileSync(file, 'utf8'), 'A\nb\nc\n');
  const last = await runTool(t.session, TOOLS.save_media, { media_id: 'm3' });
  assert.deepEqual(last.result, {
    media_id: 'm3',
    path: 'n.txt',
    added: 1,
    removed: 1,
    bytes: 6,
    created: false,
    method: 'rename',
    stale: [],
    save_id: 's2',
  });
  assert.equal(readFileSync(file, 'utf8'), 'A\nb\nC\n');
  // m1 was staged from the original bytes: saving it now would overwrite the saved edits.
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_CONFLICT',
    '"n.txt" changed on disk after m1 was staged (media m3 was saved to it since); saving would overwrite that change. Stage the file again with stage_file, re-apply your edits to the new media, and save it.',
  );
});

test('a CRLF file with a BOM patched from LF find text keeps CRLF and the BOM', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'win.cs');
  writeFileSync(file, Buffer.concat([BOM, Buffer.from('class A\r\n{\r\n    int x;\r\n}\r\n')]));
  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'win.cs' });
  assert.deepEqual(staged.result, {
    media_id: 'm1',
    path: 'win.cs',
    bytes: 30,
    lines: 4,
    encoding: 'utf8bom',
    eol: 'crlf',
    isNew: false,
  });
  const patched = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: '{\n    int x;\n}', replace: '{\n    int x;\n    int y;\n}' },
  });
  assert.deepEqual(patched.result, {
    media_id: 'm2',
    parent_id: 'm1',
    path: 'win.cs',
    added: 1,
    removed: 0,
    bytes: 42,
    lines: 5,
    normalized_line_endings: [1],
  });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.deepEqual(
    readFileSync(file),
    Buffer.concat([BOM, Buffer.from('class A\r\n{\r\n    int x;\r\n    int y;\r\n}\r\n')]),
  );
});

test('a single-line find in a CRLF file gets CRLF in its multi-line replacement', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'w.txt');
  writeFileSync(file, 'first\r\nsecond\r\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'w.txt' });
  const patched = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'second', replace: 'second\nthird' },
  });
  assert.deepEqual(patched.result, {
    media_id: 'm2',
    parent_id: 'm1',
    path: 'w.txt',
    added: 1,
    removed: 0,
    bytes: 22,
    lines: 3,
  });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.equal(readFileSync(file, 'latin1'), 'first\r\nsecond\r\nthird\r\n');
});

test('UTF-16 LE and BE files (with BOM) are patched as text and saved in their encoding', async (tc) => {
  const t = session(tc);
  const le = join(t.root, 'le.txt');
  const be = join(t.root, 'be.txt');
  writeFileSync(le, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\r\nwörld\r\n', 'utf16le')]));
  const beBody = Buffer.from('héllo\nwörld\n', 'utf16le').swap16();
  writeFileSync(be, Buffer.concat([Buffer.from([0xfe, 0xff]), beBody]));

  const s1 = await runTool(t.session, TOOLS.stage_file, { path: 'le.txt' });
  assert.deepEqual(s1.result, {
    media_id: 'm1',
    path: 'le.txt',
    bytes: 30,
    lines: 2,
    encoding: 'utf16le',
    eol: 'crlf',
    isNew: false,
  });
  await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'wörld\n', replace: 'wörld\n¡olé!\n' },
  });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.deepEqual(
    readFileSync(le),
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\r\nwörld\r\n¡olé!\r\n', 'utf16le')]),
  );

  const s2 = await runTool(t.session, TOOLS.stage_file, { path: 'be.txt' });
  assert.deepEqual(s2.result, {
    media_id: 'm3',
    path: 'be.txt',
    bytes: 26,
    lines: 2,
    encoding: 'utf16be',
    eol: 'lf',
    isNew: false,
  });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm3', patch: { find: 'héllo', replace: 'bye' } });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm4' });
  assert.deepEqual(
    readFileSync(be),
    Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('bye\nwörld\n', 'utf16le').swap16()]),
  );
});

test('stage_file with content of an existing CRLF file writes it with CRLF; new files are UTF-8 as given', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'c.txt'), Buffer.concat([BOM, Buffer.from('old\r\n')]));
  const replaced = await runTool(t.session, TOOLS.stage_file, { path: 'c.txt', content: 'new\nlines\n' });
  assert.deepEqual(replaced.result, {
    media_id: 'm1',
    path: 'c.txt',
    bytes: 15,
    lines: 2,
    encoding: 'utf8bom',
    eol: 'crlf',
    isNew: false,
  });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  assert.deepEqual(readFileSync(join(t.root, 'c.txt')), Buffer.concat([BOM, Buffer.from('new\r\nlines\r\n')]));
});

test('a find that matches several times is refused with the line numbers of each match', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'm.py'), 'x = 1\nprint(x)\ny = 2\nprint(x)\n\nprint(x)\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'm.py' });
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'print(x)', replace: 'print(y)' } }),
    'E_SANDBOX_INVALID_INPUT',
    'find matches 3 times in m1 ("m.py"), at lines 2, 4 and 6; nothing was changed. Add surrounding lines to find so that it matches once, or set replace_all: true to replace every occurrence.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: ' ', replace: '' } }),
    'E_SANDBOX_INVALID_INPUT',
    'find matches 4 times in m1 ("m.py"), at lines 1 (2 times) and 3 (2 times); nothing was changed. Add surrounding lines to find so that it matches once, or set replace_all: true to replace every occurrence.',
  );
  const all = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'print(x)', replace: 'print(y)', replace_all: true },
  });
  assert.deepEqual(all.result, {
    media_id: 'm2',
    parent_id: 'm1',
    path: 'm.py',
    added: 3,
    removed: 3,
    bytes: 40,
    lines: 6,
  });
});

test('a find that matches nowhere is refused with the closest lines', async (tc) => {
  const t = session(tc);
  writeFileSync(
    join(t.root, 'f.ts'),
    'function add(a: number, b: number) {\n  return a + b;\n}\n\nfunction sub(a: number, b: number) {\n  return a - b;\n}\n',
  );
  await runTool(t.session, TOOLS.stage_file, { path: 'f.ts' });
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, {
      media_id: 'm1',
      patch: { find: 'function sub(a, b) {\n    return a - b;\n}', replace: 'x' },
    }),
    'E_SANDBOX_NOT_FOUND',
    'find was not found in m1 ("f.ts"); nothing was changed. The closest text is at lines 5-7:\n5| function sub(a: number, b: number) {\n6|   return a - b;\n7| }\nCopy the text exactly as it is there (indentation and whitespace included) and call media_apply_patch again.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'zzzz qqqq', replace: 'x' } }),
    'E_SANDBOX_NOT_FOUND',
    'find was not found in m1 ("f.ts"), and no line resembles it; nothing was changed. Check that the text is in this version of the file (earlier edits may have changed it), then call media_apply_patch again.',
  );
});

test('an empty find and a find equal to its replace are rejected', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'e.txt'), 'text\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'e.txt' });
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: '', replace: 'x' } }),
    'E_SANDBOX_INVALID_INPUT',
    'media_apply_patch: Argument "patch.find" is invalid (got ""): find is empty, and an empty find would match everywhere; give the exact text to replace. Fix the arguments and call again.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'text', replace: 'text' } }),
    'E_SANDBOX_INVALID_INPUT',
    'find and replace are the same text, so the edit would change nothing; nothing was changed. Give the new text in replace.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, {
      media_id: 'm1',
      patch: [
        { find: 'text', replace: 'TEXT' },
        { find: 'TEXT', replace: 'TEXT' },
      ],
    }),
    'E_SANDBOX_INVALID_INPUT',
    'Edit 2 of 2: find and replace are the same text, so the edit would change nothing; nothing was changed. Give the new text in replace.',
  );
  assert.deepEqual(
    t.session.media.all().map((m) => m.id),
    ['m1'],
  );
});

test('a list of edits applies in order and all-or-nothing', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'l.txt'), 'alpha\nbeta\ngamma\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'l.txt' });
  const ok = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: [
      { find: 'alpha', replace: 'ALPHA' },
      { find: 'ALPHA\nbeta', replace: 'ALPHA+beta' },
    ],
  });
  assert.deepEqual(ok.result, {
    media_id: 'm2',
    parent_id: 'm1',
    path: 'l.txt',
    added: 1,
    removed: 2,
    bytes: 17,
    lines: 2,
  });
  assert.equal(new TextDecoder().decode(t.session.media.get('m2').bytes), 'ALPHA+beta\ngamma\n');
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, {
      media_id: 'm1',
      patch: [
        { find: 'alpha', replace: 'A' },
        { find: 'delta', replace: 'D' },
      ],
    }),
    'E_SANDBOX_NOT_FOUND',
    'Edit 2 of 2: find was not found in m1 ("l.txt"), and no line resembles it; nothing was changed. Check that the text is in this version of the file (earlier edits may have changed it), then call media_apply_patch again.',
  );
  assert.deepEqual(
    t.session.media.all().map((m) => m.id),
    ['m1', 'm2'],
  );
});

test('a unified diff applies (an LF diff to a CRLF file keeps CRLF)', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'u.txt');
  writeFileSync(file, 'one\r\ntwo\r\nthree\r\nfour\r\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'u.txt' });
  const patched = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { unified: '--- a/u.txt\n+++ b/u.txt\n@@ -2,2 +2,3 @@\n two\n-three\n+THREE\n+three and a half\n' },
  });
  assert.deepEqual(patched.result, {
    media_id: 'm2',
    parent_id: 'm1',
    path: 'u.txt',
    added: 2,
    removed: 1,
    bytes: 41,
    lines: 5,
  });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.equal(readFileSync(file, 'latin1'), 'one\r\ntwo\r\nTHREE\r\nthree and a half\r\nfour\r\n');
});

test('a unified diff that does not apply names the hunk and shows the closest lines', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'd.txt'), 'apple\nbanana\ncherry\ndate\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'd.txt' });
  const diff = '@@ -1,2 +1,2 @@\n apple\n-banana\n+BANANA\n@@ -3,2 +3,2 @@\n cherri\n-dates\n+DATE\n';
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { unified: diff } }),
    'E_SANDBOX_NOT_FOUND',
    'The unified diff does not apply: hunk 2 of 2 (@@ -3,2 +3,2 @@) expects lines that are not in m1 ("d.txt"); nothing was changed. The closest text is at lines 3-4:\n3| cherry\n4| date\nMake the hunk\'s context and "-" lines match the media exactly, or use {find, replace} edits, and call media_apply_patch again.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { unified: 'just some text\n' } }),
    'E_SANDBOX_INVALID_INPUT',
    'The unified diff has no hunks (no "@@ -start,count +start,count @@" lines); nothing was changed. Give at least one hunk, or use {find, replace} edits.',
  );
  assert.deepEqual(
    t.session.media.all().map((m) => m.id),
    ['m1'],
  );
});

test('stage_file of a missing file without content, of a folder, and patching a binary media are narrated', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, 'dir'));
  writeFileSync(join(t.root, 'img.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe]));
  await rejectsWith(
    runTool(t.session, TOOLS.stage_file, { path: 'nope.txt' }),
    'E_SANDBOX_NOT_FOUND',
    '"nope.txt" does not exist, so there is nothing to stage. To create it, call stage_file with content (the full text of the new file).',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.stage_file, { path: 'dir' }),
    'E_SANDBOX_INVALID_INPUT',
    '"dir" is a directory, not a file; only files can be staged. Use list_directory to see what it holds.',
  );
  const bin = await runTool(t.session, TOOLS.stage_file, { path: 'img.bin' });
  assert.deepEqual(bin.result, {
    media_id: 'm1',
    path: 'img.bin',
    bytes: 7,
    lines: 0,
    encoding: 'binary',
    eol: 'none',
    isNew: false,
  });
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'PNG', replace: 'GIF' } }),
    'E_SANDBOX_BINARY',
    'Media m1 ("img.bin") holds binary bytes, so it cannot be patched as text. Stage a text file, or replace the whole file with stage_file and content.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm9', patch: { find: 'a', replace: 'b' } }),
    'E_SANDBOX_NOT_FOUND',
    'No staged media has id "m9". Call list_media to see the unsaved ones, or stage the file again.',
  );
});

test('list_media shows the latest unsaved version of each line of edits, pinned', async (tc) => {
  const clock = manualClock();
  const t = session(tc, { overrides: { clock } });
  writeFileSync(join(t.root, 'a.txt'), 'one\ntwo\nthree\n');
  assert.equal((await runTool(t.session, TOOLS.list_media, {})).text, 'No unsaved staged media.');
  await runTool(t.session, TOOLS.stage_file, { path: 'a.txt' });
  clock.advance(30_000);
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'two\n', replace: 'TWO\n2\n' } });
  await runTool(t.session, TOOLS.stage_file, { path: 'new/b.md', content: '# B\n' });
  await runTool(t.session, TOOLS.stage_file, { path: 'a.txt' });
  clock.advance(125_000);
  const list = await runTool(t.session, TOOLS.list_media, {});
  assert.deepEqual(list.result, {
    media: [
      { media_id: 'm2', path: 'a.txt', added: 2, removed: 1, is_new: false, age_s: 125, parent_id: 'm1' },
      { media_id: 'm3', path: 'new/b.md', added: 1, removed: 0, is_new: true, age_s: 125 },
      { media_id: 'm4', path: 'a.txt', added: 0, removed: 0, is_new: false, age_s: 125 },
    ],
  });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  const after = await runTool(t.session, TOOLS.list_media, {});
  assert.equal(
    after.text,
    [
      '2 unsaved staged media (the latest version of each; none of this is on disk):',
      'm3 "new/b.md" (new file) +1 −0, 2min old',
      'm4 "a.txt" +0 −0, 2min old, STALE: m2 was saved to this file since; stage it again to edit further',
      'Call save_media for each change you want to keep; earlier versions keep their ids.',
    ].join('\n'),
  );
});
