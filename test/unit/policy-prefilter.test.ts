import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import picomatch from 'picomatch';
import { BUILT_IN_RULES, Policy, type Rule, type RuleAction } from '../../src/core/policy.ts';
import type { Risk } from '../../src/core/tool.ts';

/** The rules' meaning with no shortcut: every rule tested on every path, the last match winning. */
function reference(rules: readonly Rule[], path: string, risk: Risk): RuleAction | 'default' {
  let action: RuleAction | 'default' = 'default';
  if (path === '') return action;
  for (const rule of rules) {
    const byName = !rule.glob.includes('/');
    const subject = byName ? path.slice(path.lastIndexOf('/') + 1) : path;
    const matches = picomatch.isMatch(subject, rule.glob, { dot: true }) || (rule.glob.endsWith('/**') && picomatch.isMatch(path, rule.glob.slice(0, -3), { dot: true }));
    if (matches && rule[risk] !== undefined) action = rule[risk]!;
  }
  return action;
}

const USER_RULES: Rule[] = [
  { glob: 'secrets/**', read: 'deny', write: 'deny' },
  { glob: 'src/*.key.txt', read: 'ask' },
  { glob: 'docs/**/private-*.md', read: 'deny' },
  { glob: '.env.example', read: 'allow' },
];

test('the policy\'s cheap path-rule filter never changes a decision (any path, default and user rules)', () => {
  const policy = new Policy(USER_RULES);
  const rules = [...BUILT_IN_RULES.map((r) => r.rule), ...USER_RULES];
  // Segments built from the rules' own texts, in any case, so paths land on and around every rule.
  const segment = fc.oneof(
    fc.constantFrom('.git', 'config', '.ssh', '.SSH', '.aws', '.gnupg', '.docker', 'config.json', '.kube', 'secrets', 'Secrets', 'src', 'docs', 'a', 'x.key.txt', 'private-1.md', '.env', '.env.example', 'id_rsa', 'node_modules', 'deep', '.vscode', '.github', 'workflows', 'User', 'settings.json', 'package.json', '.husky', '.claude', 'hooks'),
    fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.includes('/')),
  );
  fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.constantFrom<Risk>('read', 'write'), (segments, risk) => {
    const path = segments.join('/');
    assert.equal(policy.decide(path, risk).action, reference(rules, path, risk), path);
  }), { numRuns: 3000 });
});

test('a path rule whose glob makes no literal claim still applies to every path', () => {
  const policy = new Policy([{ glob: '{a,b}/**', read: 'deny' }, { glob: '[xy]/z', read: 'ask' }]);
  assert.equal(policy.decide('a/file', 'read').action, 'deny');
  assert.equal(policy.decide('b', 'read').action, 'deny');
  assert.equal(policy.decide('y/z', 'read').action, 'ask');
  assert.equal(policy.decide('c/file', 'read').action, 'default');
});
