import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { prepare } from '../../src/core/pipeline/prepare.ts';
import { session, type TestSession } from './harness.ts';
import { join } from './media-fixtures.ts';

/* Staged deletes and moves, and change sets saved in one save_media call (issue 24). */

const A = 'export const a = 1;\r\nexport const keep = 2;\r\n';
const OLD = Buffer.from([0x6f, 0x6c, 0x64, 0x0a, 0xff, 0x00]);

function fixture(t: TestSession): void {
  mkdirSync(join(t.root, 'src'));
  writeFileSync(join(t.root, 'src/a.ts'), A);
  writeFileSync(join(t.root, 'old.txt'), OLD);
}

/** The fixture with `src/a.ts` patched (m2), and `file` made holding its first letter and staged holding it capitalized (m3): a set of two to save. */
async function editAndRewrite(tc: Parameters<typeof session>[0], file: string): Promise<TestSession> {
  const t = session(tc);
  fixture(t);
  const letter = file[0]!;
  writeFileSync(join(t.root, file), `${letter}\n`);
  await t.invoke('stage_file', { path: 'src/a.ts', patch: { find: 'a = 1', replace: 'a = 2' } });
  await t.invoke('stage_file', { path: file, content: `${letter.toUpperCase()}\n` });
  return t;
}

async function codeOf(p: Promise<unknown>): Promise<[string, string]> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(e instanceof Error && 'code' in e, `expected a narrated error, got ${String(e)}`);
  return [String((e as { code: unknown }).code), e.message];
}

test('a rename with an edit and a delete, saved in one save_media call; undo_save restores both byte for byte', async (tc) => {
  const t = session(tc);
  fixture(t);
  const moved = await t.invoke('stage_file', {
    path: 'src/a.ts',
    action: 'move',
    to: 'src/b.ts',
    patch: { find: 'a = 1', replace: 'b = 1' },
  });
  assert.deepEqual(
    [
      moved.result.media_id,
      moved.result.path,
      moved.result.from,
      moved.result.action,
      moved.result.added,
      moved.result.removed,
    ],
    ['m2', 'src/b.ts', 'src/a.ts', 'move', 1, 1],
  );
  assert.equal(
    moved.text,
    '{"media_id":"m2","path":"src/b.ts","action":"move","from":"src/a.ts","added":1,"removed":1}\nNothing written yet: save_media (media_ids for several).',
  );
  const deleted = await t.invoke('stage_file', { path: 'old.txt', action: 'delete' });
  // old.txt is binary: no line counts.
  assert.deepEqual([deleted.result.media_id, deleted.result.action, deleted.result.removed], ['m3', 'delete', 0]);
  // Nothing on disk changed yet.
  assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A);
  assert.equal(existsSync(join(t.root, 'src/b.ts')), false);
  assert.deepEqual(
    prepare(t.session, TOOLS.save_media, { media_ids: ['m2', 'm3'] }).writes.map((w) => [
      w.kind,
      w.path.display,
      w.from?.display,
      w.mediaId,
      w.added,
      w.removed,
    ]),
    [
      ['move', 'src/b.ts', 'src/a.ts', 'm2', 1, 1],
      ['delete', 'old.txt', undefined, 'm3', 0, 0],
    ],
  );
  const asked = t.gate.calls.length;
  const saved = await t.invoke('save_media', { media_ids: ['m2', 'm3'] });
  assert.equal(t.gate.calls.length, asked + 1, 'one confirmation for the set');
  const call = t.gate.calls.at(-1)!;
  assert.deepEqual(
    call.targets.map((x) => x.display),
    ['src/a.ts', 'src/b.ts', 'old.txt'],
  );
  assert.equal(call.summary, 'save move src/a.ts → src/b.ts (m2) +1 −1; delete old.txt (m3) +0 −0');
  assert.equal(saved.text, '{"save_id":"s1"}\nSaved: move src/a.ts → src/b.ts +1 −1; delete old.txt +0 −0.');
  assert.equal(existsSync(join(t.root, 'src/a.ts')), false);
  assert.equal(readFileSync(join(t.root, 'src/b.ts'), 'utf8'), 'export const b = 1;\r\nexport const keep = 2;\r\n');
  assert.equal(existsSync(join(t.root, 'old.txt')), false);

  const undone = await t.invoke('undo_save', { save_id: 's1' });
  assert.deepEqual(undone.result, {
    save_id: 's1',
    path: 'src/b.ts',
    action: 'reverted',
    files: ['src/b.ts', 'src/a.ts', 'old.txt'],
  });
  assert.deepEqual(readFileSync(join(t.root, 'src/a.ts')), Buffer.from(A));
  assert.deepEqual(readFileSync(join(t.root, 'old.txt')), OLD);
  assert.equal(existsSync(join(t.root, 'src/b.ts')), false);
  assert.deepEqual(await codeOf(t.invoke('undo_save', { save_id: 's1' })), [
    'E_SANDBOX_INVALID_INPUT',
    'Save s1 of "src/b.ts" was already undone. Nothing was changed.',
  ]);
});

