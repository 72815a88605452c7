import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import picomatch from 'picomatch';
import { BUILT_IN_RULES, Policy, type Rule, type RuleAction, type SourcedRule } from '../../src/core/policy/policy.ts';
import type { Risk } from '../../src/core/contract/tool.ts';
import { namePrefilter } from '../../src/core/policy/name-prefilter.ts';
import { ruleRegex } from '../../src/core/policy/rule-glob.ts';

/** An absolute folder as rules see it (as Policy does): "/" separators, no drive letter, no leading or trailing "/". */
const ruleForm = (folder: string): string =>
  folder
    .replace(/\\/g, '/')
    .replace(/^[a-zA-Z]:/, '')
    .replace(/^\/+|\/+$/g, '');

/**
 * The rules' meaning with no shortcut: every rule tested on every path, the last match winning. A
 * protective rule (built-in, or a person's ask/deny) matches in any case, and also the absolute path,
 * each also as a case-folding, normalizing disk spells it (issue 26: the Kelvin sign is "k").
 */
function reference(rules: readonly SourcedRule[], path: string, risk: Risk, folder?: string): RuleAction | 'default' {
  let action: RuleAction | 'default' = 'default';
  const base = folder === undefined ? undefined : ruleForm(folder);
  const absolute = base === undefined ? undefined : path === '' ? base : base === '' ? path : `${base}/${path}`;
  const matches = (glob: string, subject: string, nocase: boolean): boolean => {
    const options = { dot: true, nocase };
    const target = glob.includes('/') ? subject : subject.slice(subject.lastIndexOf('/') + 1);
    return (
      picomatch.isMatch(target, glob, options) ||
      (glob.endsWith('/**') && picomatch.isMatch(subject, glob.slice(0, -3), options))
    );
  };
  for (const { rule, source } of rules) {
    const ruleAction = rule[risk];
    if (ruleAction === undefined) continue;
    const protective = source !== 'user' || ruleAction !== 'allow';
    const folded = (subject: string): string => subject.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
    const onPath =
      path !== '' && (matches(rule.glob, path, protective) || (protective && matches(rule.glob, folded(path), true)));
    const onAbsolute =
      protective &&
      absolute !== undefined &&
      absolute !== '' &&
      (matches(rule.glob, absolute, true) || matches(rule.glob, folded(absolute), true));
    if (onPath || onAbsolute) action = ruleAction;
  }
  return action;
}

const USER_RULES: Rule[] = [
  { glob: 'secrets/**', read: 'deny', write: 'deny' },
  { glob: 'src/*.key.txt', read: 'ask' },
  { glob: 'docs/**/private-*.md', read: 'deny' },
  { glob: '.env.example', read: 'allow' },
  { glob: 'Public/**', read: 'allow', write: 'allow' },
];

const FOLDERS = [undefined, '/home/u/proj', '/home/u/.aws/proj', '/w/Secrets', 'C:\\Users\\x\\.SSH\\keys', '/'];

