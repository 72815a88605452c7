import { after, describe, test, type TestContext } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as nodePath from 'node:path';
import { isSandboxError } from '../../src/core/errors.ts';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import type { HostAnswer, HostDecider, HostRequest, ShellHost } from '../../src/core/shell/port.ts';
import { Policy } from '../../src/core/policy/policy.ts';
import { deriveBoundary, VerdictMemo } from '../../src/core/shell/boundary.ts';
import { ripgrepLister } from '../../src/core/shell/tree.ts';
import { SessionHosts } from '../../src/core/shell/hosts.ts';
import { mcpHostDecider, type Elicitor } from '../../src/mcp/gate.ts';
import { LinkCache } from '../../src/core/links/walk.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { session, testDir, testRipgrep, type TestSession } from './harness.ts';

const CANARY = 'CANARY-5b1d0e77';
const ripgrep = testRipgrep();
/** One sandbox for the file: the library's manager is one per process. */
const sandbox = srtSandbox({ ripgrepPath: ripgrep.path });
after(() => sandbox.dispose());

/** A decider that records every question and gives the answers in turn (the last one again when they run out). */
function scriptedHosts(...answers: HostAnswer[]): HostDecider & { readonly asked: HostRequest[] } {
  const asked: HostRequest[] = [];
  const decide = async (request: HostRequest): Promise<HostAnswer> => {
    asked.push(request);
    return answers[Math.min(asked.length - 1, answers.length - 1)] ?? 'deny';
  };
  return Object.assign(decide, { asked });
}

function shellSession(t: TestContext, askHost?: HostDecider): TestSession {
  const home = testDir(t, 'wt-home-').path;
  const host: ShellHost = {
    sandbox,
    home,
    env: () => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' }),
    allowedDomains: () => [],
    maxTimeoutMs: () => 600_000,
    ...(askHost ? { askHost } : {}),
  };
  const s = session(t, { overrides: { shell: host, spoolDir: testDir(t, 'wt-shell-spool-').path } });
  writeFileSync(nodePath.join(s.root, '.env'), `API_KEY=${CANARY}\n`);
  writeFileSync(nodePath.join(s.root, 'package.json'), '{"name":"fixture"}\n');
  writeFileSync(nodePath.join(s.root, 'package-lock.json'), '{"lockfileVersion":3}\n');
  execFileSync('git', ['init', '-q', s.root]);
  return s;
}

/** A real HTTP server on 127.0.0.1 that counts what reaches it. */
async function countingServer(t: TestContext): Promise<{ readonly port: number; readonly requests: () => number }> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.end('reached\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { port: (server.address() as AddressInfo).port, requests: () => requests };
}

/**
 * curl through the sandbox's proxy: by default a sandboxed command is told to reach loopback
 * directly (NO_PROXY), which its empty network namespace cannot; through the proxy the request is
 * judged by host like any other.
 */
const fetchVia = (port: number): string => `curl --noproxy '' -sS -m 20 http://127.0.0.1:${port}/`;