test('undo_save with a path undoes one file of a set; the rest stays as saved', async (tc) => {
  const t = session(tc);
  fixture(t);
  await t.invoke('stage_file', { path: 'src/a.ts', patch: { find: 'a = 1', replace: 'a = 2' } });
  await t.invoke('stage_file', { path: 'old.txt', action: 'delete' });
  await t.invoke('save_media', { media_ids: ['m2', 'm3'] });
  const one = await t.invoke('undo_save', { save_id: 's1', path: 'old.txt' });
  assert.equal(one.result.action, 'reverted');
  assert.deepEqual(readFileSync(join(t.root, 'old.txt')), OLD);
  assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A.replace('a = 1', 'a = 2'));
  assert.deepEqual(await codeOf(t.invoke('undo_save', { save_id: 's1', path: 'nope.txt' })), [
    'E_SANDBOX_INVALID_INPUT',
    'Save s1 did not change "nope.txt"; it changed "src/a.ts", "old.txt". Give one of those paths, or omit path to undo the whole save.',
  ]);
  // The whole set now undoes what is left of it.
  await t.invoke('undo_save', { save_id: 's1' });
  assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A);
});

test('a set whose second file has a conflict writes nothing', async (tc) => {
  const t = await editAndRewrite(tc, 'c.txt');
  writeFileSync(join(t.root, 'c.txt'), 'changed outside\n');
  const [code, message] = await codeOf(t.invoke('save_media', { media_ids: ['m2', 'm3'] }));
  assert.equal(code, 'E_SANDBOX_CONFLICT');
  assert.equal(
    message,
    '"c.txt" changed on disk after m3 was staged. Nothing in the set was written. Stage that file again, re-apply your change, and save the set again.',
  );
  assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A);
  assert.equal(readFileSync(join(t.root, 'c.txt'), 'utf8'), 'changed outside\n');
});

test(
  'a failure midway (a destination folder that cannot be written) rolls back what was written',
  { skip: process.getuid?.() === 0 ? 'root ignores folder permissions' : false },
  async (tc) => {
    const t = session(tc);
    fixture(t);
    mkdirSync(join(t.root, 'locked'));
    writeFileSync(join(t.root, 'locked/x.txt'), 'x\n');
    await t.invoke('stage_file', { path: 'src/a.ts', patch: { find: 'a = 1', replace: 'a = 2' } });
    await t.invoke('stage_file', { path: 'old.txt', action: 'delete' });
    await t.invoke('stage_file', { path: 'locked/x.txt', action: 'delete' });
    chmodSync(join(t.root, 'locked'), 0o555);
    tc.after(() => chmodSync(join(t.root, 'locked'), 0o755));
    const [, message] = await codeOf(t.invoke('save_media', { media_ids: ['m2', 'm3', 'm4'] }));
    assert.match(
      message,
      /^Saving the set failed at "locked\/x\.txt": .* What was already written \("src\/a\.ts", "old\.txt"\) was rolled back, so nothing remains changed\./,
    );
    assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A);
    assert.deepEqual(readFileSync(join(t.root, 'old.txt')), OLD);
    assert.equal(readFileSync(join(t.root, 'locked/x.txt'), 'utf8'), 'x\n');
  },
);

