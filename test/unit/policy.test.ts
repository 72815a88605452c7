import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Policy, parseRules, SECRET_GLOBS } from '../../src/core/policy/policy.ts';
import { globReachesBelow } from '../../src/core/glob/below.ts';
import { anyOf, ruleRegex, ruleSource } from '../../src/core/policy/rule-glob.ts';
import { backtrackSafeGlob } from '../../src/core/glob/linear.ts';

test('the built-in secret list is asked for reads and writes', () => {
  const policy = new Policy([]);
  for (const path of [
    '.env',
    '.env.local',
    'app/.env.production',
    'certs/server.pem',
    'tls.key',
    'id_rsa',
    'home/id_ed25519.pub',
    '.npmrc',
    '.netrc',
    '.git/config',
    'sub/.git/config',
    '.ssh/config',
    'a/.ssh/known_hosts',
    'store.p12',
    '.aws/credentials',
  ]) {
    assert.equal(policy.decide(path, 'read').action, 'ask', path);
    assert.equal(policy.decide(path, 'write').action, path.includes('.git/') ? 'deny' : 'ask', path);
  }
  for (const path of ['src/env.ts', 'README.md', 'keys.ts', 'package.json', '.gitignore', 'docs/ssh.md']) {
    assert.equal(policy.decide(path, 'read').action, 'default', path);
  }
  assert.ok(SECRET_GLOBS.length >= 20);
});

test('writes into .git are denied by default', () => {
  assert.equal(new Policy([]).decide('.git/hooks/pre-commit', 'write').action, 'deny');
  assert.equal(new Policy([]).decide('.git/hooks/pre-commit', 'read').action, 'default');
});

test('the last matching rule wins, per risk', () => {
  const policy = new Policy([
    { glob: 'logs/**', read: 'deny', write: 'deny' },
    { glob: 'logs/public/**', read: 'allow' },
    { glob: '.env.example', read: 'allow' },
  ]);
  const user = { source: 'user' } as const;
  assert.deepEqual(policy.decide('logs/a.log', 'read'), { action: 'deny', rule: 'logs/**', ...user });
  assert.deepEqual(policy.decide('logs/public/a.log', 'read'), { action: 'allow', rule: 'logs/public/**', ...user });
  assert.deepEqual(policy.decide('logs/public/a.log', 'write'), { action: 'deny', rule: 'logs/**', ...user });
  assert.deepEqual(policy.decide('.env.example', 'read'), { action: 'allow', rule: '.env.example', ...user });
  assert.deepEqual(policy.decide('.env', 'read'), {
    action: 'ask',
    rule: '.env',
    source: 'secret',
    reason: policy.decide('.env', 'write').reason,
  });
});

test('a folder rule covers the folder itself, so search never enters it', () => {
  const policy = new Policy([{ glob: 'private/**', read: 'deny' }]);
  assert.equal(policy.decide('private', 'read').action, 'deny');
  assert.equal(policy.hidesFromSearch('private/deep/file.txt', 'read'), true);
  assert.equal(policy.hidesFromSearch('public/file.txt', 'read'), false);
});

test('search exclusions keep deny and ask globs that no later rule relaxes', () => {
  const policy = new Policy([
    { glob: 'private/**', read: 'deny' },
    { glob: '*.pem', read: 'allow' },
  ]);
  const exclusions = policy.searchExclusions('read');
  assert.ok(exclusions.includes('private/**'));
  assert.ok(exclusions.includes('.env'));
  assert.equal(exclusions.includes('*.pem'), false);
  assert.deepEqual(
    new Policy(
      [
        { glob: 'logs/**', read: 'deny' },
        { glob: 'logs/public/**', read: 'allow' },
      ],
      { includeDefaults: false },
    ).searchExclusions('read'),
    [],
  );
});

