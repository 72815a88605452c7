// Runs the integration suite in a desktop VS Code downloaded by @vscode/test-electron (into
// .vscode-test/), for developers whose machine can download VS Code. CI uses code-server instead
// (test/run-integration.mjs): these machines cannot download VS Code.
//
//   npm run test:electron        (VSCODE_VERSION=stable|insiders|1.139.0 to choose)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { buildTests } from './build-tests.mjs';
import { repoRoot } from './host/ensure.mjs';

const build = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const extensionTestsPath = await buildTests();
const workspace = mkdtempSync(join(tmpdir(), 'wt-electron-ws-'));
cpSync(join(repoRoot, 'test/fixtures/workspace'), workspace, { recursive: true });
try {
  const code = await runTests({
    version: process.env.VSCODE_VERSION ?? 'stable',
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath,
    launchArgs: [workspace, '--disable-workspace-trust', '--disable-extensions'],
    // VS Code refuses modal dialogs while extension tests run: the test-only decider answers them.
    extensionTestsEnv: { WORKSPACE_TOOLS_TEST_DECIDER: 'approve' },
  });
  process.exitCode = code;
} catch (e) {
  console.error(`test:electron failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