test('a failure midway (a file replaced by a folder between check and write) rolls back what was written', async (tc) => {
  const t = await editAndRewrite(tc, 'z.txt');
  // The write of src/a.ts is the last moment before z.txt is written: swap z.txt for a folder then.
  const off = t.session.media.onDidChange((change) => {
    if (change.kind === 'saved' && change.media.id === 'm2') {
      rmSync(join(t.root, 'z.txt'));
      mkdirSync(join(t.root, 'z.txt'));
    }
  });
  tc.after(() => off.dispose());
  const [, message] = await codeOf(t.invoke('save_media', { media_ids: ['m2', 'm3'] }));
  assert.match(
    message,
    /^Saving the set failed at "z\.txt": .*What was already written \("src\/a\.ts"\) was rolled back, so nothing remains changed\./,
  );
  assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A);
});

test('a move onto .vscode/settings.json and a move of .env ask the person; declining changes nothing', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, '.vscode'));
  writeFileSync(join(t.root, '.vscode/settings.json'), '{}\n');
  writeFileSync(join(t.root, 'cfg.json'), '{"a":1}\n');
  writeFileSync(join(t.root, '.env'), 'KEY=1\n');
  await t.invoke('stage_file', { path: 'cfg.json', action: 'move', to: '.vscode/settings.json', replace: true });
  // Staging changes nothing yet (the protected list asks when content changes): the save asks.
  assert.equal(t.gate.calls.at(-1)?.summary, 'stage moving cfg.json to .vscode/settings.json, replacing it');
  t.gate.allow = false;
  await codeOf(t.invoke('save_media', { media_id: 'm1' }));
  const save = t.gate.calls.at(-1)!;
  assert.equal(save.secret, true);
  assert.equal(save.summary, 'save move cfg.json → .vscode/settings.json (replaces it) (m1) +0 −0');
  assert.equal(readFileSync(join(t.root, '.vscode/settings.json'), 'utf8'), '{}\n');
  assert.equal(readFileSync(join(t.root, 'cfg.json'), 'utf8'), '{"a":1}\n');
  t.gate.allow = true;
  await t.invoke('stage_file', { path: '.env', action: 'move', to: 'env.txt' });
  assert.equal(t.gate.calls.at(-1)?.secret, true, 'a move of .env asks');
  t.gate.allow = false;
  await codeOf(t.invoke('save_media', { media_id: 'm2' }));
  assert.equal(t.gate.calls.at(-1)?.secret, true);
  assert.equal(readFileSync(join(t.root, '.env'), 'utf8'), 'KEY=1\n');
  assert.equal(existsSync(join(t.root, 'env.txt')), false);
});

test('a delete of a protected file asks; declined, the file stays', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, '.vscode'));
  writeFileSync(join(t.root, '.vscode/settings.json'), '{}\n');
  await t.invoke('stage_file', { path: '.vscode/settings.json', action: 'delete' });
  assert.equal(t.gate.calls.at(-1)?.secret, true);
  t.gate.allow = false;
  await codeOf(t.invoke('save_media', { media_id: 'm1' }));
  assert.equal(t.gate.calls.at(-1)?.secret, true);
  assert.equal(readFileSync(join(t.root, '.vscode/settings.json'), 'utf8'), '{}\n');
});

test('a move onto an existing file without replace is refused; a move whose source changed is a conflict', async (tc) => {
  const t = session(tc);
  fixture(t);
  writeFileSync(join(t.root, 'src/b.ts'), 'b\n');
  assert.deepEqual(await codeOf(t.invoke('stage_file', { path: 'src/a.ts', action: 'move', to: 'src/b.ts' })), [
    'E_SANDBOX_CONFLICT',
    '"src/b.ts" already exists; nothing was staged. A move replaces an existing file only with replace: true (the user is asked to confirm replacing it). Pick another destination, or stage the move again with replace: true.',
  ]);
  await t.invoke('stage_file', { path: 'src/a.ts', action: 'move', to: 'src/c.ts' });
  writeFileSync(join(t.root, 'src/a.ts'), 'changed\n');
  const [code, message] = await codeOf(t.invoke('save_media', { media_id: 'm1' }));
  assert.deepEqual(
    [code, message],
    [
      'E_SANDBOX_CONFLICT',
      '"src/a.ts" changed on disk after m1 was staged. Nothing in the set was written. Stage that file again, re-apply your change, and save the set again.',
    ],
  );
  assert.equal(existsSync(join(t.root, 'src/c.ts')), false);
  // The destination appearing after staging is a conflict too.
  writeFileSync(join(t.root, 'src/a.ts'), A);
  writeFileSync(join(t.root, 'src/c.ts'), 'c\n');
  assert.deepEqual(await codeOf(t.invoke('save_media', { media_id: 'm1' })), [
    'E_SANDBOX_CONFLICT',
    '"src/c.ts", where m1 moves "src/a.ts", exists now. Nothing in the set was written. Stage that file again, re-apply your change, and save the set again.',
  ]);
});

