import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { session } from './harness.ts';
import { join } from './media-fixtures.ts';

/**
 * Issue 24: a one-line change in five files costs the model at most six calls (stage_file with
 * patch ×5, one save_media set) and at most twice the bytes Copilot's replace_string_in_file ×5
 * returned in the same agent-mode run (544 bytes): 1,088.
 */
const COPILOT_BYTES = 544;

test('a one-line change in five files: six calls, one confirmation, at most twice the result bytes of replace_string_in_file ×5', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, 'src'));
  const files = [1, 2, 3, 4, 5].map((n) => `src/module${n}.ts`);
  for (const f of files)
    writeFileSync(
      join(t.root, f),
      `import { x } from './x';\n\nexport const limit = 10;\nexport function f() { return x * limit; }\n`,
    );
  const texts: string[] = [];
  const ids: string[] = [];
  for (const path of files) {
    const staged = await t.invoke('stage_file', { path, patch: { find: 'limit = 10', replace: 'limit = 20' } });
    texts.push(staged.text);
    ids.push(staged.result.media_id!);
  }
  const asked = t.gate.calls.length;
  const saved = await t.invoke('save_media', { media_ids: ids });
  texts.push(saved.text);
  assert.equal(t.gate.calls.length, asked + 1, 'one confirmation for the five files');
  for (const f of files) assert.match(readFileSync(join(t.root, f), 'utf8'), /limit = 20;/);
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  console.log(
    `five-file one-line change: ${texts.length} calls, ${bytes} bytes of results (Copilot's replace_string_in_file ×5: ${COPILOT_BYTES})`,
  );
  assert.equal(texts.length, 6);
  assert.ok(bytes <= 2 * COPILOT_BYTES, `${bytes} bytes > ${2 * COPILOT_BYTES}:\n${texts.join('\n---\n')}`);
});
