// The README's demo, as the README tells a person to run it: `npm run sandbox -- --demo`, headless
// with --screenshot (scripts/sandbox.mjs packages the .vsix, installs it into a fresh code-server
// profile and walks scripts/demo.mjs up to the save's confirmation with the staged diff open). In
// the suite so that a change to what the person sees cannot break the demo unseen (issue 46: it
// waited for a tab title that had changed, and stopped after step 5).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../host/ensure.mjs';
import { RESULTS_DIR } from '../host/run-suite.mjs';

// Packaging (~25 s), a fresh profile and Copilot Chat's start (~35 s), six steps: ~2 min on a loaded 2-core machine.
const DEMO_TIMEOUT = 420_000;

test(
  "the README demo (npm run sandbox -- --demo --screenshot) walks all six steps to the save's confirmation with the staged diff open, and writes nothing before the person allows the save",
  { timeout: DEMO_TIMEOUT },
  async (t) => {
    const picture = join(RESULTS_DIR, 'demo-save.png');
    rmSync(picture, { force: true });
    // Its own process group, so a failed or timed-out test ends the sandbox and everything it started.
    const child = spawn(process.execPath, [join(repoRoot, 'scripts/sandbox.mjs'), '--demo', '--screenshot', picture], {
      cwd: repoRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
      process.stderr.write(chunk);
    });
    const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    t.after(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      await exited;
    });
    const { code, signal } = await exited;
    assert.equal(
      code,
      0,
      `npm run sandbox -- --demo --screenshot ended with ${signal ?? code}:\n${output.slice(-4000)}`,
    );
    for (const step of ['step 1: search_files asks', 'step 5: media_apply_patch asks', 'step 6: save_media asks'])
      assert.ok(output.includes(step), `the demo did not reach "${step}":\n${output.slice(-4000)}`);
    assert.match(output, /the staged diff is open/);
    assert.ok(existsSync(picture) && statSync(picture).size > 20_000, `no screenshot at ${picture}`);
  },
);
