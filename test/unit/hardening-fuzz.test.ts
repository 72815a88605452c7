import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import fc from 'fast-check';
import { TOOLS } from '../../src/core/tools/index.ts';
import { TOOL_NAMES, type ToolName } from '../../src/core/tools/names.ts';
import { SandboxError, BugError } from '../../src/core/errors.ts';
import { testSession } from './harness.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { locateRipgrep } from '../../src/core/search/ripgrep-binary.ts';

/** `npm run fuzz` sets WT_FUZZ_RUNS for the full count; `npm test` runs a smaller one. */
const RUNS = Number(process.env['WT_FUZZ_RUNS'] ?? 2000);
/** The whole run's budget grows with the count (a few ms a call, with a wide margin for a loaded machine). */
const BUDGET_MS = Math.max(500_000, RUNS * 20);
/** One call that has not settled after this long is a hang, reported with its input. */
const HANG_MS = 30_000;

/** Settles as `promise` does, or rejects naming the call once it has hung for HANG_MS. */
async function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle in ${HANG_MS} ms`)), HANG_MS); });
  try { return await Promise.race([promise, hang]); } finally { clearTimeout(timer); }
}

const pathLike = fc.oneof(
  fc.constantFrom('a.txt', 'src', 'src/index.ts', 'data.json', 'doc.md', '.env', '.', '', '../x', '/etc/passwd', 'src/../..', 'nope/nothing', '~', 'C:\\x', '%2e%2e', 'a\u0000b', '\uFF0E\uFF0E/x'),
  fc.string({ maxLength: 40 }),
  fc.array(fc.constantFrom('src', '..', '.', 'a.txt', '', '\u2024', ' ', 'CON'), { maxLength: 6 }).map((parts) => parts.join('/')),
);

const anyJson = fc.jsonValue({ maxDepth: 3 });
const number = fc.oneof(fc.integer({ min: -5, max: 3000 }), fc.double(), fc.constantFrom(0, -1, 1.5, Infinity, NaN, 2 ** 60));

/** Inputs shaped like each tool's schema (often valid), plus wrong types and extra keys. */
function inputFor(name: ToolName): fc.Arbitrary<unknown> {
  const shaped = fc.record({
    path: pathLike, callId: fc.oneof(fc.string(), fc.constant('a1')), media_id: fc.oneof(fc.string(), fc.constant('m1')),
    pattern: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('(', '[a-', 'foo', '\\', '.*')), glob: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('**/*.ts', '*', '{a,b}', '[')),
    offset: number, limit: number, max_depth: number, maxResults: number, context: number,
    literal: fc.boolean(), ignore_case: fc.boolean(), hidden: fc.boolean(), no_ignore: fc.boolean(), follow: fc.boolean(),
    select: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', '/a', '/a/0', 'Intro', 'Intro/Install')),
    content: fc.string({ maxLength: 50 }),
    patch: fc.oneof(anyJson, fc.record({ find: fc.string({ maxLength: 8 }), replace: fc.string({ maxLength: 8 }) }), fc.record({ unified: fc.string({ maxLength: 40 }) })),
    extra: anyJson,
  }, { requiredKeys: [] });
  const schemaKeys = Object.keys((TOOLS[name].inputSchema({ supportsFollow: false }) as unknown as { shape: Record<string, unknown> }).shape);
  const valid = shaped.map((input) => Object.fromEntries(Object.entries(input).filter(([k]) => schemaKeys.includes(k))));
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: shaped }, { weight: 1, arbitrary: anyJson });
}

test(`fuzz: every tool either succeeds or fails with a SandboxError (${RUNS} runs)`, { timeout: BUDGET_MS + 100_000 }, async () => {
  const rg = locateRipgrep();
  assert.ok(rg, 'ripgrep must be available for the fuzz suite');
  const t = testSession({ overrides: { search: createRipgrepSearch({ rgPath: rg.path }) } });
  try {
    mkdirSync(nodePath.join(t.root, 'src'));
    writeFileSync(nodePath.join(t.root, 'a.txt'), 'alpha\nbeta\n');
    writeFileSync(nodePath.join(t.root, 'src', 'index.ts'), 'export const x = 1;\n');
    writeFileSync(nodePath.join(t.root, 'data.json'), '{"a": [1, 2, {"b": null}]}');
    writeFileSync(nodePath.join(t.root, 'doc.md'), '# Intro\n\n## Install\n\ntext\n');
    writeFileSync(nodePath.join(t.root, '.env'), 'TOKEN=fuzz\n');
    const call = fc.tuple(fc.constantFrom(...TOOL_NAMES), fc.nat()).chain(([name]) => inputFor(name).map((input) => ({ name, input })));
    let outcomes = { ok: 0, sandbox: 0 };
    await fc.assert(fc.asyncProperty(call, async ({ name, input }) => {
      try {
        await settles(t.session.invoke(TOOLS[name], input), `${name} ${JSON.stringify(input)}`);
        outcomes = { ...outcomes, ok: outcomes.ok + 1 };
      } catch (e) {
        if (e instanceof BugError || !(e instanceof SandboxError)) throw e;
        assert.match(e.code, /^E_(SANDBOX|READER)_/);
        assert.ok(e.message.length > 20, `unnarrated: ${e.message}`);
        outcomes = { ...outcomes, sandbox: outcomes.sandbox + 1 };
      }
    }), { numRuns: RUNS, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: true });
    const calls = outcomes.ok + outcomes.sandbox;
    console.log(`fuzz: ${calls} calls, ${outcomes.ok} succeeded, ${outcomes.sandbox} narrated SandboxErrors`);
    assert.equal(calls, RUNS);
    assert.ok(outcomes.ok > 0);
  } finally { await t.dispose(); }
});
