import { test, before, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { testDir } from './harness.ts';

const CLI = nodePath.resolve('dist/cli.js');

before(() => {
  if (!existsSync(CLI)) assert.equal(spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' }).status, 0);
});

function cli(
  args: string[],
  stdin?: string,
  env: NodeJS.ProcessEnv = process.env,
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { input: stdin ?? '', encoding: 'utf8', timeout: 30_000, env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('without --gate the CLI refuses to start and names the flag', () => {
  const r = cli(['list_directory', '{}']);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--gate is required: pass --gate approve or --gate deny/);
  assert.equal(r.stdout, '');
});

test('with --gate deny every call is E_SANDBOX_REFUSED', (tc) => {
  const ws = testDir(tc);
  for (const [tool, input] of [
    ['list_directory', '{}'],
    ['open_file', '{"path":"a.txt"}'],
    ['stage_file', '{"path":"a.txt","content":"x"}'],
  ] as const) {
    const r = cli(['--root', ws.path, '--gate', 'deny', tool, input]);
    assert.equal(r.status, 1);
    const out = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    assert.equal(out.error.code, 'E_SANDBOX_REFUSED', tool);
    assert.match(out.error.message, /--gate deny/);
  }
});

test('with --gate approve a call prints its result as JSON', (tc) => {
  const ws = testDir(tc);
  writeFileSync(nodePath.join(ws.path, 'a.txt'), 'abc');
  const r = cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{}']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    result: [{ path: '.', entries: [{ path: 'a.txt', type: 'file', depth: 1, size: 3 }] }],
  });
});

test('secrets are refused under --gate approve unless --allow-secrets', (tc) => {
  const ws = testDir(tc);
  mkdirSync(nodePath.join(ws.path, '.ssh'));
  const r = cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{"path":".ssh"}']);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /matches the secret rule \\"\*\*\/\.ssh\/\*\*\\".*--allow-secrets/);
  const allowed = cli(['--root', ws.path, '--gate', 'approve', '--allow-secrets', 'list_directory', '{"path":".ssh"}']);
  assert.equal(allowed.status, 0, allowed.stdout);
});

test('a session reads JSON lines and answers one line per call; failures are narrated', (tc) => {
  const ws = testDir(tc);
  writeFileSync(nodePath.join(ws.path, 'a.txt'), 'abc');
  const stdin = [
    '{"tool":"list_directory","input":{}}',
    'not json',
    '{"tool":"nope","input":{}}',
    '{"tool":"list_directory","input":{"path":"../etc"}}',
    '{"tool":"list_directory","input":{"max_depth":0}}',
  ].join('\n');
  const r = cli(['--root', ws.path, '--gate', 'approve', '--audit'], stdin);
  assert.equal(r.status, 1);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { result?: unknown; error?: { code: string } });
  assert.equal(lines.length, 5);
  assert.ok(lines[0]!.result);
  assert.deepEqual(
    lines.slice(1).map((l) => l.error?.code),
    ['E_SANDBOX_INVALID_INPUT', 'E_SANDBOX_INVALID_INPUT', 'E_SANDBOX_REFUSED', 'E_SANDBOX_INVALID_INPUT'],
  );
  assert.equal(
    r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{"audit"')).length,
    3,
  );
});

test('bad JSON arguments and unknown options are narrated', (tc) => {
  const ws = testDir(tc);
  const r = cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{oops']);
  assert.equal(r.status, 1);
  assert.match(JSON.parse(r.stdout).error.message, /not valid JSON/);
  const u = cli(['--root', ws.path, '--gate', 'maybe', 'list_directory', '{}']);
  assert.equal(u.status, 2);
  assert.match(u.stderr, /--gate must be approve or deny, not "maybe"/);
});

/** A CLI session over stdin, answering line by line; `next()` waits for its next output line. Ended when the test ends, passed or failed. */
function session(tc: Pick<TestContext, 'after'>, args: string[], env: NodeJS.ProcessEnv = process.env): CliSession {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  tc.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    child,
    exited,
    next: () =>
      new Promise((resolve) => {
        const line = lines.shift();
        if (line !== undefined) resolve(line);
        else waiting.push(resolve);
      }),
  };
}

interface CliSession {
  readonly child: ChildProcessWithoutNullStreams;
  next(): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The CLI spool folders in `tmp`. */
const spools = (tmp: string): string[] =>
  readdirSync(tmp)
    .filter((n) => n.startsWith('workspace-tools-cli-'))
    .sort();

/**
 * A CLI session, with a temp folder of its own (TMPDIR), that has opened a file (so its spool
 * folder holds something), and the name of that folder. `started` runs once the CLI was spawned,
 * before its spool folder is looked for.
 */
async function busySession(
  tc: Pick<TestContext, 'after'>,
  ws: string,
  started?: () => Promise<void>,
): Promise<{ s: CliSession; spool: string; tmp: string }> {
  writeFileSync(nodePath.join(ws, 'a.txt'), 'abc\n');
  const tmp = testDir(tc, 'wt-cli-tmp-').path;
  const s = session(tc, ['--root', ws, '--gate', 'approve'], { ...process.env, TMPDIR: tmp });
  s.child.stdin.write('{"tool":"open_file","input":{"path":"a.txt"}}\n');
  await started?.();
  assert.ok(JSON.parse(await s.next()).result);
  const mine = spools(tmp);
  assert.equal(mine.length, 1, mine.join(' '));
  return { s, spool: mine[0]!, tmp };
}

test(
  'attack: SIGTERM to a CLI session waiting for its next call ends it at once and removes its spool folder',
  { timeout: 60_000 },
  async (tc) => {
    const ws = testDir(tc);
    const { s, spool, tmp } = await busySession(tc, ws.path);
    s.child.kill('SIGTERM');
    // stdin stays open: the session must end on the signal alone.
    assert.deepEqual(await s.exited, { code: 143, signal: null });
    assert.equal(spools(tmp).includes(spool), false);
  },
);

test(
  'attack: a CLI killed with SIGKILL leaves its spool folder behind; the next CLI start removes it',
  { timeout: 60_000 },
  async (tc) => {
    const ws = testDir(tc);
    const { s, spool, tmp } = await busySession(tc, ws.path);
    s.child.kill('SIGKILL');
    await s.exited;
    assert.ok(spools(tmp).includes(spool), 'a killed CLI cannot clean up after itself');
    assert.equal(
      cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{}'], undefined, { ...process.env, TMPDIR: tmp })
        .status,
      0,
    );
    assert.equal(spools(tmp).includes(spool), false, 'the next start removed the stale spool folder');
  },
);

test(
  "issue 44 item 14: a CLI started elsewhere at the same moment (in the machine-wide temp folder) does not disturb a test's session",
  { timeout: 60_000 },
  async (tc) => {
    const ws = testDir(tc);
    const elsewhere = testDir(tc);
    const { spool } = await busySession(tc, ws.path, async () => {
      // Another CLI, with the machine's TMPDIR, that has made its spool folder by the time ours is looked for.
      const other = session(tc, ['--root', elsewhere.path, '--gate', 'approve']);
      other.child.stdin.write('{"tool":"list_directory","input":{}}\n');
      assert.ok(JSON.parse(await other.next()).result);
    });
    assert.match(spool, /^workspace-tools-cli-\d+-/);
  },
);

test(
  'issue 44 item 14: a test that fails ends the CLI it started (stdin still open), so the file cannot hang',
  { timeout: 60_000 },
  async (tc) => {
    let child: ChildProcessWithoutNullStreams | undefined;
    // A todo subtest: its failure is expected and does not fail the run.
    await tc.test('a test that fails while its CLI session waits on stdin', { todo: true }, (sub) => {
      child = session(sub, ['--root', testDir(sub).path, '--gate', 'approve']).child;
      assert.fail('failed on purpose, with the session running');
    });
    assert.ok(child);
    assert.ok(child.exitCode !== null || child.signalCode !== null, 'the session was ended when its test ended');
  },
);

test('attack: two --root folders with the same name are both reachable, under distinct names', (tc) => {
  const ws = testDir(tc);
  for (const side of ['one', 'two']) {
    mkdirSync(nodePath.join(ws.path, side, 'app'), { recursive: true });
    writeFileSync(nodePath.join(ws.path, side, 'app', 'which.txt'), `${side}\n`);
  }
  const roots = ['--root', nodePath.join(ws.path, 'one', 'app'), '--root', nodePath.join(ws.path, 'two', 'app')];
  const listed = cli([...roots, '--gate', 'approve', 'list_directory', '{"max_depth":1}']);
  assert.equal(listed.status, 0, listed.stdout);
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { result: { path: string }[] }).result.map((r) => r.path),
    ['app', 'app (2)'],
  );
  const second = cli([...roots, '--gate', 'approve', 'stage_file', '{"path":"app (2)/which.txt"}']);
  assert.equal(second.status, 0, second.stdout);
  assert.equal(
    (JSON.parse(second.stdout) as { result: { path: string; bytes: number } }).result.path,
    'app (2)/which.txt',
  );
});

