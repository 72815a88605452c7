import { after, describe, test, type TestContext } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as nodePath from 'node:path';
import { isSandboxError } from '../../src/core/errors.ts';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import type { ShellHost, ShellSandbox } from '../../src/core/shell/port.ts';
import { renderShellLine } from '../../src/core/shell/output.ts';
import { scrubEnvironment } from '../../src/core/shell/env.ts';
import { visibleCommand } from '../../src/core/shell/display.ts';
import { isPaged } from '../../src/core/paging/paged.ts';
import { Policy, type Rule } from '../../src/core/policy/policy.ts';
import { scopeShellSettings } from '../../src/core/shell/settings.ts';
import { deriveBoundary } from '../../src/core/shell/boundary.ts';
import { ripgrepLister } from '../../src/core/shell/tree.ts';
import { parseConfig } from '../../src/core/git/config.ts';
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

function shellSession(
  t: TestContext,
  options: { sandbox?: ShellSandbox; env?: Record<string, string>; allowedDomains?: string[]; rules?: Rule[] } = {},
): ShellFixture {
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
  };
  const s = session(t, {
    ...(options.rules ? { rules: options.rules } : {}),
    overrides: { shell: host, spoolDir: spool },
  });
  writeFileSync(nodePath.join(s.root, '.env'), `API_KEY=${CANARY}\n`);
  mkdirSync(nodePath.join(s.root, 'config', 'deep', 'er'), { recursive: true });
  writeFileSync(nodePath.join(s.root, 'config', 'deep', 'er', 'PROD.ENV'), `DB=${CANARY}\n`);
  writeFileSync(nodePath.join(s.root, 'a.txt'), 'hello from a\n');
  writeFileSync(nodePath.join(s.root, 'package.json'), '{"name":"fixture"}\n');
  execFileSync('git', ['init', '-q', s.root]);
  return { s, home, spool, host };
}

/** Every byte the call left behind: the model's text, every spool file (result artifacts), the audit log. */
function leftBehind(f: ShellFixture, text: string): string {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = nodePath.join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(readFileSync(path, 'utf8'));
    }
  };
  walk(f.spool);
  return [text, ...files, JSON.stringify(f.s.log.entries), f.s.log.messages.join('\n')].join('\n');
}

async function run(
  f: ShellFixture,
  command: string,
  extra: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<{ text: string; all: string }> {
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
    } catch {
      /* it ended while we looked */
    }
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
    assert.match(call.summary, /network off; reads only the workspace, system folders and toolchains/);
    assert.equal(visibleCommand('a\nb\tc'), 'a⏎ b\\tc');
  });

  test('git works inside the sandbox: its config is readable; a change to it is staged for review, never on disk', async (t) => {
    const f = shellSession(t);
    const { text } = await run(f, 'git status --short a.txt; git config user.name intruder; echo "status $?"');
    assert.match(text, /\?\? a\.txt/);
    assert.match(text, /status 0/);
    assert.doesNotMatch(readFileSync(nodePath.join(f.s.root, '.git', 'config'), 'utf8'), /intruder/);
    assert.match(text, /staged for review, NOT on disk: \.git\/config \(m\d+/);
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

  test('attack: writes outside the workspace and through /tmp/../ fail; protected files are staged, never on disk', async (t) => {
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
    assert.match(text, /Read-only file system|Permission denied|No such file or directory/);
    for (const staged of ['.vscode/settings.json', '.git/hooks/pre-commit', 'package.json'])
      assert.match(text, new RegExp(`staged for review, NOT on disk: .*${staged.replace(/\./g, '\\.')} \\(m\\d+`));
  });

  test('attack: a network request fails when no host is allowed, and nothing reaches the server', async (t) => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.end(CANARY);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const f = shellSession(t);
    const { text, all } = await run(
      f,
      `curl -sS -m 5 http://127.0.0.1:${port}/; curl -sS -m 5 http://example.com/; node -e "fetch('http://127.0.0.1:${port}/').then(r=>r.text()).then(console.log,e=>console.error('fetch failed',e.cause?.code??e.message))"`,
      { timeout_ms: 60_000 },
    );
    assert.equal(requests, 0, text);
    assert.ok(!all.includes(CANARY));
    assert.match(text, /sandbox refused: .*example\.com|blocked by network allowlist/);
  });

  test('credential environment variables are not passed to the command', async (t) => {
    const f = shellSession(t, {
      env: {
        GITHUB_TOKEN: CANARY,
        AWS_SECRET_ACCESS_KEY: CANARY,
        MY_API_KEY: CANARY,
        NPM_TOKEN: CANARY,
        HARMLESS: 'kept',
      },
    });
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
    const { text } = await run(
      f,
      `(sleep ${n} &) ; setsid sleep ${n}.75 & nohup sleep ${n}.25 >/dev/null 2>&1 & echo started`,
    );
    assert.match(text, /^started$/m);
    assert.match(text, /exit code 0/);
    await noProcessLeft(`sleep ${n}`);
  });

  test('attack: a fork bomb (bounded to 2^7 processes on this shared machine) leaves no process behind after the timeout', async (t) => {
    const f = shellSession(t);
    const n = unique();
    const { text } = await run(
      f,
      `b(){ if [ "$1" -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & fi; exec sleep ${n}; }; b 6`,
      { timeout_ms: 3_000 },
    );
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
    const missing = srtSandbox({
      ripgrepPath: ripgrep.path,
      load: () => Promise.reject(new Error('bwrap: not found')),
    });
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
    await assert.rejects(
      f.s.invoke('run_shell_command', { command: 'true', timeout_ms: 700_000 }),
      /above the largest allowed, 600000 ms/,
    );
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'true', cwd: 'a.txt' }), /is not a folder/);
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'true', cwd: '../' }), (e: unknown) =>
      isSandboxError(e),
    );
    const sub = nodePath.join(f.s.root, 'sub');
    mkdirSync(sub);
    const { text } = await run(f, 'pwd', { cwd: 'sub' });
    assert.ok(text.includes(sub));
    assert.ok(statSync(sub).isDirectory());
  });

  test("a read-denied cwd is refused by the policy before anything runs; a person's deny rule is unreadable to commands", async (t) => {
    const f = shellSession(t, { rules: [{ glob: 'private/**', read: 'deny' }] });
    mkdirSync(nodePath.join(f.s.root, 'private'));
    writeFileSync(nodePath.join(f.s.root, 'private', 'notes.txt'), `${CANARY}\n`);
    await assert.rejects(
      f.s.invoke('run_shell_command', { command: 'touch ran.txt', cwd: 'private' }),
      (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_REFUSED',
    );
    assert.equal(existsSync(nodePath.join(f.s.root, 'ran.txt')), false);
    const { text, all } = await run(f, 'cat private/notes.txt; grep -r CANARY .');
    assert.ok(!all.includes(CANARY), text);
  });
});

