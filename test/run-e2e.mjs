// Runs every test/e2e/*.e2e.mjs file (node:test, one at a time: each drives its own code-server
// and Chromium) and prints "N passed, N failed" as its last line.
//
//   node test/run-e2e.mjs [file-filter]
//
// Env: WT_HOST_CACHE, WT_EXTENSION_PATH (extension folder under test; default: this repo),
//      WT_AGENT_SCRIPT_FILE (agent.e2e.mjs script), WT_HOST_VERBOSE=1,
//      WT_E2E_REPEAT=N: run the files N times in a row (a flaky test shows itself before it lands);
//      stops at the first round with a failure and says which round it was.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { ensureAll, ensureExtensionBuilt, repoRoot } from './host/ensure.mjs';

const repeat = process.env.WT_E2E_REPEAT ?? '1';
if (!/^[1-9]\d*$/.test(repeat)) {
  console.error(
    `WT_E2E_REPEAT must be a whole number of rounds, 1 or more (it is ${JSON.stringify(repeat)}); e.g. WT_E2E_REPEAT=5 npm run test:e2e`,
  );
  process.exit(2);
}
const rounds = Number(repeat);

const filter = process.argv[2];
const dir = join(repoRoot, 'test/e2e');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.e2e.mjs') && (!filter || f.includes(filter)))
  .sort()
  .map((f) => join(dir, f));

ensureExtensionBuilt(process.env.WT_EXTENSION_PATH || repoRoot);
await ensureAll();

/** One run of every file, its report streamed to stdout; resolves to its pass and fail counts. */
async function runOnce() {
  let passed = 0;
  let failed = 0;
  // Each test carries its own bound (a scenario: 8 min); this one only stops a file that hangs
  // between tests. The agent file alone runs 6 scenarios, 8-12 min on a loaded 2-core machine.
  // WT_E2E_NAME: only the tests whose names match this pattern (a scenario being worked on).
  const names = process.env.WT_E2E_NAME ? { testNamePatterns: [new RegExp(process.env.WT_E2E_NAME)] } : {};
  const stream = run({ files, concurrency: 1, timeout: 3_600_000, ...names });
  stream.on('test:pass', (t) => {
    if (t.details?.type !== 'suite') passed++;
  });
  stream.on('test:fail', (t) => {
    if (t.details?.type !== 'suite') failed++;
  });
  await new Promise((resolve, reject) => {
    const out = stream.compose(spec);
    out.on('data', (chunk) => process.stdout.write(chunk));
    out.on('end', resolve);
    out.on('error', reject);
  });
  return { passed, failed };
}

let passed = 0;
let failed = 0;
for (let round = 1; round <= rounds; round++) {
  const started = Date.now();
  if (rounds > 1) console.log(`[e2e] round ${round} of ${rounds}`);
  const result = await runOnce();
  passed += result.passed;
  failed += result.failed;
  const ok = result.failed === 0 && result.passed > 0;
  if (rounds > 1) {
    const took = `${((Date.now() - started) / 1000).toFixed(0)} s`;
    console.log(`[e2e] round ${round} of ${rounds}: ${result.passed} passed, ${result.failed} failed in ${took}`);
    if (!ok)
      console.log(
        `[e2e] round ${round} of ${rounds} FAILED${round < rounds ? `; rounds ${round + 1}-${rounds} were not run` : ''}`,
      );
    else if (round === rounds) console.log(`[e2e] all ${rounds} rounds passed`);
  }
  if (!ok) break;
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
