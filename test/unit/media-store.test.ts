import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { DEFAULT_LIMITS } from '../../src/core/pipeline/session.ts';
import { MediaStore } from '../../src/core/media/store.ts';
import type { MediaChange } from '../../src/core/media/types.ts';
import { normalizeModelPath, type WorkspaceRoot } from '../../src/core/paths.ts';
import { decodeFile, encodeText } from '../../src/core/text/encoding.ts';
import { countLines, detectEol, withEol } from '../../src/core/text/eol.ts';
import { lineCounts } from '../../src/core/text/line-counts.ts';
import { checkWriteRoots, isInWriteRoots, parseWriteRoots } from '../../src/core/media/write-roots.ts';
import { session, runTool } from './harness.ts';
import { join, manualClock, rejectsWith, throwsWith } from './media-fixtures.ts';

const ROOTS: WorkspaceRoot[] = [{ name: 'ws', address: '/ws', localPath: '/ws' }];
const path = (p: string) => normalizeModelPath(p, ROOTS);
const bytes = (s: string) => new Uint8Array(Buffer.from(s));

function store(budget = 1024 ** 2): { store: MediaStore; events: MediaChange[] } {
  const s = new MediaStore({ clock: manualClock(), budgetBytes: () => budget });
  const events: MediaChange[] = [];
  s.onDidChange((e) => events.push(e));
  return { store: s, events };
}

const summary = (e: MediaChange): string => {
  switch (e.kind) {
    case 'added':
      return `added ${e.media.id} ${e.media.origin}`;
    case 'saved':
      return `saved ${e.media.id} stale=${e.stale.join(',')} rebased=${e.rebased.join(',')}`;
    case 'discarded':
    case 'evicted':
    case 'stale':
      return `${e.kind} ${e.ids.join(',')}`;
    case 'cleared':
      return 'cleared';
  }
};

test('the store fires one event per change, and a disposed listener hears nothing more', () => {
  const { store: s, events } = store();
  const m1 = s.stage(path('a.txt'), bytes('a\n'));
  const m2 = s.derive(m1.id, bytes('b\n'), { text: 'b\n' });
  s.stagePersonEdit(m2.id, bytes('c\n'));
  s.markSaved('m3', path('a.txt'), bytes('c\n'));
  const late: MediaChange[] = [];
  const subscription = s.onDidChange((e) => late.push(e));
  s.stage(path('b.txt'), undefined, 'new\n');
  subscription.dispose();
  s.discard('m4');
  s.clear();
  assert.deepEqual(events.map(summary), [
    'added m1 model',
    'added m2 model',
    'added m3 person',
    'saved m3 stale= rebased=',
    'added m4 model',
    'discarded m4',
    'cleared',
  ]);
  assert.deepEqual(late.map(summary), ['added m4 model']);
});

test('a listener that throws does not stop the change or the other listeners', () => {
  const { store: s, events } = store();
  s.onDidChange(() => {
    throw new Error('view crashed');
  });
  const after: string[] = [];
  s.onDidChange((e) => after.push(e.kind));
  s.stage(path('a.txt'), bytes('a'));
  assert.deepEqual(
    s.all().map((m) => m.id),
    ['m1'],
  );
  assert.deepEqual(after, ['added']);
  assert.equal(events.length, 1);
});

test('discard removes a line of edits and its descendants; the model is told the id was discarded', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'a.txt'), 'a\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'a.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'a', replace: 'b' } });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm2', patch: { find: 'b', replace: 'c' } });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'a', replace: 'z' } });
  const media = t.session.media;
  assert.deepEqual(
    media.heads().map((m) => m.id),
    ['m3', 'm4'],
  );
  // Discarding m2 takes m3 (derived from it); m1 stays, since m4 still builds on it.
  assert.deepEqual(media.discard('m2'), ['m2', 'm3']);
  assert.deepEqual(
    media.all().map((m) => m.id),
    ['m1', 'm4'],
  );
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm3' }),
    'E_SANDBOX_NOT_FOUND',
    'Media "m3" was discarded by the user, so it cannot be patched or saved. Call list_media to see what is still staged, or stage the file again.',
  );
  // Discarding the last head takes its now-unused ancestors with it.
  assert.deepEqual(media.discardAll(), ['m4', 'm1']);
  assert.deepEqual(media.all(), []);
  assert.equal(readFileSync(join(t.root, 'a.txt'), 'utf8'), 'a\n');
});