test('attack: --gate approve writes through hard links to .vscode/settings.json and to a file outside the workspace', (tc) => {
  const ws = testDir(tc);
  const outside = testDir(tc, 'wt-outside-');
  mkdirSync(nodePath.join(ws.path, '.vscode'));
  const settings = nodePath.join(ws.path, '.vscode/settings.json');
  writeFileSync(settings, '{}\n');
  linkSync(settings, nodePath.join(ws.path, 'alias.json'));
  const far = nodePath.join(outside.path, 'profile');
  writeFileSync(far, 'export PATH=/usr/bin\n');
  linkSync(far, nodePath.join(ws.path, 'notes.txt'));
  for (const path of ['alias.json', 'notes.txt']) {
    const stdin = [
      JSON.stringify({ tool: 'stage_file', input: { path, content: 'written through a link\n' } }),
      JSON.stringify({ tool: 'save_media', input: { media_id: 'm1' } }),
    ].join('\n');
    const r = cli(['--root', ws.path, '--gate', 'approve'], stdin);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { error?: { code: string; message: string } });
    assert.equal(lines[0]?.error?.code, 'E_SANDBOX_REFUSED', `${path}: ${r.stdout}`);
    assert.match(lines[0]!.error!.message, /has 2 names \(hard links\).*--allow-secrets/);
  }
  assert.equal(readFileSync(settings, 'utf8'), '{}\n');
  assert.equal(readFileSync(far, 'utf8'), 'export PATH=/usr/bin\n');
});

