import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { TOOLS } from '../../src/core/tools/index.ts';
import { SandboxError } from '../../src/core/errors.ts';
import { session, runTool } from './harness.ts';

/** A real node fs backend that counts every call made through the port. */
class CountingFs extends NodeFs {
  calls = 0;
  constructor() {
    super();
    const proto = NodeFs.prototype as unknown as Record<string, unknown>;
    for (const method of [
      'stat',
      'lstat',
      'realpath',
      'readDirectory',
      'readFile',
      'readStream',
      'writeFile',
      'rename',
      'mkdir',
      'delete',
    ] as const) {
      const original = proto[method] as (...args: unknown[]) => unknown;
      (this as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        this.calls++;
        return original.apply(this, args);
      };
    }
  }
}

const isRefused = (e: unknown) => e instanceof SandboxError && e.code === 'E_SANDBOX_REFUSED';

test('a call the gate denies never reaches the filesystem port', async (tc) => {
  const fs = new CountingFs();
  const t = session(tc, { allow: false, fs });
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'hello');
  await assert.rejects(runTool(t.session, TOOLS.list_directory, {}), isRefused);
  await assert.rejects(runTool(t.session, TOOLS.list_directory, { path: 'a.txt' }), isRefused);
  assert.equal(t.gate.calls.length, 2);
  assert.equal(fs.calls, 0);
});

test('a deny rule refuses without asking the gate and without touching the filesystem', async (tc) => {
  const fs = new CountingFs();
  const t = session(tc, { rules: [{ glob: 'private/**', read: 'deny' }], fs });
  await assert.rejects(
    runTool(t.session, TOOLS.list_directory, { path: 'private/x' }),
    (e: unknown) => isRefused(e) && /refused by the rule "private\/\*\*"/.test((e as Error).message),
  );
  assert.equal(t.gate.calls.length, 0);
  assert.equal(fs.calls, 0);
  assert.equal(t.log.entries[0]?.decidedBy, 'rule');
});

test('the gate sees the tool, the risk, the summary and each target with its rule', async (tc) => {
  const t = session(tc);
  mkdirSync(nodePath.join(t.root, '.ssh'));
  await runTool(t.session, TOOLS.list_directory, { path: '.ssh', max_depth: 1 });
  assert.deepEqual(t.gate.calls[0], {
    tool: 'list_directory',
    origin: 'headless',
    risk: 'read',
    summary: 'list .ssh (depth 1)',
    secret: true,
    targets: [
      {
        display: '.ssh',
        action: 'ask',
        rule: '**/.ssh/**',
        source: 'secret',
        reason:
          "it holds credentials: what is read goes to the language model and its provider's logs, and cannot be taken back",
      },
    ],
  });
});

test('an approved call runs and is audited with its verdict and decider, without contents', async (tc) => {
  const t = session(tc);
  writeFileSync(nodePath.join(t.root, 'notes.txt'), 'SECRET-CONTENT');
  const outcome = await runTool(t.session, TOOLS.list_directory, {});
  assert.equal(outcome.text, '.: 1 entries\nnotes.txt  14 B');
  assert.equal(t.log.entries.length, 1);
  const entry = t.log.entries[0]!;
  assert.equal(entry.tool, 'list_directory');
  assert.equal(entry.verdict, 'allowed');
  assert.equal(entry.decidedBy, 'test');
  assert.equal(entry.target, '.');
  assert.doesNotMatch(JSON.stringify(t.log.entries), /SECRET-CONTENT/);
});

test('a symlink inside the workspace cannot launder a secret past its ask rule', async (tc) => {
  const { symlinkSync } = await import('node:fs');
  const t = session(tc);
  mkdirSync(nodePath.join(t.root, '.ssh'));
  symlinkSync('.ssh', nodePath.join(t.root, 'innocent'));
  await assert.rejects(
    runTool(t.session, TOOLS.list_directory, { path: 'innocent' }),
    (e: unknown) =>
      isRefused(e) && /link to a path that the rule "\*\*\/\.ssh\/\*\*" protects/.test((e as Error).message),
  );
  assert.equal(t.gate.calls[0]?.secret, false);
});

test('write tools are refused when the host disallows writes (untrusted workspace)', async (tc) => {
  const t = session(tc, { overrides: { allowWrites: () => false } });
  await assert.rejects(
    runTool(t.session, TOOLS.stage_file, { path: 'a.txt', content: 'x' }),
    (e: unknown) => isRefused(e) && /read-only or not trusted/.test((e as Error).message),
  );
  assert.equal(t.gate.calls.length, 0);
});

test('a tool whose capability is missing is refused before the gate is asked', async (tc) => {
  const t = session(tc);
  await assert.rejects(
    runTool(t.session, TOOLS.search_files, { pattern: 'x' }),
    (e: unknown) =>
      e instanceof SandboxError &&
      e.code === 'E_SANDBOX_UNSUPPORTED' &&
      e.message ===
        'search_files is not available in this workspace (it needs search: ripgrep was not found, or the workspace is not on a local disk). Use list_directory and open_file instead.',
  );
  assert.equal(t.gate.calls.length, 0);
});