test("a person's edit becomes a new version; list_media and save_media tell the model about it", async (tc) => {
  const clock = manualClock();
  const t = session(tc, { overrides: { clock } });
  writeFileSync(join(t.root, 'p.txt'), 'one\ntwo\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'p.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'two', replace: 'TWO' } });
  const media = t.session.media;
  assert.equal(media.stagePersonEdit('m2', bytes('one\nTWO\n')).id, 'm2', 'identical bytes make no new version');
  const edit = media.stagePersonEdit('m2', bytes('one\nTWO\nthree by hand\n'));
  assert.deepEqual(
    { id: edit.id, origin: edit.origin, parentId: edit.parentId, ancestors: edit.ancestors, lines: edit.lines },
    { id: 'm3', origin: 'person', parentId: 'm2', ancestors: ['m1', 'm2'], lines: 3 },
  );
  clock.advance(5_000);
  const list = await runTool(t.session, TOOLS.list_media, {});
  assert.equal(
    list.text,
    [
      '1 unsaved staged media (the latest version of each; none of this is on disk):',
      'm3 "p.txt" +2 −1, 5s old, from m2, edited by the user: +1 −0 against m2',
      'Call save_media for each change you want to keep; earlier versions keep their ids.',
    ].join('\n'),
  );
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm3' });
  assert.deepEqual(saved.result, {
    media_id: 'm3',
    path: 'p.txt',
    added: 2,
    removed: 1,
    bytes: 22,
    created: false,
    method: 'rename',
    stale: [],
    save_id: 's1',
    user_edit: { media_id: 'm3', against: 'm2', added: 1, removed: 0 },
  });
  assert.equal(
    saved.text.split('\n')[1],
    "This includes the user's own edit in the editor (m3: +1 −0 against your m2); read the file before changing it further.",
  );
  assert.equal(readFileSync(join(t.root, 'p.txt'), 'utf8'), 'one\nTWO\nthree by hand\n');
});

test('staging beyond the memory budget fails with a narrated E_SANDBOX_TOO_LARGE', async (tc) => {
  const t = session(tc, { overrides: { limits: () => ({ ...DEFAULT_LIMITS, mediaBudgetBytes: 100 }) } });
  writeFileSync(join(t.root, 'big.txt'), 'x'.repeat(101));
  writeFileSync(join(t.root, 'half.txt'), 'y'.repeat(60));
  await rejectsWith(
    runTool(t.session, TOOLS.stage_file, { path: 'big.txt' }),
    'E_SANDBOX_TOO_LARGE',
    'Staging "big.txt" needs 101 bytes, more than the whole staged-media budget of 100 bytes; nothing was staged. Edit a smaller file, or ask the user to raise the staged-media budget (workspaceTools.media.memoryBudgetMB).',
  );
  await runTool(t.session, TOOLS.stage_file, { path: 'half.txt' });
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, {
      media_id: 'm1',
      patch: { find: 'y'.repeat(60), replace: 'z'.repeat(60) },
    }),
    'E_SANDBOX_TOO_LARGE',
    'Staging "half.txt" needs 60 bytes, but staged media already hold 60 bytes of the 100 bytes budget (1 unsaved; list_media shows them); nothing was staged. Save the changes you want with save_media (the user can discard the rest), or ask the user to raise the staged-media budget (workspaceTools.media.memoryBudgetMB).',
  );
  assert.equal(t.session.media.usedBytes(), 60);
});

test('saved media are dropped from memory first when the budget is reached, with a narrated id', async (tc) => {
  const t = session(tc, { overrides: { limits: () => ({ ...DEFAULT_LIMITS, mediaBudgetBytes: 100 }) } });
  writeFileSync(join(t.root, 'a.txt'), 'a'.repeat(40));
  writeFileSync(join(t.root, 'b.txt'), 'b'.repeat(50));
  await runTool(t.session, TOOLS.stage_file, { path: 'a.txt' });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  await runTool(t.session, TOOLS.stage_file, { path: 'b.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm2',
    patch: { find: 'b'.repeat(50), replace: 'c'.repeat(50) },
  });
  assert.deepEqual(
    t.session.media.all().map((m) => m.id),
    ['m2', 'm3'],
  );
  await rejectsWith(
    runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'a'.repeat(40), replace: 'b' } }),
    'E_SANDBOX_NOT_FOUND',
    'Media "m1" was already saved and has been dropped from memory to stay within the staged-media budget. Stage the file again with stage_file to edit it further.',
  );
});

