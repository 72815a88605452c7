import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scopeRules } from '../../src/core/policy/rule-scopes.ts';
import { scopeWriteRoots } from '../../src/core/media/write-roots.ts';
import type { WorkspaceRoot } from '../../src/core/paths.ts';

const WS = 'workspace settings (.vscode/settings.json)';
const ALLOW_ALL = [{ glob: '**', read: 'allow', write: 'allow' }];

test('attack: an allow-everything rule in workspace settings — ignored and reported; secrets, protected files and .git stay guarded', () => {
  const scoped = scopeRules({ user: undefined, workspace: [{ value: ALLOW_ALL, where: WS }] });
  assert.deepEqual(scoped.errors, []);
  assert.equal(scoped.ignored.length, 1);
  assert.match(
    scoped.ignored[0]!,
    /^workspaceTools\.rules in workspace settings \(\.vscode\/settings\.json\): the rule \{"glob":"\*\*","read":"allow","write":"allow"\} would allow read and write without asking\. Only your user settings can loosen the gate/,
  );
  const { policy } = scoped;
  assert.equal(policy.decide('.env', 'read').action, 'ask');
  assert.equal(policy.decide('.vscode/settings.json', 'write').action, 'ask');
  assert.equal(policy.decide('.git/hooks/pre-commit', 'write').action, 'deny');
  assert.equal(policy.decide('src/app.ts', 'read').action, 'default', 'no allow: the ordinary confirmation applies');
});

test('attack: a workspace "ask" rule over .git — it cannot weaken the built-in deny', () => {
  const { policy } = scopeRules({
    user: undefined,
    workspace: [{ value: [{ glob: '.git/**', write: 'ask' }], where: WS }],
  });
  assert.equal(policy.decide('.git/hooks/pre-commit', 'write').action, 'deny');
});

test("attack: a workspace rule after the person's deny — the person's deny stands", () => {
  const { policy } = scopeRules({
    user: [{ glob: 'secret-notes/**', read: 'deny' }],
    workspace: [{ value: [{ glob: 'secret-notes/**', read: 'ask' }], where: WS }],
  });
  assert.equal(policy.decide('secret-notes/a.md', 'read').action, 'deny');
});

test('workspace rules may tighten: ask and deny apply, and search excludes them', () => {
  const scoped = scopeRules({
    user: [{ glob: 'docs/**', read: 'allow' }],
    workspace: [
      {
        value: [
          { glob: 'docs/private/**', read: 'deny' },
          { glob: '*.sql', read: 'ask' },
        ],
        where: WS,
      },
    ],
  });
  assert.deepEqual(scoped.ignored, []);
  const { policy } = scoped;
  assert.deepEqual(policy.decide('docs/private/a.md', 'read'), {
    action: 'deny',
    rule: 'docs/private/**',
    source: 'workspace',
  });
  assert.equal(policy.decide('docs/readme.md', 'read').action, 'allow', "the user's allow still applies elsewhere");
  assert.equal(policy.decide('db/dump.sql', 'read').action, 'ask');
  assert.ok(policy.searchExclusions('read').includes('docs/private/**'));
  assert.deepEqual(scoped.workspaceRules, [
    { glob: 'docs/private/**', read: 'deny', where: WS },
    { glob: '*.sql', read: 'ask', where: WS },
  ]);
});

test('user rules may loosen the built-in lists', () => {
  const scoped = scopeRules({
    user: [
      { glob: '.env.example', read: 'allow' },
      { glob: 'package.json', write: 'allow' },
    ],
    workspace: [],
  });
  assert.equal(scoped.policy.decide('.env.example', 'read').action, 'allow');
  assert.equal(scoped.policy.decide('package.json', 'write').action, 'allow');
});

test('a rule that both loosens and tightens keeps its tightening part', () => {
  const scoped = scopeRules({
    user: undefined,
    workspace: [{ value: [{ glob: 'build/**', read: 'allow', write: 'deny' }], where: WS }],
  });
  assert.equal(scoped.ignored.length, 1);
  assert.equal(scoped.policy.decide('build/out.js', 'write').action, 'deny');
  assert.equal(scoped.policy.decide('build/out.js', 'read').action, 'default');
});

