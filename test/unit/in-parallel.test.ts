import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inParallel } from '../../src/core/turns.ts';

test('inParallel keeps the items’ order in its results and never runs more than its limit at once', async () => {
  let running = 0;
  let most = 0;
  const gates = new Map<number, () => void>();
  const results = inParallel([5, 4, 3, 2, 1, 0], 2, async (n) => {
    running++;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => gates.set(n, resolve));
    running--;
    return n * 10;
  });
  // Let them finish out of order: each time, the newest waiting item goes first.
  while (gates.size > 0 || running > 0) {
    await new Promise((resolve) => setImmediate(resolve));
    const last = [...gates.keys()].pop();
    if (last !== undefined) {
      gates.get(last)!();
      gates.delete(last);
    }
  }
  assert.deepEqual(await results, [50, 40, 30, 20, 10, 0]);
  assert.equal(most, 2);
});

test('inParallel of nothing is nothing, and a failure rejects the whole', async () => {
  assert.deepEqual(await inParallel([], 8, () => Promise.resolve(1)), []);
  await assert.rejects(
    inParallel([1, 2, 3], 2, (n) => (n === 2 ? Promise.reject(new Error('two')) : Promise.resolve(n))),
    /two/,
  );
});