test('an unsaved media exists only in memory; a saved one records the file and the hash it wrote', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'd.txt'), 'd\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'd.txt' });
  const media = t.session.media.get('m1');
  assert.deepEqual(
    { id: media.id, size: media.bytes.byteLength, text: new TextDecoder().decode(media.bytes), saved: media.saved },
    { id: 'm1', size: 2, text: 'd\n', saved: undefined },
  );
  await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  const sha256 = createHash('sha256').update('d\n').digest('hex');
  const saved = t.session.media.get('m1').saved;
  assert.deepEqual(
    { folder: saved?.path.root.name, path: saved?.path.rel, sha256: saved?.hash },
    { folder: t.session.roots[0]!.name, path: 'd.txt', sha256 },
  );
});

test('noteDisk marks media conflicting when the host sees the file change, and clears it when it changes back', () => {
  const { store: s, events } = store();
  s.stage(path('w.txt'), bytes('w\n'));
  s.stage(path('other.txt'), bytes('o\n'));
  assert.deepEqual(s.noteDisk(path('w.txt'), bytes('changed\n')), ['m1']);
  assert.deepEqual(s.get('m1').stale, { kind: 'disk-changed' });
  assert.deepEqual(s.noteDisk(path('w.txt'), bytes('w\n')), []);
  assert.equal(s.get('m1').stale, undefined);
  assert.deepEqual(s.noteDisk(path('w.txt'), undefined), ['m1']);
  assert.deepEqual(events.map(summary).slice(2), ['stale m1', 'stale m1', 'stale m1']);
});

test('target() is pure and narrates unknown ids', () => {
  const { store: s } = store();
  throwsWith(
    () => s.target('m7'),
    'E_SANDBOX_NOT_FOUND',
    'No staged media has id "m7". Call list_media to see the unsaved ones, or stage the file again.',
  );
  s.stage(path('src/t.ts'), undefined, 'x');
  assert.deepEqual(s.target('m1'), path('src/t.ts'));
});