test('a move with replace: true replaces the destination; undo brings both back', async (tc) => {
  const t = session(tc);
  fixture(t);
  writeFileSync(join(t.root, 'src/b.ts'), 'b\n');
  await t.invoke('stage_file', { path: 'src/a.ts', action: 'move', to: 'src/b.ts', replace: true });
  await t.invoke('save_media', { media_id: 'm1' });
  assert.equal(readFileSync(join(t.root, 'src/b.ts'), 'utf8'), A);
  assert.equal(existsSync(join(t.root, 'src/a.ts')), false);
  await t.invoke('undo_save', {});
  assert.equal(readFileSync(join(t.root, 'src/b.ts'), 'utf8'), 'b\n');
  assert.equal(readFileSync(join(t.root, 'src/a.ts'), 'utf8'), A);
});

test('a folder delete is refused; bad inputs are narrated', async (tc) => {
  const t = session(tc);
  fixture(t);
  const cases: [unknown, string, string][] = [
    [
      { path: 'src', action: 'delete' },
      'E_SANDBOX_INVALID_INPUT',
      '"src" is a folder; only files can be staged for deletion (folders are out of scope: stage each file). Stage the files inside it one by one (list_directory shows them).',
    ],
    [
      { path: 'src/a.ts', action: 'move' },
      'E_SANDBOX_INVALID_INPUT',
      'action "move" needs to: the path the file moves to. Give to, e.g. {"path": "src/a.ts", "action": "move", "to": "src/b.ts"}.',
    ],
    [
      { path: 'src/a.ts', action: 'delete', content: 'x' },
      'E_SANDBOX_INVALID_INPUT',
      'A delete takes no content or patch: it removes "src/a.ts" as it is. Drop content and patch, or use action "write" to change the file.',
    ],
    [
      { path: 'src/a.ts', to: 'src/b.ts' },
      'E_SANDBOX_INVALID_INPUT',
      'to and replace belong to action "move", and this call\'s action is "write". Give action "move" to move the file, or drop to and replace.',
    ],
    [
      { path: 'nope.txt', action: 'delete' },
      'E_SANDBOX_NOT_FOUND',
      '"nope.txt" does not exist, so there is nothing to delete.',
    ],
    [
      { path: 'src/a.ts', action: 'move', to: 'src/a.ts' },
      'E_SANDBOX_INVALID_INPUT',
      'A move needs two different paths; "src/a.ts" was given as both. Give the new path in to.',
    ],
  ];
  for (const [input, code, message] of cases)
    assert.deepEqual(await codeOf(t.invoke('stage_file', input)), [code, message], JSON.stringify(input));
  await t.invoke('stage_file', { path: 'old.txt', action: 'delete' });
  const saves: [unknown, string, string][] = [
    [
      {},
      'E_SANDBOX_INVALID_INPUT',
      'save_media needs media_id (one media) or media_ids (a set), and got neither. Give media_id for one file, or media_ids for several.',
    ],
    [
      { media_id: 'm1', media_ids: ['m1'] },
      'E_SANDBOX_INVALID_INPUT',
      'save_media needs media_id (one media) or media_ids (a set), and got both. Give media_id for one file, or media_ids for several.',
    ],
    [{ media_ids: ['m1', 'm1'] }, 'E_SANDBOX_INVALID_INPUT', 'media_ids lists "m1" twice. List each media once.'],
    [
      { media_ids: ['m1'], path: 'x.txt' },
      'E_SANDBOX_INVALID_INPUT',
      'path (save elsewhere) applies to one media_id, not to a set. Save that media alone with media_id and path.',
    ],
  ];
  for (const [input, code, message] of saves)
    assert.deepEqual(await codeOf(t.invoke('save_media', input)), [code, message], JSON.stringify(input));
  const tooMany = await codeOf(
    t.invoke('save_media', { media_ids: Array.from({ length: 51 }, (_, i) => `m${i + 1}`) }),
  );
  assert.equal(tooMany[0], 'E_SANDBOX_INVALID_INPUT');
  assert.deepEqual(
    await codeOf(t.invoke('media_apply_patch', { media_id: 'm1', patch: { find: 'old', replace: 'new' } })),
    [
      'E_SANDBOX_INVALID_INPUT',
      'Media m1 stages the deletion of "old.txt", so there is nothing to patch. Stage the file again with stage_file to edit it instead of deleting it.',
    ],
  );
  assert.deepEqual(readFileSync(join(t.root, 'old.txt')), OLD);
});