describe('run_shell_command settings', () => {
  test("allowed hosts are the user's: a workspace value only narrows them, and cannot raise the timeout cap", () => {
    const scoped = scopeShellSettings(
      {
        user: ['registry.npmjs.org', 'github.com'],
        workspace: [{ value: ['github.com', 'evil.example'], where: 'workspace settings' }],
      },
      { user: undefined, workspace: [{ value: 9_000_000, where: 'workspace settings' }] },
    );
    assert.deepEqual(scoped.allowedDomains, ['github.com']);
    assert.equal(scoped.maxTimeoutMs, 600_000);
    assert.equal(scoped.problems.length, 2);
    assert.match(scoped.problems[0]!, /"evil\.example", which your user settings do not allow/);
    const none = scopeShellSettings(
      { user: undefined, workspace: [{ value: ['a.example'], where: 'w' }] },
      { user: 1_200_000, workspace: [] },
    );
    assert.deepEqual(none.allowedDomains, []);
    assert.equal(none.maxTimeoutMs, 1_200_000);
    assert.match(
      scopeShellSettings({ user: 'x', workspace: [] }, { user: 5, workspace: [] }).problems.join(' '),
      /no network until it is fixed.*at least 1000/,
    );
  });

  test('the boundary is what the policy decides: reads from an allow-list, deny and ask rules unreadable inside it, writes only through the layer', async (t) => {
    const root = testDir(t, 'wt-boundary-').path;
    for (const rel of [
      'src/app.ts',
      'src/.ENV.local',
      'keys/deploy.pem',
      'private/a/b.txt',
      'package.json',
      'node_modules/dep/.env',
    ]) {
      mkdirSync(nodePath.dirname(nodePath.join(root, rel)), { recursive: true });
      writeFileSync(nodePath.join(root, rel), 'x');
    }
    const policy = new Policy([{ glob: 'private/**', read: 'deny' }]).within([root]);
    const inputs = {
      policy,
      roots: [{ name: 'w', address: root, localPath: root }],
      writeFolders: [root],
      home: '/home/someone',
      privateFolders: ['/spool'],
      callFolders: ['/tmp/t/home', '/tmp/t/tmp'],
      readFolders: ['/opt/tool'],
      layered: true,
      allowedDomains: [],
      path: '/usr/bin:/bin',
      list: ripgrepLister(ripgrep),
      signal: new AbortController().signal,
    };
    const boundary = await deriveBoundary(inputs);
    const rel = (paths: readonly string[]): string[] =>
      paths
        .filter((p) => p.startsWith(`${root}/`))
        .map((p) => nodePath.relative(root, p))
        .sort();
    assert.deepEqual(rel(boundary.denyRead), ['keys/deploy.pem', 'node_modules/dep/.env', 'private', 'src/.ENV.local']);
    for (const denied of ['/home', '/tmp', '/root', '/spool', '/home/someone/.ssh'])
      assert.ok(boundary.denyRead.includes(denied), denied);
    assert.deepEqual(boundary.allowRead, ['/opt/tool', '/tmp/t/home', '/tmp/t/tmp', root].sort());
    assert.deepEqual(boundary.allowWrite, [root, '/tmp/t/home', '/tmp/t/tmp']);
    // Without a copy-on-write layer the workspace is read-only: only the call's own folder is writable.
    assert.deepEqual((await deriveBoundary({ ...inputs, layered: false })).allowWrite, ['/tmp/t/home', '/tmp/t/tmp']);
  });

  test("core.hooksPath is read from a repository's configuration as git reads it (compared with git config --get)", (t) => {
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
      try {
        expected = execFileSync('git', ['config', '-f', file, '--get', 'core.hooksPath'], { encoding: 'utf8' }).replace(
          /\n$/,
          '',
        );
      } catch {
        expected = undefined;
      }
      const hooksPath = parseConfig(text)
        .entries.filter((e) => e.section === 'core' && e.subsection === undefined && e.key === 'hookspath')
        .at(-1)?.value;
      assert.equal(hooksPath, expected, JSON.stringify(text));
    }
  });
});
