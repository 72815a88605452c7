// Runs the integration suite (test/integration/) inside a real VS Code extension host:
// builds the suite, builds the extension when dist/ is missing, starts code-server with the
// fixture workspace, and prints "N passed, N failed" as its last line. Exit code 0 only when the
// suite ran and every test passed.
//
//   node test/run-integration.mjs
//
// Env: WT_HOST_CACHE (code-server cache folder), WT_TEST_GREP (mocha --grep),
//      WT_EXTENSION_PATH (extension folder under test; default: this repo), WT_HOST_VERBOSE=1;
//      WORKSPACE_TOOLS_* variables are passed on to the extension host
//      (WORKSPACE_TOOLS_TEST_DECIDER defaults to approve).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildTests } from './build-tests.mjs';
import { ensureAll, ensureExtensionBuilt, repoRoot } from './host/ensure.mjs';
import { runSuite } from './host/run-suite.mjs';
import { cleanupOnExit } from './host/server.mjs';

const extensionPath = resolve(process.env.WT_EXTENSION_PATH || repoRoot);

async function main() {
  ensureExtensionBuilt(extensionPath);
  const entry = await buildTests();
  await ensureAll();
  const resultsDir = mkdtempSync(join(tmpdir(), 'wt-integration-'));
  const resultsFile = join(resultsDir, 'results.json');
  const forgetCleanup = cleanupOnExit(() => rmSync(resultsDir, { recursive: true, force: true }));
  try {
    const code = await runSuite({
      name: 'integration',
      extensionDevelopmentPath: extensionPath,
      extensionTestsPath: entry,
      workspace: join(repoRoot, 'test/fixtures/workspace'),
      extensionEnv: {
        // The gate's test-only decider answers the modal confirmations (a modal dialog cannot
        // show while extension tests run: VS Code refuses it). Its own switches pass through.
        WORKSPACE_TOOLS_TEST_DECIDER: 'approve',
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('WORKSPACE_TOOLS_'))),
        WT_TEST_RESULTS: resultsFile,
        ...(process.env.WT_TEST_GREP ? { WT_TEST_GREP: process.env.WT_TEST_GREP } : {}),
      },
    });
    const results = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : undefined;
    if (!results) {
      console.log(`[integration] the suite reported no results (exit code ${code})`);
      console.log('0 passed, 1 failed');
      return 1;
    }
    for (const f of results.failures) console.log(`[integration] FAILED ${f.title}: ${f.error}`);
    console.log(`${results.passed} passed, ${results.failed} failed`);
    return code === 0 && results.failed === 0 ? 0 : 1;
  } finally {
    rmSync(resultsDir, { recursive: true, force: true });
    forgetCleanup();
  }
}

main().then(
  (code) => { process.exitCode = code; },
  (err) => {
    console.error(err.stack ?? err);
    console.log('0 passed, 1 failed');
    process.exitCode = 1;
  },
);