describe('run_shell_command: network hosts are asked', { timeout: 120_000 }, () => {
  test('attack: a command reaches a host nobody allowed — the person is asked naming the host, declines, and nothing reaches it', async (t) => {
    const server = await countingServer(t);
    const asks = scriptedHosts('deny');
    const s = shellSession(t, asks);
    const { text } = await s.invoke('run_shell_command', {
      command: `${fetchVia(server.port)}; ${fetchVia(server.port)}; echo done`,
    });
    assert.equal(server.requests(), 0, text);
    assert.equal(asks.asked.length, 1, 'declined once, the call does not ask again');
    assert.equal(asks.asked[0]!.host, '127.0.0.1');
    assert.equal(asks.asked[0]!.port, server.port);
    assert.deepEqual(asks.asked[0]!.commands, [`${fetchVia(server.port)}; ${fetchVia(server.port)}; echo done`]);
    assert.match(
      text,
      new RegExp(`network refused: 127\\.0\\.0\\.1:${server.port} \\(not in workspaceTools\\.shell\\.allowedDomains`),
    );
    assert.match(text, /^done$/m);
  });

  test('attack: a command reaches a host with nobody to ask (the CLI) — refused, and the result names the host', async (t) => {
    const server = await countingServer(t);
    const s = shellSession(t);
    const { text } = await s.invoke('run_shell_command', { command: fetchVia(server.port) });
    assert.equal(server.requests(), 0, text);
    assert.match(text, new RegExp(`network refused: 127\\.0\\.0\\.1:${server.port}`));
    // Nobody was asked: the refusal does not say the user denied it (issue 44, item 10).
    assert.doesNotMatch(text, /user denied/, text);
  });

  test('"Allow Once" lets the connection through and the next command is asked again; "for this session" is not asked again', async (t) => {
    const server = await countingServer(t);
    const asks = scriptedHosts('allow-once', 'allow-session');
    const s = shellSession(t, asks);
    const first = await s.invoke('run_shell_command', { command: fetchVia(server.port) });
    assert.match(first.text, /^reached$/m);
    assert.doesNotMatch(first.text, /network refused/);
    const second = await s.invoke('run_shell_command', { command: fetchVia(server.port) });
    assert.match(second.text, /^reached$/m);
    const third = await s.invoke('run_shell_command', { command: fetchVia(server.port) });
    assert.match(third.text, /^reached$/m);
    assert.equal(asks.asked.length, 2, 'the third command went through on the session answer');
    assert.equal(server.requests(), 3);
    assert.deepEqual(s.session.shell?.hosts.remembered, ['127.0.0.1']);
    assert.equal(s.session.shell?.hosts.forget(), 1);
  });

  test('one question per host at a time, and an answer that never comes refuses once the call ends', async () => {
    const hosts = new SessionHosts();
    let release: ((answer: HostAnswer) => void) | undefined;
    let asked = 0;
    const slow: HostDecider = () => {
      asked++;
      return new Promise((resolve) => {
        release = resolve;
      });
    };
    const controller = new AbortController();
    const both = Promise.all([
      hosts.ask('a.example', 443, ['x'], slow, controller.signal),
      hosts.ask('A.example', 443, ['x'], slow, controller.signal),
    ]);
    while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
    release('allow-session');
    assert.deepEqual(await both, ['allow-session', 'allow-session']);
    assert.equal(asked, 1);
    const ended = new AbortController();
    const pending = hosts.ask('b.example', 443, ['x'], () => new Promise(() => {}), ended.signal);
    ended.abort();
    assert.equal(await pending, 'deny');
    assert.equal(await hosts.ask('a.example', 80, [], undefined, controller.signal), 'allow-session');
    assert.equal(await hosts.ask('c.example', 80, [], undefined, controller.signal), 'deny');
  });
});

test('the MCP server asks about a host through elicitation, and refuses where it cannot ask or under --gate deny', async () => {
  const messages: string[] = [];
  const elicitor = (decision: string | undefined, can = true): Elicitor => ({
    canElicit: () => can,
    elicit: async (message) => {
      messages.push(message);
      return decision === undefined ? { action: 'decline' } : { action: 'accept', content: { decision } };
    },
  });
  const request = { host: 'registry.npmjs.org', port: 443, commands: ['npm install'] };
  const signal = new AbortController().signal;
  assert.equal(await mcpHostDecider('approve', elicitor('allow for this session'))(request, signal), 'allow-session');
  assert.match(messages[0]!, /connect to registry\.npmjs\.org:443\?[\s\S]*Running: npm install/);
  assert.equal(await mcpHostDecider('elicit', elicitor('allow once'))(request, signal), 'allow-once');
  assert.equal(await mcpHostDecider('elicit', elicitor(undefined))(request, signal), 'deny');
  assert.equal(await mcpHostDecider('elicit', elicitor('allow once', false))(request, signal), 'deny');
  assert.equal(await mcpHostDecider('deny', elicitor('allow once'))(request, signal), 'deny');
  assert.equal(messages.length, 3);
});

