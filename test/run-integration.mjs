// Runs the integration suites inside a real VS Code extension host: test/integration/ in a trusted
// workspace, then test/integration-untrusted/ in code-server started without
// --disable-workspace-trust (the folder opens in restricted mode), then test/integration-packaged/
// with the extension packaged for this platform (scripts/package.mjs --target linux-x64 on this
// machine) and installed from that .vsix by code-server's installer. Builds each suite, builds the
// extension when dist/ is missing, starts code-server with the fixture workspace, and prints
// "N passed, N failed" (over all) as its last line. Exit code 0 only when every suite ran and
// every test passed.
//
//   node test/run-integration.mjs [trusted|untrusted|packaged]     (default: all three)
//
// Env: WT_HOST_CACHE (code-server cache folder), WT_TEST_GREP (mocha --grep),
//      WT_EXTENSION_PATH (extension folder under test; default: this repo), WT_HOST_VERBOSE=1,
//      WT_WORKBENCH_TRACE=1 (the workbench's own log at trace level, e.g. a text model's save steps);
//      WORKSPACE_TOOLS_* variables are passed on to the extension host
//      (WORKSPACE_TOOLS_TEST_DECIDER defaults to approve).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hostTarget } from '../scripts/package.mjs';
import { buildPackagedTests, buildTests, buildUntrustedTests } from './build-tests.mjs';
import { ensureAll, ensureExtensionBuilt, repoRoot } from './host/ensure.mjs';
import { runSuite } from './host/run-suite.mjs';
import { cleanupOnExit } from './host/server.mjs';
import { installPackagedExtension } from './host/vsix.mjs';

const extensionPath = resolve(process.env.WT_EXTENSION_PATH || repoRoot);

const VARIANTS = {
  trusted: { name: 'integration', build: buildTests, disableWorkspaceTrust: true },
  untrusted: { name: 'integration-untrusted', build: buildUntrustedTests, disableWorkspaceTrust: false },
  packaged: { name: 'integration-packaged', build: buildPackagedTests, disableWorkspaceTrust: true, installed: true },
};

/**
 * Runs one suite in its own code-server; returns its counts (a suite that reported nothing counts
 * as one failure). An `installed` variant runs with the extension packaged for this platform and
 * installed from its .vsix, and the suite in a stand-in development extension.
 */
async function runVariant({ name, build, disableWorkspaceTrust, installed = false }) {
  const entry = await build();
  const resultsDir = mkdtempSync(join(tmpdir(), 'wt-integration-'));
  const resultsFile = join(resultsDir, 'results.json');
  const forgetCleanup = cleanupOnExit(() => rmSync(resultsDir, { recursive: true, force: true }));
  try {
    const target = installed ? hostTarget() : undefined;
    const extension = installed
      ? {
          extensionDevelopmentPath: join(repoRoot, 'test/integration-packaged/runner'),
          extraExtensions: [await installPackagedExtension(extensionPath, resultsDir, { target })],
        }
      : { extensionDevelopmentPath: extensionPath };
    const code = await runSuite({
      name,
      ...extension,
      extensionTestsPath: entry,
      workspace: join(repoRoot, 'test/fixtures/workspace'),
      disableWorkspaceTrust,
      extensionEnv: {
        // The gate's test-only decider answers the modal confirmations (a modal dialog cannot
        // show while extension tests run: VS Code refuses it). Its own switches pass through.
        WORKSPACE_TOOLS_TEST_DECIDER: 'approve',
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('WORKSPACE_TOOLS_'))),
        WT_TEST_RESULTS: resultsFile,
        ...(target ? { WT_PACKAGE_TARGET: target } : {}),
        ...(process.env.WT_TEST_GREP ? { WT_TEST_GREP: process.env.WT_TEST_GREP } : {}),
      },
    });
    const results = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : undefined;
    if (!results) {
      console.log(`[${name}] the suite reported no results (exit code ${code})`);
      return { passed: 0, failed: 1 };
    }
    for (const f of results.failures) console.log(`[${name}] FAILED ${f.title}: ${f.error}`);
    console.log(`[${name}] ${results.passed} passed, ${results.failed} failed`);
    // A suite that exits non-zero with every test passed still fails the run.
    return { passed: results.passed, failed: results.failed + (code !== 0 && results.failed === 0 ? 1 : 0) };
  } finally {
    rmSync(resultsDir, { recursive: true, force: true });
    forgetCleanup();
  }
}

async function main() {
  const which = process.argv[2];
  if (which !== undefined && !(which in VARIANTS))
    throw new Error(`unknown variant ${JSON.stringify(which)} (trusted, untrusted or packaged)`);
  ensureExtensionBuilt(extensionPath);
  await ensureAll();
  let passed = 0;
  let failed = 0;
  for (const [key, variant] of Object.entries(VARIANTS)) {
    if (which && which !== key) continue;
    const r = await runVariant(variant);
    passed += r.passed;
    failed += r.failed;
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err.stack ?? err);
    console.log('0 passed, 1 failed');
    process.exitCode = 1;
  },
);