test('text: encodings round-trip with their BOM, bytes that are not UTF-8 are windows1252, and binary is binary', () => {
  for (const encoding of ['utf8', 'utf8bom', 'utf16le', 'utf16be'] as const) {
    const encoded = encodeText('héllo\r\n𝄞\n', encoding, 'x.txt');
    assert.deepEqual(decodeFile(encoded, 'x.txt'), { text: 'héllo\r\n𝄞\n', encoding });
  }
  assert.deepEqual([...encodeText('A', 'utf16be', 'x.txt')], [0xfe, 0xff, 0x00, 0x41]);
  assert.deepEqual(decodeFile(new Uint8Array([0xc3, 0x28]), 'x.txt'), { text: 'Ã(', encoding: 'windows1252' });
  assert.deepEqual(decodeFile(new Uint8Array([0x81, 0xe9]), 'x.txt'), { text: '\u0081é', encoding: 'iso88591' });
  assert.deepEqual(
    decodeFile(bytes('plain'), 'x.txt', 'windows1252'),
    { text: 'plain', encoding: 'windows1252' },
    'files.encoding decides',
  );
  assert.deepEqual(decodeFile(bytes('plain'), 'x.txt', 'utf8'), { text: 'plain', encoding: 'utf8' });
  assert.equal(decodeFile(bytes('a\u0000b'), 'x.txt'), undefined);
  assert.equal(decodeFile(new Uint8Array([0xff, 0xfe, 0x41]), 'x.txt'), undefined);
  assert.deepEqual([...encodeText('café €', 'windows1252', 'x.txt')], [0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
  throwsWith(
    () => encodeText('one\ntwo 😀', 'windows1252', 'x.txt'),
    'E_SANDBOX_INVALID_INPUT',
    '"x.txt" is stored as windows1252, which has no character for "😀" (U+1F600) on line 2 of the new text; no media was made and nothing was written. Write it another way (a character windows1252 has, or an escape the file\'s language understands), or ask the user to convert the file to UTF-8 (in VS Code: "Save with Encoding"), stage it again and repeat the edit.',
  );
});

test('text: line endings, line counts and +/- counts', () => {
  assert.deepEqual(['a\nb\n', 'a\r\nb\r\n', 'a\r\nb\n', 'ab', ''].map(detectEol), [
    'lf',
    'crlf',
    'mixed',
    'none',
    'none',
  ]);
  assert.deepEqual(['', 'a', 'a\n', 'a\nb', 'a\nb\n', '\n'].map(countLines), [0, 1, 1, 2, 2, 1]);
  assert.equal(withEol('x\ny\r\nz', 'crlf'), 'x\r\ny\r\nz');
  assert.equal(withEol('x\r\ny\n', 'lf'), 'x\ny\n');
  assert.equal(withEol('x\r\ny\n', 'mixed'), 'x\r\ny\n');
  assert.deepEqual(lineCounts('a\nb\nc\n', 'a\nB\nc\nd\n'), { added: 2, removed: 1 });
  assert.deepEqual(lineCounts('', 'a\nb\n'), { added: 2, removed: 0 });
  assert.deepEqual(lineCounts('same\n', 'same\n'), { added: 0, removed: 0 });
});

test('write roots: parsed from the setting, checked purely, invalid entries never widen', () => {
  const multi: WorkspaceRoot[] = [
    { name: 'app', address: '/w/app', localPath: '/w/app' },
    { name: 'lib', address: '/w/lib', localPath: '/w/lib' },
  ];
  assert.deepEqual(parseWriteRoots(undefined, multi), { writeRoots: undefined, errors: [] });
  assert.deepEqual(parseWriteRoots(null, multi), { writeRoots: undefined, errors: [] });
  assert.deepEqual(parseWriteRoots([], multi), { writeRoots: [], errors: [] });
  const parsed = parseWriteRoots(['app/src', 'lib', '/etc'], multi);
  assert.deepEqual(
    parsed.writeRoots?.map((r) => r.display),
    ['app/src', 'lib'],
  );
  assert.deepEqual(parsed.errors, [
    'workspaceTools.writeRoots: "/etc" is ignored: Path "/etc" was refused: it is an absolute path outside the workspace folders. Give a path relative to the workspace folder, such as "src/index.ts".',
  ]);
  assert.deepEqual(parseWriteRoots('src', multi), {
    writeRoots: [],
    errors: [
      'workspaceTools.writeRoots must be a list of workspace paths such as ["src", "docs"]; no save is allowed until it is fixed.',
    ],
  });
  const at = (p: string) => normalizeModelPath(p, multi);
  assert.deepEqual(
    ['app/src/a.ts', 'app/src', 'app/srcx/a.ts', 'app/a.ts', 'lib/deep/x.ts'].map((p) =>
      isInWriteRoots(at(p), parsed.writeRoots),
    ),
    [true, true, false, false, true],
  );
  assert.equal(isInWriteRoots(at('app/a.ts'), undefined), true);
  throwsWith(
    () => checkWriteRoots(at('app/a.ts'), parsed.writeRoots),
    'E_SANDBOX_REFUSED',
    'save_media may not write "app/a.ts": it is outside the write roots ("app/src", "lib"). Save under one of them, or ask the user to add this folder to workspaceTools.writeRoots.',
  );
});

test('a file staged again with the same bytes shares the copy held already, and a save still marks every other line of edits by its own base', () => {
  const { store: s } = store();
  const first = s.stage(path('a.txt'), bytes('one\ntwo\n'));
  const again = s.stage(path('a.txt'), bytes('one\ntwo\n'));
  assert.equal(again.base.bytes, first.base.bytes, 'the same content is held once');
  assert.equal(again.bytes, first.bytes);
  assert.equal(s.usedBytes(), 8);
  const other = s.stage(path('b.txt'), bytes('one\ntwo\n'));
  assert.notEqual(
    other.base.bytes,
    first.base.bytes,
    'only within a file: what is known of bytes was found for its name',
  );
  assert.equal(s.usedBytes(), 16);
  const edited = s.derive(first.id, bytes('one\nTWO\n'), { text: 'one\nTWO\n' });
  const written = edited.bytes;
  assert.deepEqual(s.markSaved(edited.id, path('a.txt'), written), { stale: [again.id], rebased: [] });
  assert.deepEqual(s.get(again.id).stale, { kind: 'saved', by: edited.id });
  const afterSave = s.stage(path('a.txt'), bytes('one\nTWO\n'));
  assert.equal(afterSave.base.bytes, written, 'staged from what the save wrote: that copy is shared');
  assert.equal(afterSave.stale, undefined);
  assert.deepEqual(s.noteDisk(path('a.txt'), bytes('one\nTWO\n')), [first.id, again.id]);
  assert.deepEqual(s.noteDisk(path('a.txt'), bytes('one\ntwo\n')), [afterSave.id]);
});
