import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  chmodSync,
  writeFileSync,
  unlinkSync,
  utimesSync,
} from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import type { Session } from '../../src/core/pipeline/session.ts';
import { assemble } from '../../src/core/pipeline/assemble.ts';
import { Policy } from '../../src/core/policy/policy.ts';
import { parseWriteRoots } from '../../src/core/media/write-roots.ts';
import type { Gate } from '../../src/core/ports.ts';
import { MemoryLog, session, tempDir, testDir, runTool, testEnvironment } from './harness.ts';
import { FaultyFs, errno, join, namesIn, rejectsWith } from './media-fixtures.ts';

test('an outside write after staging makes save_media refuse with a conflict and keeps the outside change', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'c.txt');
  writeFileSync(file, 'v1\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'c.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'v1', replace: 'model' } });
  writeFileSync(file, 'person\n');
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
    'E_SANDBOX_CONFLICT',
    '"c.txt" changed on disk after m2 was staged; saving would overwrite that change. Stage the file again with stage_file, re-apply your edits to the new media, and save it.',
  );
  assert.equal(readFileSync(file, 'utf8'), 'person\n');
});

test('a change on disk past the first megabyte of a large file, at the same size, is a conflict', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'big.txt');
  const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} of a file larger than one read\n`).join('');
  writeFileSync(file, lines);
  await runTool(t.session, TOOLS.stage_file, { path: 'big.txt', patch: { find: 'line 7 of', replace: 'LINE 7 of' } });
  const outside = `${lines.slice(0, -2)}X\n`;
  const changed =
    '"big.txt" changed on disk after m2 was staged; saving would overwrite that change. Stage the file again with stage_file, re-apply your edits to the new media, and save it.';
  writeFileSync(file, outside);
  await rejectsWith(runTool(t.session, TOOLS.save_media, { media_id: 'm2' }), 'E_SANDBOX_CONFLICT', changed);
  assert.equal(readFileSync(file, 'utf8'), outside);
  writeFileSync(file, `${lines}more\n`);
  await rejectsWith(runTool(t.session, TOOLS.save_media, { media_id: 'm2' }), 'E_SANDBOX_CONFLICT', changed);
  assert.equal(readFileSync(file, 'utf8'), `${lines}more\n`);
  writeFileSync(file, lines);
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.equal(readFileSync(file, 'utf8'), lines.replace('line 7 of', 'LINE 7 of'));
});

test("NodeFs.holds compares a file with bytes chunk by chunk and never follows a link at the file's name", async (tc) => {
  const dir = testDir(tc).path;
  const fs = new NodeFs();
  const bytes = Buffer.alloc(2.5 * 1024 * 1024, 'abc');
  const file = join(dir, 'f.bin');
  writeFileSync(file, bytes);
  assert.equal(await fs.holds(file, bytes), true);
  assert.equal(await fs.holds(file, bytes.subarray(0, bytes.length - 1)), false, 'the file is longer');
  assert.equal(await fs.holds(file, Buffer.concat([bytes, Buffer.from('d')])), false, 'the file is shorter');
  const last = Buffer.from(bytes);
  last[last.length - 1] = 0x7a;
  assert.equal(await fs.holds(file, last), false, 'the last byte differs');
  writeFileSync(join(dir, 'empty'), '');
  assert.equal(await fs.holds(join(dir, 'empty'), new Uint8Array(0)), true);
  symlinkSync(file, join(dir, 'link'));
  await assert.rejects(fs.holds(join(dir, 'link'), bytes), { code: 'ELOOP' });
  const aborted = AbortSignal.abort();
  await assert.rejects(fs.holds(file, bytes, aborted), { name: 'AbortError' });
});

test('a new file in a new folder is created with its folders', async (tc) => {
  const t = session(tc);
  await runTool(t.session, TOOLS.stage_file, { path: 'pkg/deep/mod.ts', content: 'export const x = 1;\n' });
  assert.equal(existsSync(join(t.root, 'pkg')), false);
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  assert.deepEqual(saved.result, {
    media_id: 'm1',
    path: 'pkg/deep/mod.ts',
    added: 1,
    removed: 0,
    bytes: 20,
    created: true,
    method: 'rename',
    stale: [],
    save_id: 's1',
  });
  assert.equal(saved.text, '{"save_id":"s1","path":"pkg/deep/mod.ts","added":1,"removed":0,"new":true}');
  assert.equal(readFileSync(join(t.root, 'pkg', 'deep', 'mod.ts'), 'utf8'), 'export const x = 1;\n');
  assert.deepEqual(namesIn(join(t.root, 'pkg', 'deep')), ['mod.ts']);
});

test('a new file whose path appeared after staging is a conflict, not an overwrite', async (tc) => {
  const t = session(tc);
  await runTool(t.session, TOOLS.stage_file, { path: 'n.txt', content: 'mine\n' });
  writeFileSync(join(t.root, 'n.txt'), 'theirs\n');
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_CONFLICT',
    '"n.txt" did not exist when m1 was staged, but it exists now; saving would overwrite it. Stage it again with stage_file to see its content, re-apply your change, and save the new media.',
  );
  assert.equal(readFileSync(join(t.root, 'n.txt'), 'utf8'), 'theirs\n');
});

test('a file deleted after staging is a conflict, not a silent re-creation', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'gone.txt'), 'x\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'gone.txt' });
  unlinkSync(join(t.root, 'gone.txt'));
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_CONFLICT',
    '"gone.txt" was deleted after m1 was staged; saving would recreate it. If it should exist again, stage it with stage_file and content, then save that media.',
  );
  assert.equal(existsSync(join(t.root, 'gone.txt')), false);
});

test('attack: staging through a symlinked folder inside the workspace is refused', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, 'real'));
  writeFileSync(join(t.root, 'real', 'x.txt'), 'x\n');
  symlinkSync(join(t.root, 'real'), join(t.root, 'linked'));
  await rejectsWith(
    runTool(t.session, TOOLS.stage_file, { path: 'linked/x.txt' }),
    'E_SANDBOX_REFUSED',
    'Path "linked/x.txt" was refused: "linked" is a symbolic link, and writes never go through links. Write to the real file path instead.',
  );
});

test('attack: a folder swapped for a symlink between stage and save is refused and nothing is written through it', async (tc) => {
  const t = session(tc);
  const outside = testDir(tc, 'wt-outside-');
  await runTool(t.session, TOOLS.stage_file, { path: 'sub/evil.sh', content: 'echo pwned\n' });
  symlinkSync(outside.path, join(t.root, 'sub'));
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_REFUSED',
    'Path "sub/evil.sh" was refused: "sub" is a symbolic link, and writes never go through links. Write to the real file path instead.',
  );
  assert.deepEqual(namesIn(outside.path), []);
});

test('attack: a staged file replaced by a symlink to another file is refused, and the link target is untouched', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'victim.txt'), 'keep me\n');
  writeFileSync(join(t.root, 'f.txt'), 'f\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'f.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'f', replace: 'overwritten' } });
  rmSync(join(t.root, 'f.txt'));
  symlinkSync(join(t.root, 'victim.txt'), join(t.root, 'f.txt'));
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
    'E_SANDBOX_REFUSED',
    'Path "f.txt" was refused: "f.txt" is a symbolic link, and writes never go through links. Write to the real file path instead.',
  );
  assert.equal(readFileSync(join(t.root, 'victim.txt'), 'utf8'), 'keep me\n');
});

test('save_media to another path creates a new file there; an existing file there is a conflict', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'a.txt'), 'a\n');
  writeFileSync(join(t.root, 'taken.txt'), 'taken\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'a.txt' });
  const copy = await runTool(t.session, TOOLS.save_media, { media_id: 'm1', path: 'copy/a.txt' });
  assert.deepEqual(copy.result, {
    media_id: 'm1',
    path: 'copy/a.txt',
    added: 1,
    removed: 0,
    bytes: 2,
    created: true,
    method: 'rename',
    stale: [],
    save_id: 's1',
  });
  assert.equal(readFileSync(join(t.root, 'copy', 'a.txt'), 'utf8'), 'a\n');
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1', path: 'taken.txt' }),
    'E_SANDBOX_CONFLICT',
    '"taken.txt" already exists, and save_media writes m1 (staged for "a.txt") to another path only as a new file. To replace "taken.txt", stage it with stage_file and content, then save that media.',
  );
  assert.equal(readFileSync(join(t.root, 'taken.txt'), 'utf8'), 'taken\n');
});

test('saving one line of edits makes the other unsaved media of that file stale', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 's.txt'), 'base\n');
  await runTool(t.session, TOOLS.stage_file, { path: 's.txt' });
  await runTool(t.session, TOOLS.stage_file, { path: 's.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'base', replace: 'one' } });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm2', patch: { find: 'base', replace: 'two' } });
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm3' });
  assert.deepEqual(saved.result, {
    media_id: 'm3',
    path: 's.txt',
    added: 1,
    removed: 1,
    bytes: 4,
    created: false,
    method: 'rename',
    stale: ['m2', 'm4'],
    save_id: 's1',
  });
  assert.equal(
    saved.text,
    [
      '{"save_id":"s1","path":"s.txt","added":1,"removed":1}',
      'Now stale: m2, m4; stage the file again to edit it further.',
    ].join('\n'),
  );
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm4' }),
    'E_SANDBOX_CONFLICT',
    '"s.txt" changed on disk after m4 was staged (media m3 was saved to it since); saving would overwrite that change. Stage the file again with stage_file, re-apply your edits to the new media, and save it.',
  );
  assert.equal(readFileSync(join(t.root, 's.txt'), 'utf8'), 'one\n');
});

test('a save the person declines leaves the disk unchanged and tells the model', async (tc) => {
  const gate: Gate = async (call) =>
    call.tool === 'save_media' ? { allow: false, decidedBy: 'person' } : { allow: true, decidedBy: 'person' };
  const t = session(tc, { overrides: { gate } });
  writeFileSync(join(t.root, 'k.txt'), 'k\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'k.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'k', replace: 'K' } });
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
    'E_SANDBOX_REFUSED',
    'The user declined save_media on "k.txt". Do not retry the same call; ask the user what they want instead.',
  );
  assert.equal(readFileSync(join(t.root, 'k.txt'), 'utf8'), 'k\n');
});

/** A session with write roots, as a host passes them. */
function writeRootSession(writeRoots: string[]): { session: Session; root: string; dispose(): Promise<void> } {
  const workspace = tempDir('wt-ws-');
  const spool = tempDir('wt-spool-');
  const roots = [{ name: 'ws', address: workspace.path, localPath: workspace.path }];
  const policy = new Policy([]);
  const session = assemble({
    ...testEnvironment(spool.path),
    fs: new NodeFs(),
    roots: () => roots,
    gate: async () => ({ allow: true, decidedBy: 'test' }),
    policy: () => policy,
    clock: { now: () => Date.now() },
    log: new MemoryLog(),
    spoolDir: spool.path,
    writeRoots: () => parseWriteRoots(writeRoots, roots).writeRoots,
  });
  return {
    session,
    root: workspace.path,
    async dispose() {
      await session.dispose();
      workspace.dispose();
      spool.dispose();
    },
  };
}

test('attack: a save outside the configured write roots is refused before anything is opened', async () => {
  const t = writeRootSession(['src', 'docs']);
  try {
    mkdirSync(join(t.root, 'src'));
    writeFileSync(join(t.root, 'package.json'), '{}\n');
    await runTool(t.session, TOOLS.stage_file, { path: 'package.json' });
    await runTool(t.session, TOOLS.media_apply_patch, {
      media_id: 'm1',
      patch: { find: '{}', replace: '{"scripts":{"postinstall":"curl evil"}}' },
    });
    await rejectsWith(
      runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
      'E_SANDBOX_REFUSED',
      'save_media may not write "package.json": it is outside the write roots ("src", "docs"). Save under one of them, or ask the user to add this folder to workspaceTools.writeRoots.',
    );
    assert.equal(readFileSync(join(t.root, 'package.json'), 'utf8'), '{}\n');
    await rejectsWith(
      runTool(t.session, TOOLS.save_media, { media_id: 'm2', path: 'srcx/package.json' }),
      'E_SANDBOX_REFUSED',
      'save_media may not write "srcx/package.json": it is outside the write roots ("src", "docs"). Save under one of them, or ask the user to add this folder to workspaceTools.writeRoots.',
    );
    const inside = await runTool(t.session, TOOLS.save_media, { media_id: 'm2', path: 'src/package.json' });
    assert.deepEqual(inside.result, {
      media_id: 'm2',
      path: 'src/package.json',
      added: 1,
      removed: 0,
      bytes: 40,
      created: true,
      method: 'rename',
      stale: [],
      save_id: 's1',
    });
  } finally {
    await t.dispose();
  }
});

test('a write-roots setting with no valid entry allows no save at all', async () => {
  const t = writeRootSession(['../outside']);
  try {
    await runTool(t.session, TOOLS.stage_file, { path: 'a.txt', content: 'a\n' });
    await rejectsWith(
      runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
      'E_SANDBOX_REFUSED',
      'save_media may not write "a.txt": no write root is configured (workspaceTools.writeRoots is empty or has no valid entry), so no file can be saved. Tell the user what you wanted to save; they can fix the setting.',
    );
    assert.equal(existsSync(join(t.root, 'a.txt')), false);
  } finally {
    await t.dispose();
  }
});

test('a rename that fails leaves the original intact and removes the temp file', async (tc) => {
  const fs = new FaultyFs();
  const t = session(tc, { fs });
  const file = join(t.root, 'r.txt');
  writeFileSync(file, 'original\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'r.txt', content: 'replacement\n' });
  fs.beforeRename = () => {
    throw errno('EIO', 'EIO: i/o error, rename');
  };
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_IO',
    'Could not save "r.txt": moving the written temp file into place failed (EIO: i/o error, rename), so the file on disk is unchanged. Retry once; if it fails again, tell the user.',
  );
  assert.equal(readFileSync(file, 'utf8'), 'original\n');
  assert.deepEqual(namesIn(t.root), ['r.txt']);
  assert.equal(t.session.media.get('m1').saved, undefined);
});

test('a save interrupted between write and rename (process killed, no cleanup) leaves the original intact', async (tc) => {
  const fs = new FaultyFs();
  const t = session(tc, { fs });
  const file = join(t.root, 'r.txt');
  writeFileSync(file, 'original\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'r.txt', content: 'replacement\n' });
  // The process "dies" after the temp file is written: neither the rename nor any cleanup happens.
  fs.beforeRename = () => {
    throw errno('EINTR', 'killed');
  };
  fs.beforeDelete = () => {
    throw errno('EINTR', 'killed');
  };
  await assert.rejects(runTool(t.session, TOOLS.save_media, { media_id: 'm1' }));
  assert.equal(readFileSync(file, 'utf8'), 'original\n');
  const names = namesIn(t.root);
  assert.equal(names.length, 2);
  assert.equal(names[1], 'r.txt');
  // What is left behind is a hidden, recognisable temp file, never a half-written r.txt.
  assert.match(names[0]!, /^\.r\.txt\.wt-save-[0-9a-f]{12}\.tmp$/);
  assert.equal(readFileSync(join(t.root, names[0]!), 'utf8'), 'replacement\n');
});

test('ENOSPC at the port while writing the temp file leaves the original intact, with a narrated error and no temp file', async (tc) => {
  const fs = new FaultyFs();
  const t = session(tc, { fs });
  const file = join(t.root, 'big.txt');
  writeFileSync(file, 'original\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'big.txt', content: 'much longer replacement\n' });
  fs.beforeWrite = (address) => {
    writeFileSync(address, 'much lo'); // a partial write, then the disk is full
    throw errno('ENOSPC', 'ENOSPC: no space left on device, write');
  };
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_IO',
    'The disk is full while trying to save "big.txt"; nothing was changed. Ask the user to free space, then retry.',
  );
  assert.equal(readFileSync(file, 'utf8'), 'original\n');
  assert.deepEqual(namesIn(t.root), ['big.txt']);
  assert.equal(fs.renames.length, 0);
});

test('a rename refused with EXDEV falls back to writing in place', async (tc) => {
  const fs = new FaultyFs();
  const t = session(tc, { fs });
  const file = join(t.root, 'x.txt');
  writeFileSync(file, 'old\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'x.txt', content: 'new\n' });
  fs.beforeRename = () => {
    throw errno('EXDEV', 'EXDEV: cross-device link not permitted');
  };
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  assert.deepEqual(saved.result, {
    media_id: 'm1',
    path: 'x.txt',
    added: 1,
    removed: 1,
    bytes: 4,
    created: false,
    method: 'direct',
    in_place_because: 'the rename was refused (EXDEV)',
    stale: [],
    save_id: 's1',
  });
  assert.equal(readFileSync(file, 'utf8'), 'new\n');
  assert.deepEqual(namesIn(t.root), ['x.txt']);
});

test('a backend without atomic rename writes in place', async (tc) => {
  const fs = new FaultyFs({ atomicRename: false });
  const t = session(tc, { fs });
  writeFileSync(join(t.root, 'y.txt'), 'old\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'y.txt', content: 'new\n' });
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  assert.equal(saved.result.method, 'direct');
  // The write goes through the pinned folder (Linux: /proc/self/fd/N), straight to the file: no temp file.
  assert.equal(fs.writes.length, 1);
  assert.match(fs.writes[0]!, /^\/proc\/self\/fd\/\d+\/y\.txt$/);
  assert.equal(readFileSync(join(t.root, 'y.txt'), 'utf8'), 'new\n');
});

test("a save through a temp file keeps the file's permission bits", async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'run.sh');
  writeFileSync(file, '#!/bin/sh\necho hi\n');
  chmodSync(file, 0o750);
  await runTool(t.session, TOOLS.stage_file, { path: 'run.sh' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'hi', replace: 'hello' } });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.equal(statSync(file).mode & 0o777, 0o750);
  assert.equal(readFileSync(file, 'utf8'), '#!/bin/sh\necho hello\n');
});

test('two saves of one file at once never both pass the conflict check: the one that comes second is a conflict', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'race.txt'), 'base\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'race.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'base', replace: 'first' } });
  await runTool(t.session, TOOLS.media_apply_patch, { media_id: 'm1', patch: { find: 'base', replace: 'second' } });
  const [a, b] = await Promise.allSettled([
    runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
    runTool(t.session, TOOLS.save_media, { media_id: 'm3' }),
  ]);
  // Either may reach the disk first (the gate and the link walk are asynchronous); exactly one does.
  const saved = [a, b].filter((outcome) => outcome.status === 'fulfilled');
  const refused = [a, b].filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  assert.equal(saved.length, 1);
  assert.equal(refused.length, 1);
  assert.equal((refused[0]!.reason as { code: string }).code, 'E_SANDBOX_CONFLICT');
  assert.equal(readFileSync(join(t.root, 'race.txt'), 'utf8'), a.status === 'fulfilled' ? 'first\n' : 'second\n');
});

test('the next save of a file removes the temp files an interrupted save left, once they are a minute old', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'r.txt');
  writeFileSync(file, 'original\n');
  const stale = join(t.root, '.r.txt.wt-save-0123456789ab.tmp');
  const fresh = join(t.root, '.r.txt.wt-save-ba9876543210.tmp');
  const other = join(t.root, '.q.txt.wt-save-0123456789ab.tmp');
  for (const leftover of [stale, fresh, other]) writeFileSync(leftover, 'half a save');
  const twoMinutesAgo = new Date(Date.now() - 120_000);
  utimesSync(stale, twoMinutesAgo, twoMinutesAgo);
  utimesSync(other, twoMinutesAgo, twoMinutesAgo);
  await runTool(t.session, TOOLS.stage_file, { path: 'r.txt', content: 'replacement\n' });
  await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  assert.equal(readFileSync(file, 'utf8'), 'replacement\n');
  assert.deepEqual(namesIn(t.root), ['.q.txt.wt-save-0123456789ab.tmp', '.r.txt.wt-save-ba9876543210.tmp', 'r.txt']);
});

test('a delete that empties a write root removes the file, never the write root folder itself', async () => {
  const t = writeRootSession(['src/legacy']);
  try {
    mkdirSync(join(t.root, 'src/legacy/old'), { recursive: true });
    writeFileSync(join(t.root, 'src/legacy/old/x.ts'), 'x\n');
    await runTool(t.session, TOOLS.stage_file, { path: 'src/legacy/old/x.ts', action: 'delete' });
    const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
    assert.deepEqual(saved.result.removed_folders, ['src/legacy/old/']);
    assert.deepEqual(
      [existsSync(join(t.root, 'src/legacy/old')), existsSync(join(t.root, 'src/legacy'))],
      [false, true],
    );
  } finally {
    await t.dispose();
  }
});
