// Runs every test/e2e/*.e2e.mjs file (node:test, one at a time: each drives its own code-server
// and Chromium) and prints "N passed, N failed" as its last line.
//
//   node test/run-e2e.mjs [file-filter]
//
// Env: WT_HOST_CACHE, WT_EXTENSION_PATH (extension folder under test; default: this repo),
//      WT_AGENT_SCRIPT_FILE (agent.e2e.mjs script), WT_HOST_VERBOSE=1.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { ensureAll, ensureExtensionBuilt, repoRoot } from './host/ensure.mjs';

const filter = process.argv[2];
const dir = join(repoRoot, 'test/e2e');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.e2e.mjs') && (!filter || f.includes(filter)))
  .sort()
  .map((f) => join(dir, f));

ensureExtensionBuilt(process.env.WT_EXTENSION_PATH || repoRoot);
await ensureAll();

let passed = 0;
let failed = 0;
const stream = run({ files, concurrency: 1, timeout: 600_000 });
stream.on('test:pass', (t) => { if (t.details?.type !== 'suite') passed++; });
stream.on('test:fail', (t) => { if (t.details?.type !== 'suite') failed++; });
await new Promise((resolve, reject) => {
  const out = stream.compose(spec);
  out.on('data', (chunk) => process.stdout.write(chunk));
  out.on('end', resolve);
  out.on('error', reject);
});
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
