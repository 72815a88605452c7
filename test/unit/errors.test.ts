import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SandboxError, cancelled, invalidInput, refused } from '../../src/core/errors.ts';
import { normalizeModelPath } from '../../src/core/paths.ts';

test('a SandboxError keeps what happened and what to do next apart; the model reads both as one message', () => {
  const e = refused('"x.env" was refused by the rule ".env".', 'Do not retry this path.');
  assert.equal(e.code, 'E_SANDBOX_REFUSED');
  assert.equal(e.what, '"x.env" was refused by the rule ".env".');
  assert.equal(e.next, 'Do not retry this path.');
  assert.equal(e.message, '"x.env" was refused by the rule ".env". Do not retry this path.');
  assert.deepEqual(e.toJSON(), { code: 'E_SANDBOX_REFUSED', message: e.message });
});

test('a SandboxError with no next step is its what alone', () => {
  const e = new SandboxError(
    'E_SANDBOX_NOT_FOUND',
    'Nothing was saved in this window, so there is nothing to undo.',
    '',
  );
  assert.equal(e.message, e.what);
  assert.equal(invalidInput('Bad.', '').message, 'Bad.');
  assert.equal(cancelled().what, 'The call was cancelled before it finished; nothing was changed.');
});

test('a refused path tells the person why, and keeps the next step for the model', () => {
  const roots = [{ name: 'ws', address: '/tmp/ws', localPath: '/tmp/ws' }];
  const e = (() => {
    try {
      normalizeModelPath('../outside.txt', roots);
    } catch (error) {
      return error;
    }
    return undefined;
  })();
  assert.ok(e instanceof SandboxError);
  assert.match(e.what, /^Path "\.\.\/outside\.txt" was refused: .+\.$/);
  assert.equal(e.next, 'Give a path relative to the workspace folder, such as "src/index.ts".');
  assert.equal(e.message, `${e.what} ${e.next}`);
});