test('invalid rules never allow: the policy asks for everything and reports each problem', () => {
  const bad = parseRules([{ glob: 'a/**', read: 'maybe' }, { pattern: 'x' }]);
  assert.equal(bad.errors.length >= 2, true);
  assert.match(bad.errors.join('\n'), /workspaceTools\.rules\[0\]\["read"\]/);
  assert.equal(bad.policy.decide('src/index.ts', 'read').action, 'ask');
  assert.equal(bad.policy.decide('src/index.ts', 'write').action, 'ask');
  assert.deepEqual(parseRules('not a list').policy.decide('x', 'read').action, 'ask');
  const good = parseRules([{ glob: 'dist/**', write: 'deny' }]);
  assert.deepEqual(good.errors, []);
  assert.equal(good.policy.decide('dist/a.js', 'write').action, 'deny');
});

test("a person's rule glob that could backtrack runs on RE2 and matches every normalized path picomatch's RegExp matches", () => {
  const segment = fc.constantFrom(
    'a',
    'b',
    'ab',
    '.env',
    'x.pem',
    'src',
    '.git',
    'config',
    'aaab',
    'A.PEM',
    'sec{ret}',
    'a b',
  );
  const piece = fc.constantFrom(
    '*',
    '**',
    '?',
    'a',
    'b',
    '.',
    '{a,b}',
    '{*a,b*}',
    '[ab]',
    '[!a]',
    'x',
    '.pem',
    '/',
    '**/',
  );
  const glob = fc
    .array(piece, { minLength: 1, maxLength: 7 })
    .map((p) => p.join(''))
    .filter((g) => !backtrackSafeGlob(g));
  fc.assert(
    fc.property(
      glob,
      fc.array(
        fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/')),
        { minLength: 1, maxLength: 10 },
      ),
      fc.boolean(),
      (g, paths, ignoreCase) => {
        let reference: RegExp;
        try {
          reference = new RegExp(ruleSource(g), ignoreCase ? 'i' : '');
        } catch {
          return;
        }
        const linear = ruleRegex(g, false);
        assert.equal(linear.backtrackSafe, false);
        const test = anyOf([linear], ignoreCase);
        for (const p of paths) if (reference.test(p)) assert.ok(test(p), `${g} on ${p}`);
      },
    ),
    { numRuns: 2000 },
  );
});

test('rule globs that cannot be matched safely are refused like any invalid rule', () => {
  const parsed = parseRules([
    { glob: '!(*.md)', read: 'deny' },
    { glob: 'a\u0000b', read: 'deny' },
  ]);
  assert.equal(parsed.errors.length, 2);
  assert.match(parsed.errors[0]!, /look-around/);
  assert.match(parsed.errors[1]!, /NUL or control character/);
  assert.equal(parsed.policy.decide('README.md', 'read').action, 'ask');
});

test('a line break in a folder name hides nothing from a rule: `**` spans it (a crate under "x⏎/" picked up its .cargo/config.toml unasked)', () => {
  const policy = new Policy([{ glob: 'deploy/**', write: 'deny' }]);
  for (const folder of ['x\n', '\n', 'a\nb', 'sub/x\r\n']) {
    assert.equal(policy.decide(`${folder}/.cargo/config.toml`, 'write').action, 'ask', JSON.stringify(folder));
    assert.equal(policy.decide(`${folder}/.github/workflows/ci.yml`, 'write').action, 'ask', JSON.stringify(folder));
    assert.equal(policy.decide(`${folder}/.aws/credentials`, 'read').action, 'ask', JSON.stringify(folder));
    assert.equal(policy.decide(`deploy/${folder}/x.yml`, 'write').action, 'deny', JSON.stringify(folder));
  }
  // A person's rule that runs on RE2 (it could backtrack) spans a line break too.
  const slow = new Policy([{ glob: '**/a*a*a*a*a*a*/**', read: 'deny' }]);
  assert.equal(slow.decide('q\n/aaaaaa/f', 'read').action, 'deny');
});

test("a link's name with a line break at a segment's start still meets a wildcard segment of a rule (deploy/⏎prod under deploy/*/secrets/**)", () => {
  assert.equal(globReachesBelow('deploy/*/secrets/**', 'deploy/prod'), true);
  assert.equal(globReachesBelow('deploy/*/secrets/**', 'deploy/\nprod'), true);
  assert.equal(globReachesBelow('deploy/p?od/**', 'deploy/p\nod'), true);
});
