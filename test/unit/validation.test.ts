import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOLS } from '../../src/core/tools/index.ts';
import { TOOL_NAMES } from '../../src/core/contract/names.ts';
import { SandboxError } from '../../src/core/errors.ts';
import { validateInput } from '../../src/core/contract/schema.ts';
import { session, runTool } from './harness.ts';

function rejection(fn: () => unknown): SandboxError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SandboxError) return e;
    throw e;
  }
  assert.fail('expected a SandboxError');
}

const declaration = { supportsFollow: false };

test('an unknown argument is rejected for every tool, naming it and the accepted arguments', () => {
  for (const name of TOOL_NAMES) {
    const tool = TOOLS[name];
    const error = rejection(() => validateInput(name, tool.inputSchema(declaration), { surprise: 1 }));
    assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT', name);
    assert.match(error.message, /Unknown argument "surprise"/, name);
    assert.match(error.message, new RegExp(`${name} accepts: `), name);
  }
});

test('a missing required argument is named with the accepted type', () => {
  const error = rejection(() => validateInput('artifact_read', TOOLS.artifact_read.inputSchema(declaration), {}));
  assert.equal(
    error.message,
    'artifact_read: Missing required argument "callId": a string. Fix the arguments and call again.',
  );
});

test('open_file takes either path or files, and says so when given neither', () => {
  const error = rejection(() => validateInput('open_file', TOOLS.open_file.inputSchema(declaration), {}));
  assert.equal(
    error.message,
    'open_file: Argument "(arguments)" is invalid (got {}): give either "path" (one file) or "files" (several), not both and not neither. Fix the arguments and call again.',
  );
});

test('arguments must be a JSON object', () => {
  for (const raw of [null, 3, 'path', [1]]) {
    const error = rejection(() => validateInput('open_file', TOOLS.open_file.inputSchema(declaration), raw));
    assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT');
    assert.match(error.message, /takes a JSON object of arguments/);
  }
});

test('an explicit limit must be an integer >= 1: 0, negatives, fractions, Infinity, NaN and strings are rejected', () => {
  for (const limit of [0, -1, 1.5, Infinity, -Infinity, NaN, '3', true]) {
    for (const name of ['search_files', 'find_files'] as const) {
      const base = name === 'search_files' ? { pattern: 'x' } : { glob: '*' };
      const error = rejection(() => validateInput(name, TOOLS[name].inputSchema(declaration), { ...base, limit }));
      assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT');
      assert.match(error.message, /Argument "limit" is invalid/, `${name} ${String(limit)}`);
      assert.match(error.message, /expected an integer >= 1/, `${name} ${String(limit)}`);
    }
  }
});

test('follow: true is rejected unless the backend declares supportsFollow; false is accepted', () => {
  const error = rejection(() =>
    validateInput('find_files', TOOLS.find_files.inputSchema(declaration), { glob: '*', follow: true }),
  );
  assert.match(error.message, /Argument "follow" is invalid \(got true\).*expected only false/);
  assert.deepEqual(
    validateInput('find_files', TOOLS.find_files.inputSchema(declaration), { glob: '*', follow: false }),
    { glob: '*', follow: false },
  );
  assert.deepEqual(
    validateInput('find_files', TOOLS.find_files.inputSchema({ supportsFollow: true }), { glob: '*', follow: true }),
    { glob: '*', follow: true },
  );
});

test('find_files rejects ignore_case and literal as unknown arguments', () => {
  for (const flag of ['ignore_case', 'literal']) {
    const error = rejection(() =>
      validateInput('find_files', TOOLS.find_files.inputSchema(declaration), { glob: '*', [flag]: true }),
    );
    assert.match(error.message, new RegExp(`Unknown argument "${flag}"`));
  }
});

test('invalid input is refused before the gate is asked', async (tc) => {
  const t = session(tc);
  await assert.rejects(
    runTool(t.session, TOOLS.list_directory, { max_depth: 0 }),
    (e: unknown) => e instanceof SandboxError && e.code === 'E_SANDBOX_INVALID_INPUT',
  );
  assert.equal(t.gate.calls.length, 0);
  assert.equal(t.log.entries[0]?.verdict, 'invalid');
});
