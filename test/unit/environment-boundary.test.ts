import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import { test } from 'node:test';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = nodePath.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * Env and home come through the session's context (`Session.environment`), which the hosts fill:
 * a core module that asks git about a path never reads the process's own environment or home,
 * so a test's or a host's environment is the one git's configuration is found through.
 */
test('no src/core module outside git/ and shell/ that uses git reads process.env or homedir()', () => {
  const exempt = [
    nodePath.join('src', 'core', 'git') + nodePath.sep,
    nodePath.join('src', 'core', 'shell') + nodePath.sep,
  ];
  const offenders = filesUnder(nodePath.join('src', 'core'))
    .filter((file) => file.endsWith('.ts') && !exempt.some((dir) => file.startsWith(dir)))
    .filter((file) => {
      const text = readFileSync(file, 'utf8');
      return /from '[^']*\/git\/[^']*'/.test(text) && /process\.env|homedir\(\)/.test(text);
    });
  assert.deepEqual(offenders, []);
});