test('an invalid workspace value never loosens: everything asks, and the error names the file', () => {
  const scoped = scopeRules({ user: undefined, workspace: [{ value: [{ glob: '**', read: 'yes' }], where: WS }] });
  assert.match(
    scoped.errors.join('\n'),
    /workspaceTools\.rules\[0\]\["read"\] in workspace settings \(\.vscode\/settings\.json\)/,
  );
  assert.equal(scoped.policy.decide('src/app.ts', 'read').action, 'ask');
});

const roots: WorkspaceRoot[] = [{ name: 'ws', address: '/ws', localPath: '/ws' }];
const displays = (r: { writeRoots: readonly { display: string }[] | undefined }) => r.writeRoots?.map((p) => p.display);

test('attack: widen writeRoots from workspace settings — ignored and reported; narrowing applies', () => {
  const widened = scopeWriteRoots(['src'], [{ value: ['.', 'scripts'], where: WS }], roots);
  assert.deepEqual(displays(widened), ['src']);
  assert.equal(widened.ignored.length, 2);
  assert.match(
    widened.ignored[0]!,
    /^workspaceTools\.writeRoots in workspace settings \(\.vscode\/settings\.json\): "\." is outside the write roots already in force \("src"\), so it is ignored/,
  );
  assert.deepEqual(
    displays(scopeWriteRoots(['src'], [{ value: null, where: WS }], roots)),
    ['src'],
    "null cannot lift the user's list",
  );
  assert.deepEqual(displays(scopeWriteRoots(['src'], [{ value: ['src/gen', 'docs'], where: WS }], roots)), ['src/gen']);
  assert.deepEqual(
    displays(scopeWriteRoots(undefined, [{ value: ['docs'], where: WS }], roots)),
    ['docs'],
    'the default (every folder) narrows to docs',
  );
  assert.deepEqual(
    displays(scopeWriteRoots(['src'], [{ value: [], where: WS }], roots)),
    [],
    'an empty list narrows to no save at all',
  );
  assert.deepEqual(displays(scopeWriteRoots(['src', 'docs'], [], roots)), ['src', 'docs']);
});

test('attack: one invalid workspace rule softens every deny into an ask — denies stay denies, only the rest asks', () => {
  const scoped = scopeRules({
    user: [
      { glob: 'private/**', read: 'deny' },
      { glob: 'docs/**', read: 'allow' },
    ],
    workspace: [{ value: [{ glob: '' }, { glob: 'build/**', write: 'deny' }], where: WS }],
  });
  assert.match(scoped.errors.join('\n'), /workspaceTools\.rules\[0\]\["glob"\] in workspace settings/);
  const decide = (path: string, risk: 'read' | 'write') => scoped.policy.decide(path, risk).action;
  assert.equal(decide('.git/hooks/pre-commit', 'write'), 'deny', 'the built-in .git write deny stays');
  assert.equal(decide('private/notes.md', 'read'), 'deny', "the user's read deny stays");
  assert.equal(decide('build/out.js', 'write'), 'deny', 'a valid workspace deny beside the broken rule stays');
  assert.equal(decide('docs/guide.md', 'read'), 'ask', "the user's allow no longer skips the question");
  assert.equal(decide('src/app.ts', 'read'), 'ask');
  assert.match(scoped.policy.decide('src/app.ts', 'write').reason ?? '', /invalid/);
});

test('attack: an invalid user rule beside a valid deny — the deny stays, the rest asks', () => {
  const scoped = scopeRules({
    user: [
      { glob: 'keys/**', read: 'deny' },
      { glob: 'a/**', read: 'maybe' },
    ],
    workspace: [],
  });
  assert.equal(scoped.errors.length, 1);
  assert.equal(scoped.policy.decide('keys/k.txt', 'read').action, 'deny');
  assert.equal(scoped.policy.decide('.env', 'read').action, 'ask');
  assert.equal(scoped.policy.decide('src/app.ts', 'read').action, 'ask');
});