test('a delete that leaves a folder empty removes the folder with it; undo_save brings both back', async (tc) => {
  const t = session(tc);
  fixture(t);
  mkdirSync(join(t.root, 'src/legacy/deep'), { recursive: true });
  writeFileSync(join(t.root, 'src/legacy/deep/old.ts'), 'export {};\n');
  mkdirSync(join(t.root, 'lib/keep'), { recursive: true });
  writeFileSync(join(t.root, 'lib/keep/one.ts'), '1\n');
  writeFileSync(join(t.root, 'lib/keep/two.ts'), '2\n');
  const staged = await t.invoke('stage_file', {
    changes: [
      { path: 'src/legacy/deep/old.ts', action: 'delete' },
      { path: 'lib/keep/one.ts', action: 'delete' },
    ],
  });
  // Staged, it says so: the review sees the folder go with the file.
  assert.deepEqual(staged.result.leaves_empty, ['src/legacy/deep/']);
  assert.match(
    staged.text,
    /\nSaving also removes src\/legacy\/deep\/, which then holds nothing \(undo_save brings it back\)\.$/,
  );
  const saved = await t.invoke('save_media', { media_ids: ['m1', 'm2'] });
  assert.deepEqual(saved.result.removed_folders, ['src/legacy/deep/', 'src/legacy/']);
  assert.match(saved.text, /Removed the emptied folders src\/legacy\/deep\/, src\/legacy\/\.$/);
  assert.deepEqual(
    [
      existsSync(join(t.root, 'src/legacy')),
      existsSync(join(t.root, 'src/a.ts')),
      existsSync(join(t.root, 'lib/keep/two.ts')),
    ],
    [false, true, true],
    'a folder that holds other files stays',
  );
  await t.invoke('undo_save', { save_id: saved.result.save_id });
  assert.equal(readFileSync(join(t.root, 'src/legacy/deep/old.ts'), 'utf8'), 'export {};\n');
  assert.equal(readFileSync(join(t.root, 'lib/keep/one.ts'), 'utf8'), '1\n');
});

test('a move out of a folder removes the folder it empties; a workspace folder is never removed', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, 'old'));
  writeFileSync(join(t.root, 'old/x.ts'), 'x\n');
  const moving = await t.invoke('stage_file', { path: 'old/x.ts', action: 'move', to: 'new/x.ts' });
  assert.deepEqual(moving.result.leaves_empty, ['old/']);
  const saved = await t.invoke('save_media', { media_id: 'm1' });
  assert.deepEqual(
    [saved.result.removed_folders, existsSync(join(t.root, 'old')), readFileSync(join(t.root, 'new/x.ts'), 'utf8')],
    [['old/'], false, 'x\n'],
  );
  await t.invoke('stage_file', { path: 'new/x.ts', action: 'move', to: 'top.ts' });
  const last = await t.invoke('save_media', { media_id: 'm2' });
  assert.deepEqual(last.result.removed_folders, ['new/']);
  // The workspace folder's last file deleted: the workspace folder stays.
  await t.invoke('stage_file', { path: 'top.ts', action: 'delete' });
  const emptied = await t.invoke('save_media', { media_id: 'm3' });
  assert.deepEqual(
    [emptied.result.removed_folders, existsSync(t.root), existsSync(join(t.root, 'top.ts'))],
    [undefined, true, false],
  );
});