test(
  'run_shell_command under --gate approve: allow_protected_writes is refused unless --allow-secrets, and a host no --allow-domain names is refused and named',
  { timeout: 60_000 },
  (tc) => {
    const ws = testDir(tc);
    writeFileSync(nodePath.join(ws.path, 'package.json'), '{"name":"before"}\n');
    const write = JSON.stringify({ command: 'echo \'{"name":"after"}\' > package.json', allow_protected_writes: true });
    const refused = cli(['--root', ws.path, '--gate', 'approve', 'run_shell_command', write]);
    assert.equal(refused.status, 1);
    const error = (JSON.parse(refused.stdout) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'E_SANDBOX_REFUSED');
    assert.match(
      error.message,
      /with allow_protected_writes was refused: it would let the command write protected files \(the protected files of \d+ families \(.*JavaScript and TypeScript package managers and runtimes.*\), \d+ globs in all, .*\), and nobody is here to confirm it \(rerun with --allow-secrets/,
    );
    assert.equal(readFileSync(nodePath.join(ws.path, 'package.json'), 'utf8'), '{"name":"before"}\n');
    const allowed = cli(['--root', ws.path, '--gate', 'approve', '--allow-secrets', 'run_shell_command', write]);
    assert.equal(allowed.status, 0, allowed.stdout);
    assert.equal(readFileSync(nodePath.join(ws.path, 'package.json'), 'utf8'), '{"name":"after"}\n');
    const fetched = cli([
      '--root',
      ws.path,
      '--gate',
      'approve',
      'run_shell_command',
      JSON.stringify({ command: "curl --noproxy '' -sS -m 20 http://127.0.0.1:9/" }),
    ]);
    const result = (JSON.parse(fetched.stdout) as { result: { refusedHosts: string[] } }).result;
    assert.deepEqual(result.refusedHosts, ['127.0.0.1:9']);
  },
);

test('issue 44 item 13: under a Node older than 22 the CLI and the MCP server refuse to start, naming the version, and write nothing to stdout', (tc) => {
  const ws = testDir(tc);
  // Node 20 as the CLI sees it: process.version is all it reads.
  const preload = nodePath.join(testDir(tc).path, 'node20.cjs');
  writeFileSync(preload, "Object.defineProperty(process, 'version', { value: 'v20.20.2' });\n");
  for (const args of [
    ['--root', ws.path, '--gate', 'approve', 'list_directory', '{}'],
    ['mcp', '--root', ws.path, '--gate', 'approve'],
  ]) {
    const r = spawnSync(process.execPath, ['--require', preload, CLI, ...args], {
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 2, args[0]);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'workspace-tools: needs Node 22 or later, and this is Node 20.20.2. Run it with a newer node (`node --version` says which one is on PATH).\n',
    );
  }
});

test("issue 44 item 10: the CLI's messages name its own flags (the --policy file, this CLI session), not VS Code's settings", (tc) => {
  const ws = testDir(tc);
  mkdirSync(nodePath.join(ws.path, 'private'));
  writeFileSync(nodePath.join(ws.path, 'private', 'keys.txt'), 'k\n');
  const policy = nodePath.join(testDir(tc).path, 'rules.json');
  writeFileSync(policy, JSON.stringify([{ glob: 'private/**', read: 'deny' }]));
  const stdin = [
    JSON.stringify({ tool: 'open_file', input: { path: 'private/keys.txt' } }),
    JSON.stringify({ tool: 'artifact_read', input: { callId: 'art-000000-9' } }),
  ].join('\n');
  const r = cli(['--root', ws.path, '--gate', 'approve', '--policy', policy], stdin);
  const [denied, gone] = r.stdout
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { error: { message: string } }).error.message);
  assert.equal(
    denied,
    'open_file on "private/keys.txt" was refused by the rule "private/**" (read denied). Do not retry this path; work with other files or ask the user to change the --policy file.',
  );
  assert.match(gone ?? '', /artifacts live only as long as this CLI session and this id is not one of them/);
});

test("issue 44 item 10: an invalid --policy file is named as the file, not as VS Code's workspaceTools.rules setting", (tc) => {
  const ws = testDir(tc);
  const policy = nodePath.join(testDir(tc).path, 'rules.json');
  writeFileSync(policy, JSON.stringify([{ glob: 'private/**', read: 'maybe' }]));
  for (const args of [
    ['--root', ws.path, '--gate', 'approve', '--policy', policy, 'list_directory', '{}'],
    ['mcp', '--root', ws.path, '--gate', 'approve', '--policy', policy],
  ]) {
    const r = cli(args);
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^workspace-tools: Invalid policy: ${policy.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\[0\\]\\["read"\\]: `,
      ),
    );
    assert.doesNotMatch(r.stderr, /workspaceTools/);
  }
});