test("the policy's quick filters and remembered folder forms never change a decision (any path, any case, any folder)", () => {
  const policy = new Policy(USER_RULES);
  const rules: SourcedRule[] = [
    ...BUILT_IN_RULES,
    ...USER_RULES.map((rule): SourcedRule => ({ rule, source: 'user' })),
  ];
  // Segments built from the rules' own texts, in any case, so paths land on and around every rule.
  const segment = fc.oneof(
    fc.constantFrom(
      '.git',
      'config',
      '.ssh',
      '.SSH',
      '.aws',
      '.gnupg',
      '.docker',
      'config.json',
      '.kube',
      'secrets',
      'Secrets',
      'src',
      'docs',
      'a',
      'x.key.txt',
      'X.KEY.txt',
      'private-1.md',
      '.env',
      '.ENV',
      '.env.example',
      'id_rsa',
      'ID_RSA',
      'node_modules',
      'deep',
      '.vscode',
      '.github',
      'workflows',
      'User',
      'settings.json',
      'package.json',
      '.husky',
      '.claude',
      'hooks',
      'public',
      'Public',
      'server.PEM',
      // Around the name prefilter's prefixes, suffixes and inner texts, and case folds beyond ASCII.
      'a.TFSTATE.bak',
      'x.tfstate',
      'service-Account-1.JSON',
      'secrets.YAML',
      'Secrets.yml',
      'dev.Env',
      '.Env.local',
      'id_ed25519.pub',
      '\u0130d_rsa',
      '\u212a.key',
      'x.\u212aey',
      '\u017fecrets.json',
      'tf.tfvarsx',
      'Makefile',
      'Dockerfile',
    ),
    fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.includes('/')),
  );
  fc.assert(
    fc.property(
      fc.array(segment, { minLength: 0, maxLength: 6 }),
      fc.constantFrom<Risk>('read', 'write'),
      fc.constantFrom(...FOLDERS),
      (segments, risk, folder) => {
        const path = segments.join('/');
        const expected = reference(rules, path, risk, folder);
        assert.equal(policy.decide(path, risk, folder).action, expected, `${folder ?? '(no folder)'} ${path}`);
        // Asked again (the folder's rule form now remembered): the same decision.
        assert.equal(policy.decide(path, risk, folder).action, expected, `again: ${folder ?? '(no folder)'} ${path}`);
      },
    ),
    { numRuns: 4000 },
  );
});

test('ten thousand distinct names, then the first again and two keys: the decisions do not drift', () => {
  const policy = new Policy([]);
  for (let i = 0; i < 10_000; i++) assert.equal(policy.decide(`src/file${i}.ts`, 'read').action, 'default');
  assert.equal(policy.decide('src/file0.ts', 'read').action, 'default');
  assert.equal(policy.decide('src/Server.PEM', 'read').action, 'ask');
  assert.equal(policy.decide('src/file1.pem', 'read').action, 'ask');
});

test('a path rule whose glob makes no literal claim still applies to every path', () => {
  const policy = new Policy([
    { glob: '{a,b}/**', read: 'deny' },
    { glob: '[xy]/z', read: 'ask' },
  ]);
  assert.equal(policy.decide('a/file', 'read').action, 'deny');
  assert.equal(policy.decide('b', 'read').action, 'deny');
  assert.equal(policy.decide('y/z', 'read').action, 'ask');
  assert.equal(policy.decide('c/file', 'read').action, 'default');
});

test('the name prefilter says "might match" for every name a name glob matches, in any case', () => {
  const globChar = fc.constantFrom('a', 'B', 'e', 'n', 'v', '.', '_', '-', '*', '?', '~', ' ');
  const nameChar = fc.constantFrom(
    'a',
    'A',
    'b',
    'B',
    'e',
    'E',
    'n',
    'N',
    'v',
    'V',
    '.',
    '_',
    '-',
    '~',
    ' ',
    '\u0130',
    '\u212a',
    '\u017f',
    '\u00e9',
    'x',
  );
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: globChar, minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
      fc.string({ unit: nameChar, minLength: 1, maxLength: 10 }),
      (globs, name) => {
        const prefilter = namePrefilter(globs.map((glob) => ({ glob, regex: ruleRegex(glob, true) })));
        for (const glob of globs) {
          if (!picomatch.isMatch(name, glob, { dot: true, nocase: true })) continue;
          assert.ok(prefilter(name), `${JSON.stringify(glob)} matches ${JSON.stringify(name)}`);
          // As rule lists ask it: the name at the end of a path.
          assert.ok(
            prefilter(`d\u0130r/${name}`),
            `${JSON.stringify(glob)} matches ${JSON.stringify(name)} in a folder`,
          );
          // As a search's quick test asks it of every folder in a path: a segment in place.
          assert.ok(
            prefilter(`d/${name}/x.txt`, 2, 2 + name.length),
            `${JSON.stringify(glob)} matches ${JSON.stringify(name)} as a folder of a path`,
          );
        }
      },
    ),
    { numRuns: 3000 },
  );
  const any = namePrefilter([{ glob: '*.pem', regex: ruleRegex('*.pem', true) }]);
  assert.deepEqual(
    [any(''), any('a/'), any('.pem'), any('x/.PEM'), any('x/.pe')],
    [false, false, true, true, false],
    'empty names, and a name shorter than the literal',
  );
  const stars = namePrefilter([{ glob: '***~.', regex: ruleRegex('***~.', true) }]);
  assert.equal(
    stars('~a'),
    picomatch.isMatch('~a', '***~.', { dot: true }),
    'after three stars picomatch leaves a "." unescaped, and the prefilter follows it',
  );
});