describe('run_shell_command: allow_protected_writes', { timeout: 120_000 }, () => {
  test('without it, a command cannot write package.json or a lockfile, and nobody is asked beyond the usual confirmation', async (t) => {
    const s = shellSession(t);
    const { text } = await s.invoke('run_shell_command', {
      command: 'echo "{}" > package.json; echo "{}" > package-lock.json',
    });
    assert.equal(readFileSync(nodePath.join(s.root, 'package.json'), 'utf8'), '{"name":"fixture"}\n', text);
    assert.equal(readFileSync(nodePath.join(s.root, 'package-lock.json'), 'utf8'), '{"lockfileVersion":3}\n');
    const call = s.gate.calls.at(-1)!;
    assert.equal(call.secret, false);
    assert.equal(call.protectedWrites, undefined);
  });

  test('with it, the gate is asked every time naming the protected globs; approved, the command writes them and nothing else opens', async (t) => {
    const s = shellSession(t);
    const hook = nodePath.join(s.root, '.git', 'hooks', 'pre-commit');
    const gitConfig = readFileSync(nodePath.join(s.root, '.git', 'config'), 'utf8');
    const command = [
      'echo \'{"name":"updated"}\' > package.json',
      'echo \'{"lockfileVersion":4}\' > package-lock.json',
      'echo "#!/bin/sh" > .git/hooks/pre-commit',
      'echo "[core] hooksPath = x" >> .git/config',
      'mkdir -p .vscode; echo "{}" > .vscode/settings.json',
      'echo leaked > .env',
      'cat .env',
    ].join('; ');
    const { text } = await s.invoke('run_shell_command', { command, allow_protected_writes: true });
    const call = s.gate.calls.at(-1)!;
    assert.equal(call.secret, true, 'asked every time, never remembered');
    const globs = call.protectedWrites ?? [];
    assert.ok(globs.includes('package.json') && globs.includes('*-lock.json'), globs.join(', '));
    assert.ok(!globs.includes('**/.vscode/**'), '.vscode stays read-only, so it is not named');
    assert.match(call.summary, /protected files included but \.vscode/);
    assert.equal(readFileSync(nodePath.join(s.root, 'package.json'), 'utf8'), '{"name":"updated"}\n', text);
    assert.equal(readFileSync(nodePath.join(s.root, 'package-lock.json'), 'utf8'), '{"lockfileVersion":4}\n');
    assert.equal(existsSync(hook), false, text);
    assert.equal(readFileSync(nodePath.join(s.root, '.git', 'config'), 'utf8'), gitConfig);
    assert.equal(existsSync(nodePath.join(s.root, '.vscode', 'settings.json')), false);
    for (const staged of ['.git/hooks/pre-commit', '.git/config', '.vscode/settings.json'])
      assert.ok(text.includes(`${staged} (m`), `${staged} is staged:\n${text}`);
    assert.equal(readFileSync(nodePath.join(s.root, '.env'), 'utf8'), `API_KEY=${CANARY}\n`);
    assert.ok(!text.includes(CANARY), text);
  });

  test('what one command was allowed is not kept for the next: the same unchanged tree is read-only again without the flag', async (t) => {
    const s = shellSession(t);
    const manifest = nodePath.join(s.root, 'package.json');
    await s.invoke('run_shell_command', { command: 'echo one > package.json' });
    assert.equal(readFileSync(manifest, 'utf8'), '{"name":"fixture"}\n');
    await s.invoke('run_shell_command', { command: 'echo two > package.json', allow_protected_writes: true });
    assert.equal(readFileSync(manifest, 'utf8'), 'two\n');
    await s.invoke('run_shell_command', { command: 'echo three > package.json' });
    assert.equal(readFileSync(manifest, 'utf8'), 'two\n');
  });

  test('declined, nothing runs and the protected files are unchanged', async (t) => {
    const s = shellSession(t);
    s.gate.allow = false;
    await assert.rejects(
      s.invoke('run_shell_command', { command: 'echo x > package.json; touch ran', allow_protected_writes: true }),
      (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_REFUSED',
    );
    assert.equal(readFileSync(nodePath.join(s.root, 'package.json'), 'utf8'), '{"name":"fixture"}\n');
    assert.equal(existsSync(nodePath.join(s.root, 'ran')), false);
  });
});

describe('run_shell_command: what is kept between calls stays correct', { timeout: 120_000 }, () => {
  test('attack: a .env created after the first command is unreadable to the next one', async (t) => {
    const s = shellSession(t);
    await s.invoke('run_shell_command', { command: 'true' });
    mkdirSync(nodePath.join(s.root, 'late'));
    writeFileSync(nodePath.join(s.root, 'late', '.env'), `LATE=${CANARY}\n`);
    const { text } = await s.invoke('run_shell_command', { command: 'cat late/.env' });
    assert.ok(!text.includes(CANARY), text);
    assert.match(text, /Permission denied/);
  });

  test('the verdicts kept for one policy are not used for another: a new deny rule holds at once', async (t) => {
    const root = testDir(t, 'wt-memo-').path;
    writeFileSync(nodePath.join(root, 'notes.txt'), 'x');
    chmodSync(root, 0o755);
    const memo = new VerdictMemo();
    const derive = async (policy: Policy) =>
      deriveBoundary({
        policy: policy.within([root]),
        roots: [{ name: 'w', address: root, localPath: root }],
        writeFolders: [root],
        home: '/home/someone',
        privateFolders: [],
        callFolders: ['/tmp/t/home', '/tmp/t/tmp'],
        readFolders: [],
        layered: true,
        allowedDomains: [],
        path: '/usr/bin:/bin',
        list: ripgrepLister(ripgrep),
        signal: new AbortController().signal,
        memo,
      });
    assert.ok(!(await derive(new Policy([]))).denyRead.includes(nodePath.join(root, 'notes.txt')));
    assert.ok(
      (await derive(new Policy([{ glob: 'notes.txt', read: 'deny' }]))).denyRead.includes(
        nodePath.join(root, 'notes.txt'),
      ),
    );
  });

  test('a write root below a workspace folder: only it is writable (through the layer), the whole folder readable', async (t) => {
    const root = testDir(t, 'wt-roots-').path;
    for (const rel of ['package.json', 'src/package.json', 'src/lib/a.ts', 'src/lib/yarn.lock', 'docs/Makefile']) {
      mkdirSync(nodePath.dirname(nodePath.join(root, rel)), { recursive: true });
      writeFileSync(nodePath.join(root, rel), 'x');
    }
    const boundary = await deriveBoundary({
      policy: new Policy([]).within([root]),
      roots: [{ name: 'w', address: root, localPath: root }],
      writeFolders: [nodePath.join(root, 'src')],
      home: '/home/someone',
      privateFolders: [],
      callFolders: ['/tmp/t/home', '/tmp/t/tmp'],
      readFolders: [],
      layered: true,
      allowedDomains: [],
      path: '/usr/bin:/bin',
      list: ripgrepLister(ripgrep),
      signal: new AbortController().signal,
    });
    assert.deepEqual(boundary.allowWrite, [nodePath.join(root, 'src'), '/tmp/t/home', '/tmp/t/tmp']);
    assert.ok(boundary.allowRead.includes(root));
  });

  test("attack: a deny rule written for a link's name holds for the command, as it does for the file tools", async (t) => {
    const home = testDir(t, 'wt-home-').path;
    const host: ShellHost = {
      sandbox,
      home,
      env: () => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home }),
      allowedDomains: () => [],
      maxTimeoutMs: () => 600_000,
    };
    const s = session(t, {
      rules: [{ glob: 'secrets/**', read: 'deny' }],
      overrides: { shell: host, spoolDir: testDir(t, 'wt-shell-spool-').path },
    });
    mkdirSync(nodePath.join(s.root, 'real'));
    writeFileSync(nodePath.join(s.root, 'real', 'data.txt'), `${CANARY}\n`);
    symlinkSync('real', nodePath.join(s.root, 'secrets'));
    const { text } = await s.invoke('run_shell_command', { command: 'cat real/data.txt; cat secrets/data.txt' });
    assert.ok(!text.includes(CANARY), text);
    // The folder the link names is masked whole (an empty folder in its place).
    assert.match(text, /cat: real\/data\.txt: No such file or directory/);
  });

  test('a walk that finds the same links keeps the same index, so the verdicts kept for the policy stay; a new link makes a new one', async (t) => {
    const root = testDir(t, 'wt-links-').path;
    mkdirSync(nodePath.join(root, 'a'));
    symlinkSync('a', nodePath.join(root, 'b'));
    const links = new LinkCache(
      new NodeFs(),
      { now: () => Date.now() },
      { audit: () => {}, info: () => {}, warn: () => {} },
    );
    const roots = [{ name: 'w', address: root, localPath: root }];
    const first = await links.refresh(roots, 0);
    assert.equal(await links.refresh(roots, 0), first);
    symlinkSync('a', nodePath.join(root, 'c'));
    const third = await links.refresh(roots, 0);
    assert.notEqual(third, first);
    assert.equal(third.links.length, 2);
  });
});
