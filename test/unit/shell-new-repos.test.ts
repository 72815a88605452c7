import { describe, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { entryName, parseConfig } from '../../src/core/shell/git-config.ts';
import { gitEntriesNear, newGitDirs, unsafeConfig, unsafeGitDir } from '../../src/core/shell/new-repos.ts';
import { folderWatch } from '../../src/core/shell/folder-watch.ts';
import { testDir } from './harness.ts';

const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', '-c', 'protocol.file.allow=always', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

/** Texts git reads, and some it may read differently from a careless parser. */
const CONFIGS = [
  '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n',
  '[core]\n\tfsmonitor = touch pwned\n',
  '[Core]\n\tFsMonitor = "touch pwned"\n',
  '[core] fsmonitor = same-line\n',
  '[core]fsmonitor=no-space\n',
  '[core]\n\tfsmonitor = a \\\n\tcontinued\n',
  '[core.sub]\n\tx = legacy-subsection\n',
  '[remote "origin"]\n\turl = https://example.invalid/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n',
  '[remote "a \\"b\\""]\n\turl = x\n\tuploadpack = touch pwned\n',
  '[filter "lfs"]\n\tclean = touch pwned\n',
  '[include]\n\tpath = ../evil\n',
  '[includeIf "gitdir:/"]\n\tpath = ../evil\n',
  '[submodule "m"]\n\tupdate = !touch pwned\n\turl = ../m\n',
  '; comment\n# another\n[user]\n\tname = x ; trailing\n\temail = "a;b#c"\n',
  '\uFEFF[core]\n\tbare = false\n',
  '[core]\n\tbare\n',
  '[diff "x"]\n\ttextconv = touch pwned\n[alias]\n\tst = !touch pwned\n',
];

describe('a repository a command makes', () => {
  test('its configuration is read as git reads it (compared with git config --list)', (t) => {
    const file = nodePath.join(testDir(t, 'wt-config-').path, 'config');
    for (const text of CONFIGS) {
      writeFileSync(file, text);
      let listed: string[];
      try { listed = git('config', '-f', file, '--name-only', '--list').split('\n').filter((l) => l !== ''); } catch { continue; }
      const parsed = parseConfig(text);
      assert.deepEqual(parsed.unread, [], JSON.stringify(text));
      // git lower-cases a legacy [section.subsection] too.
      assert.deepEqual(parsed.entries.map(entryName).map((n) => n.toLowerCase()), listed.map((n) => n.toLowerCase()), JSON.stringify(text));
    }
  });

  test('keeps to what git init, git clone and everyday settings write; any other name, or a line git may read as one, is unsafe', () => {
    const safe = [CONFIGS[0]!, CONFIGS[7]!, CONFIGS[13]!, CONFIGS[14]!, CONFIGS[15]!];
    for (const text of safe) assert.equal(unsafeConfig(text), undefined, JSON.stringify(text));
    for (const text of CONFIGS.filter((c) => !safe.includes(c))) assert.notEqual(unsafeConfig(text), undefined, JSON.stringify(text));
    assert.match(unsafeConfig(CONFIGS[1]!)!, /sets core\.fsmonitor/);
    assert.match(unsafeConfig('[core]\n\tbare = false\n= x\n')!, /a line git may read as a setting/);
  });

  test('a change VS Code\'s git takes as a sign of a repository leads to every .git it could find from there, within the write folder and outside installed dependencies', () => {
    const ws = nodePath.join(nodePath.sep, 'ws');
    const p = (...parts: string[]): string => nodePath.join(ws, ...parts);
    assert.deepEqual(gitEntriesNear(p('a', 'b', '.gitignore'), [ws]), [p('a', 'b', '.git'), p('a', '.git'), p('.git')]);
    assert.deepEqual(gitEntriesNear(p('fresh', '.git', 'config'), [ws]), [p('fresh', '.git'), p('.git'), p('fresh', '.git', '.git')]);
    // VS Code's git looks from before the first ".git" in the path, wherever it is.
    assert.deepEqual(gitEntriesNear(p('x.github.io', '.gitignore'), [ws]), [p('x', '.git'), p('.git'), p('x.github.io', '.git')]);
    assert.deepEqual(gitEntriesNear(p('x.github.io', 'f.txt'), [ws]), []);
    assert.deepEqual(gitEntriesNear(p('node_modules', 'pkg', '.git', 'config'), [ws]), [p('.git')]);
    assert.deepEqual(gitEntriesNear(p('src', 'a.ts'), [ws]), []);
    assert.deepEqual(gitEntriesNear(nodePath.join(nodePath.sep, 'elsewhere', '.git', 'config'), [ws]), []);
    assert.deepEqual(gitEntriesNear(p('.gitignore'), [p('sub')]), []);
  });

  test('a new repository, a clone and a submodule are safe as git makes them; a hook, what sends git elsewhere, a link, a gitdir outside the write folders, or a new work tree for a repository there before is not; a repository there before is not judged', (t) => {
    const root = testDir(t, 'wt-new-repos-').path;
    const at = (rel: string): string => nodePath.join(root, rel);
    git('init', '-q', at('upstream'));
    git('-C', at('upstream'), 'commit', '-q', '--allow-empty', '-m', 'u');
    git('init', '-q', at('old'));
    git('-C', at('old'), 'config', 'core.fsmonitor', 'the person set this');
    const known = new Set([at('old/.git')]);
    const since = Date.now() - 50;
    const judged = async (entry: string): Promise<string[]> => {
      const { unsafe, gitDirs } = await newGitDirs(at(entry), [root], known, since);
      const found = [...(unsafe ? [unsafe] : []), ...(await Promise.all(gitDirs.map(unsafeGitDir))).flat()];
      return found.map((f) => nodePath.relative(root, f.path));
    };
    return (async () => {
      assert.deepEqual(await judged('old/.git'), []);
      git('init', '-q', at('fresh'));
      assert.deepEqual(await judged('fresh/.git'), []);
      git('clone', '-q', at('upstream'), at('cloned'));
      assert.deepEqual(await judged('cloned/.git'), []);
      git('-C', at('cloned'), 'submodule', 'add', '-q', at('upstream'), 'sub');
      assert.deepEqual(await judged('cloned/.git'), [], 'a submodule\'s git directory (core.worktree) is safe');
      git('-C', at('fresh'), 'config', 'core.fsmonitor', 'touch pwned');
      assert.deepEqual(await judged('fresh/.git'), ['fresh/.git/config']);
      git('-C', at('cloned/sub'), 'config', 'core.hooksPath', '.h');
      assert.deepEqual(await judged('cloned/.git'), ['cloned/.git/modules/sub/config']);
      writeFileSync(at('fresh/.git/hooks/post-index-change'), '#!/bin/sh\ntouch pwned\n', { mode: 0o755 });
      assert.deepEqual(await judged('fresh/.git'), ['fresh/.git/hooks/post-index-change', 'fresh/.git/config']);
      git('init', '-q', at('linked-hooks'));
      rmSync(at('linked-hooks/.git/hooks'), { recursive: true });
      symlinkSync(at('old/.git/hooks'), at('linked-hooks/.git/hooks'));
      assert.deepEqual(await judged('linked-hooks/.git'), ['linked-hooks/.git/hooks']);
      git('init', '-q', at('redirect'));
      writeFileSync(at('redirect/.git/commondir'), '../../old/.git\n');
      assert.deepEqual(await judged('redirect/.git'), ['redirect/.git/commondir']);
      const outside = testDir(t, 'wt-outside-').path;
      git('init', '-q', '--bare', outside);
      mkdirSync(at('pointer'));
      writeFileSync(at('pointer/.git'), `gitdir: ${outside}\n`);
      assert.deepEqual(await judged('pointer/.git'), ['pointer/.git']);
      mkdirSync(at('linked'));
      symlinkSync(outside, at('linked/.git'));
      assert.deepEqual(await judged('linked/.git'), ['linked/.git']);
      git('init', '-q', '--separate-git-dir', at('kept-inside'), at('separate'));
      assert.deepEqual(await judged('separate/.git'), [], 'a .git file naming a new git directory inside is judged by that directory');
      git('-C', at('separate'), 'config', 'filter.x.clean', 'touch pwned');
      assert.deepEqual(await judged('separate/.git'), ['kept-inside/config']);
      // A new work tree for a repository that was there: its relative hooks folder (husky's .husky/_) would be the new folder's.
      mkdirSync(at('elsewhere'));
      writeFileSync(at('elsewhere/.git'), 'gitdir: ../old/.git\n');
      assert.deepEqual(await judged('elsewhere/.git'), ['elsewhere/.git']);
    })();
  });

  test('the watch the CLI and the MCP server give reports what a command makes: in folders made after it started (what they held before their own watch too), inside a git directory, not in installed dependencies', { timeout: 30_000 }, async (t) => {
    const root = testDir(t, 'wt-folder-watch-').path;
    const at = (rel: string): string => nodePath.join(root, rel);
    mkdirSync(at('existing'));
    mkdirSync(at('node_modules/pkg'), { recursive: true });
    const watch = folderWatch();
    t.after(() => watch.dispose());
    const seen = new Set<string>();
    let wake: (() => void) | undefined;
    const subscription = watch.watchGit([root], (path) => { seen.add(path); wake?.(); });
    const reported = async (rel: string): Promise<void> => {
      while (!seen.has(at(rel))) await new Promise<void>((resolve) => { wake = resolve; });
    };
    // Made at once by another process: a/b/c and its .git exist before a watch can be put on them.
    git('init', '-q', at('a/b/c'));
    await reported('a/b/c/.git');
    await reported('a/b/c/.git/config');
    writeFileSync(at('existing/.gitignore'), '');
    await reported('existing/.gitignore');
    seen.delete(at('a/b/c/.git/config'));
    git('-C', at('a/b/c'), 'config', 'core.fsmonitor', 'touch pwned');
    await reported('a/b/c/.git/config');
    writeFileSync(at('node_modules/pkg/.gitignore'), '');
    writeFileSync(at('marker'), '');
    await reported('marker');
    assert.equal(seen.has(at('node_modules/pkg/.gitignore')), false, 'installed dependencies are watched');
    subscription.dispose();
  });
});