test('clearOfRules says a path is clear only when no rule applies to it nor to any folder above it (any path, any case, any folder)', () => {
  // Name rules only (with the built-in "**/.ssh/**" kind): the quick tests decide for these, where a
  // person's path rule (an anchored one, or one RE2 runs) always sends the search to decide.
  const user: Rule[] = [
    { glob: '*.secret', read: 'deny' },
    { glob: 'private', read: 'ask', write: 'deny' },
    { glob: 'Notes.md', read: 'allow' },
    { glob: 'out', write: 'deny' },
  ];
  const policy = new Policy(user);
  const rules: SourcedRule[] = [...BUILT_IN_RULES, ...user.map((rule): SourcedRule => ({ rule, source: 'user' }))];
  const segment = fc.oneof(
    fc.constantFrom(
      'src',
      'a',
      'deep',
      'x.ts',
      'README.md',
      'notes.md',
      'Notes.md',
      'private',
      'PRIVATE',
      'k.secret',
      'K.SECRET',
      'out',
      '.ssh',
      '.SSH',
      '.git',
      'config',
      '.env',
      '.Env.local',
      'id_rsa',
      'ID_RSA.pub',
      'server.PEM',
      'a.tfstate.bak',
      'x.TFSTATE',
      'secrets.yml',
      'service-account-1.json',
      '\u212a.key',
      '\u017fecrets.json',
      '\u00e9t\u00e9',
    ),
    fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.includes('/')),
  );
  let clear = 0;
  fc.assert(
    fc.property(
      fc.array(segment, { minLength: 1, maxLength: 6 }),
      fc.constantFrom<Risk>('read', 'write'),
      fc.constantFrom(...FOLDERS),
      (segments, risk, folder) => {
        const path = segments.join('/');
        if (!policy.clearOfRules(path, risk, folder)) return;
        clear++;
        for (let i = 1; i <= segments.length; i++) {
          const above = segments.slice(0, i).join('/');
          assert.equal(
            reference(rules, above, risk, folder),
            'default',
            `${folder ?? '(no folder)'} ${path}: ${above}`,
          );
        }
      },
    ),
    { numRuns: 4000 },
  );
  assert.ok(clear > 200, `the quick tests cleared ${clear} paths: most plain paths must be clear`);
  const home = '/home/u/proj';
  assert.equal(policy.clearOfRules('src/deep/x.ts', 'read', home), true);
  for (const path of [
    'src/.ssh/x',
    'src/Private/x.ts',
    'a/b.PEM',
    'a/id_rsa/x',
    'a/x.secret',
    'docs/Notes.md',
    '\u00e9t\u00e9/x.ts',
    '',
  ]) {
    assert.equal(policy.clearOfRules(path, 'read', home), false, path);
  }
  assert.equal(policy.clearOfRules('src/x.ts', 'read', '/home/u/.aws/proj'), false, 'a folder inside a protected one');
  assert.equal(
    new Policy([{ glob: 'src/**', read: 'deny' }]).clearOfRules('lib/x.ts', 'read', home),
    false,
    'an anchored path rule: ask decide',
  );
  assert.equal(
    new Policy([{ glob: '**/private/**', read: 'deny' }]).clearOfRules('lib/x.ts', 'read', home),
    false,
    "a person's path rule run on RE2: ask decide",
  );
  assert.equal(
    new Policy([], { folders: ['/w', '/w/inner'] }).clearOfRules('x.ts', 'read', '/w/inner'),
    false,
    'a folder inside another workspace folder',
  );
});
