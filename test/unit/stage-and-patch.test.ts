import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { SandboxError } from '../../src/core/errors.ts';
import type { GateCall } from '../../src/core/gate.ts';
import type { Gate } from '../../src/core/ports.ts';
import { session } from './harness.ts';
import { rejectsWith } from './media-fixtures.ts';

/* stage_file with `patch` (issue 24): an edit in one call, the same edits media_apply_patch takes. */

test('stage_file with patch returns the patched media in one call; the disk is unchanged until save_media', async (tc) => {
  const t = session(tc);
  const file = nodePath.join(t.root, 'app.ts');
  writeFileSync(file, 'const a = 1;\r\nconst b = 2;\r\n');
  const staged = await t.invoke('stage_file', {
    path: 'app.ts',
    patch: [
      { find: 'const a = 1;', replace: 'const a = 10;' },
      { find: 'b = 2;\n', replace: 'b = 2;\nconst c = 3;\n' },
    ],
  });
  assert.deepEqual(staged.result, {
    media_id: 'm2',
    path: 'app.ts',
    bytes: 43,
    lines: 3,
    encoding: 'utf8',
    eol: 'crlf',
    isNew: false,
    parent_id: 'm1',
    added: 2,
    removed: 1,
    normalized_line_endings: [2],
  });
  assert.equal(staged.text.split('\n')[1], 'Nothing written yet: save_media (media_ids for several).');
  assert.equal(t.gate.calls.length, 1, 'one gated call');
  assert.equal(readFileSync(file, 'utf8'), 'const a = 1;\r\nconst b = 2;\r\n');
  await t.invoke('save_media', { media_id: 'm2' });
  assert.equal(readFileSync(file, 'utf8'), 'const a = 10;\r\nconst b = 2;\r\nconst c = 3;\r\n');
});

test('stage_file with patch as a unified diff', async (tc) => {
  const t = session(tc);
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'one\ntwo\n');
  const staged = await t.invoke('stage_file', {
    path: 'a.txt',
    patch: { unified: '@@ -1,2 +1,2 @@\n one\n-two\n+2\n' },
  });
  assert.equal(staged.result.media_id, 'm2');
  assert.equal(Buffer.from(t.session.media.get('m2').bytes).toString('utf8'), 'one\n2\n');
});

test('stage_file with both content and patch is refused before the gate is asked, and stages nothing', async (tc) => {
  const t = session(tc);
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'one\n');
  await rejectsWith(
    t.invoke('stage_file', { path: 'a.txt', content: 'x\n', patch: { find: 'one', replace: '1' } }),
    'E_SANDBOX_INVALID_INPUT',
    'stage_file was given both content (the whole new file) and patch (edits to the file as it is); they cannot be combined. Give content to replace the file, or patch to edit it.',
  );
  assert.equal(t.gate.calls.length, 0);
  assert.equal(t.session.media.all().length, 0);
});

test('stage_file whose patch does not apply says so and leaves the unpatched media to patch; the disk is unchanged', async (tc) => {
  const t = session(tc);
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'one\ntwo\n');
  const error = await t.invoke('stage_file', { path: 'a.txt', patch: { find: 'three', replace: '3' } }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof SandboxError && error.code === 'E_SANDBOX_NOT_FOUND', String(error));
  assert.match(error.message, /\(The file is staged unpatched as m1\.\)/);
  assert.match(error.message, /Retry the edit with media_apply_patch on media_id "m1"\.$/);
  const retried = await t.invoke('media_apply_patch', { media_id: 'm1', patch: { find: 'two', replace: '2' } });
  assert.equal(retried.result.media_id, 'm2');
  assert.equal(readFileSync(nodePath.join(t.root, 'a.txt'), 'utf8'), 'one\ntwo\n');
});

test('attack: stage_file with patch is no yes/no oracle on a read-ask file: every call asks, and declined, a find that matches fails like one that does not', async (tc) => {
  const modals: GateCall[] = [];
  const gate: Gate = async (call) => {
    if (!call.secret) return { allow: true, decidedBy: 'test' };
    modals.push(call);
    return { allow: false, decidedBy: 'person' };
  };
  const t = session(tc, { rules: [{ glob: 'config/creds.ini', read: 'ask' }], overrides: { gate } });
  mkdirSync(nodePath.join(t.root, 'config'));
  writeFileSync(nodePath.join(t.root, 'config/creds.ini'), 'password=hunter2\n');
  const outcomes: string[] = [];
  for (const find of ['password=hunter2', 'password=wrong']) {
    const e = await t.invoke('stage_file', { path: 'config/creds.ini', patch: { find, replace: 'x' } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(e instanceof SandboxError && e.code === 'E_SANDBOX_REFUSED', String(e));
    outcomes.push(e.message);
  }
  assert.equal(outcomes[0], outcomes[1], 'the refusal does not depend on the find');
  assert.equal(modals.length, 2, 'each call asked');
  assert.equal(t.session.media.all().length, 0);
});
