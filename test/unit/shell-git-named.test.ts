import { describe, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { namedByConfig, pathsInCommand, personalConfigFiles, readPersonalConfig } from '../../src/core/git/named.ts';
import { testDir } from './harness.ts';

const git = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });

describe("what a repository's configuration names for git to read or run", () => {
  test("attack: the paths in a command line — every word (a bare 'sh clean.sh' runs a file of the work tree too), quoted or an option's value, from the work tree's top or home; not a placeholder, an option or a URL", () => {
    const top = '/w';
    assert.deepEqual(pathsInCommand('./tools/clean.sh %f', top, '/h'), ['/w/tools/clean.sh']);
    assert.deepEqual(pathsInCommand('sh clean.sh', top, '/h'), ['/w/sh', '/w/clean.sh']);
    assert.deepEqual(pathsInCommand('python3 x.py', top, '/h'), ['/w/python3', '/w/x.py']);
    assert.deepEqual(pathsInCommand('"/w/.venv/bin/python" -m nbstripout', top, '/h'), [
      '/w/.venv/bin/python',
      '/w/nbstripout',
    ]);
    assert.deepEqual(pathsInCommand("!sh 'scripts/a b.sh' --config=conf/x.cfg", top, '/h'), [
      '/w/sh',
      '/w/scripts/a b.sh',
      '/w/conf/x.cfg',
    ]);
    assert.deepEqual(pathsInCommand('~/bin/helper get', top, '/h'), ['/h/bin/helper', '/w/get']);
    assert.deepEqual(pathsInCommand('cache --timeout=3600', top, '/h'), ['/w/cache', '/w/3600']);
    assert.deepEqual(pathsInCommand('helper --url=https://example.invalid/x', top, '/h'), ['/w/helper']);
  });

  test("a repository's includes (followed, each condition taken as met, a missing one too), hooks folders and programs given as paths; the person's own configuration's too; a linked worktree reads its common configuration and runs in its own folder", async (t) => {
    const root = testDir(t, 'wt-named-').path;
    const home = nodePath.join(root, 'home');
    const repo = nodePath.join(root, 'repo');
    mkdirSync(home);
    git('init', '-q', repo);
    const config = (...args: string[]): string => git('-C', repo, 'config', ...args);
    config('--add', 'include.path', 'config.local');
    config('--add', 'include.path', '../team.gitconfig');
    config('includeIf.onbranch:nowhere.path', '~/branch.gitconfig');
    config('filter.x.clean', './tools/clean.sh %f');
    config('core.fsmonitor', '"tools/fs monitor" --fast');
    writeFileSync(
      nodePath.join(repo, 'team.gitconfig'),
      '[core]\n\thooksPath = .githooks\n[include]\n\tpath = nested.gitconfig\n',
    );
    writeFileSync(nodePath.join(repo, 'nested.gitconfig'), '[diff "pdf"]\n\ttextconv = bin/pdf2txt\n');
    writeFileSync(
      nodePath.join(home, '.gitconfig'),
      '[credential]\n\thelper = !./scripts/cred\n[include]\n\tpath = extra.gitconfig\n',
    );
    assert.deepEqual(personalConfigFiles(home, { GIT_CONFIG_GLOBAL: '/g', GIT_CONFIG_SYSTEM: '/s' }), ['/s', '/g']);
    const personal = await readPersonalConfig(
      personalConfigFiles(home, { XDG_CONFIG_HOME: nodePath.join(home, 'xdg') }),
      home,
    );
    assert.deepEqual(
      personal.includes.map((n) => n.path),
      [
        '/etc/gitconfig',
        nodePath.join(home, 'xdg', 'git', 'config'),
        nodePath.join(home, '.gitconfig'),
        nodePath.join(home, 'extra.gitconfig'),
      ],
    );
    const named = await namedByConfig(nodePath.join(repo, '.git'), personal, home);
    const paths = new Map(named.map((n) => [n.path, n]));
    const expected = [
      '.git/config.local',
      'team.gitconfig',
      'nested.gitconfig',
      'tools/clean.sh',
      'tools/fs monitor',
      '.githooks',
      'bin/pdf2txt',
      'scripts/cred',
    ].map((rel) => nodePath.join(repo, rel));
    for (const path of [...expected, nodePath.join(home, 'branch.gitconfig')])
      assert.ok(paths.has(path), `${path} in ${[...paths.keys()].join(', ')}`);
    assert.equal(paths.get(nodePath.join(repo, '.githooks'))?.hooks, true);
    assert.match(
      paths.get(nodePath.join(repo, 'tools/clean.sh'))!.why,
      /a program that filter\.x\.clean names, which git — VS Code's git too, outside the sandbox — runs/,
    );
    assert.match(paths.get(nodePath.join(repo, '.git/config.local'))!.why, /includes \(include\.path\)/);
    assert.match(paths.get(nodePath.join(home, 'branch.gitconfig'))!.why, /includeIf\.onbranch:nowhere\.path/);

    git('-C', repo, 'commit', '-q', '--allow-empty', '-m', 'first');
    const linked = nodePath.join(root, 'linked');
    git('-C', repo, 'worktree', 'add', '-q', linked);
    const worktree = await namedByConfig(nodePath.join(repo, '.git', 'worktrees', 'linked'), personal, home);
    const worktreePaths = worktree.map((n) => n.path);
    assert.ok(worktreePaths.includes(nodePath.join(linked, 'tools/clean.sh')), worktreePaths.join(', '));
    assert.ok(worktreePaths.includes(nodePath.join(repo, '.git', 'config.local')), worktreePaths.join(', '));
    // A pipe in place of the worktree's gitdir file (a command can make one) is not waited on.
    const gitdir = nodePath.join(repo, '.git', 'worktrees', 'linked', 'gitdir');
    rmSync(gitdir);
    execFileSync('mkfifo', [gitdir]);
    assert.ok((await namedByConfig(nodePath.join(repo, '.git', 'worktrees', 'linked'), personal, home)).length > 0);
  });
});
