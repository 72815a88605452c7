import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import fc from 'fast-check';
import { TOOLS } from '../../src/core/tools/index.ts';
import { TOOL_NAMES, type ToolName } from '../../src/core/contract/names.ts';
import { SandboxError, BugError } from '../../src/core/errors.ts';
import { session, runTool } from './harness.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import { locateRipgrep } from '../../src/core/ripgrep/binary.ts';
import { FOLDED_SPELLINGS, INVISIBLE_CHARACTERS, WINDOWS_SPELLINGS } from '../shared/spellings.ts';
import type { GateCall } from '../../src/core/gate.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';
import diagnostics from 'node:diagnostics_channel';
import type { Worker } from 'node:worker_threads';
import { sniffImage } from '../../src/core/images/sniff.ts';
import { IMAGE_MAX_BYTES, IMAGE_SHOWN_MAX_SIDE } from '../../src/core/images/bounds.ts';
import { anmf, gif, jpeg, png, simpleWebp, vp8, vp8l, webp, type FrameSpec } from './image-files.ts';

/** `npm run fuzz` sets WT_FUZZ_RUNS for the full count; `npm test` runs a smaller one. */
const RUNS = Number(process.env['WT_FUZZ_RUNS'] ?? 2000);
/** The whole run's budget grows with the count (a few ms a call, with a wide margin for a loaded machine). */
const BUDGET_MS = Math.max(500_000, RUNS * 20);
/** One call that has not settled after this long is a hang, reported with its input. */
const HANG_MS = 30_000;

/** Settles as `promise` does, or rejects naming the call once it has hung for HANG_MS. */
async function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle in ${HANG_MS} ms`)), HANG_MS);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Secrets of the fixture, in the case they have on disk: every call that reaches one must have been asked as a secret. */
const SECRETS = ['.env', '.ENV', 'Id_Rsa', 'certs/SERVER.PEM', 'id_r\u017Fa', '.\u212Aube/config'];

/** Other spellings of names (issue 26, item 3): Windows streams and short names, invisible characters, case-folded letters. */
const spelling = fc.oneof(
  fc.constantFrom(
    ...WINDOWS_SPELLINGS,
    ...FOLDED_SPELLINGS.map(([path]) => path),
    'ID_R\u017FA',
    '.\u212Aube/config',
    '.\u212AUBE/CONFIG',
  ),
  fc
    .tuple(fc.constantFrom(...INVISIBLE_CHARACTERS), fc.constantFrom('.env', 'a.txt', 'src/index.ts'), fc.nat())
    .map(([c, path, at]) => `${path.slice(0, at % (path.length + 1))}${c}${path.slice(at % (path.length + 1))}`),
);

/**
 * Item 7: links with secret, protected and denied names, whose targets are secret, protected and
 * denied in turn; paths through the links and to their targets.
 */
const LINKED = {
  /** Secret through `.env.local -> notes/env.txt` and `.ssh -> keys`: asked as secrets, never searched or found. */
  secrets: ['notes/env.txt', 'keys/id_work'],
  /** Protected through `.vscode -> config`: every write asked. */
  protectedFolder: 'config/',
  /** Denied through `.git -> gitdir` and `gitdir/hooks/pre-push -> ../../scripts/hook.sh`: never written. */
  denied: ['gitdir/hooks/pre-commit', 'scripts/hook.sh'],
} as const;

function linkFixture(root: string): void {
  for (const dir of ['notes', 'keys', 'config', 'gitdir/hooks', 'scripts'])
    mkdirSync(nodePath.join(root, dir), { recursive: true });
  for (const secret of LINKED.secrets) writeFileSync(nodePath.join(root, secret), 'KEY=fuzz-linked\n');
  writeFileSync(nodePath.join(root, 'config', 'settings.json'), '{}\n');
  for (const hook of LINKED.denied) writeFileSync(nodePath.join(root, hook), '#!/bin/sh\n');
  symlinkSync('notes/env.txt', nodePath.join(root, '.env.local'));
  symlinkSync('keys', nodePath.join(root, '.ssh'));
  symlinkSync('config', nodePath.join(root, '.vscode'));
  symlinkSync('gitdir', nodePath.join(root, '.git'));
  symlinkSync('../../scripts/hook.sh', nodePath.join(root, 'gitdir', 'hooks', 'pre-push'));
}

function linkPaths(): fc.Arbitrary<string> {
  const through = fc.tuple(
    fc.constantFrom(
      '.env.local',
      '.ssh',
      '.vscode',
      '.git',
      'gitdir',
      'gitdir/hooks',
      'notes',
      'keys',
      'config',
      'scripts',
      '.SSH',
      '.VSCode',
    ),
    fc.constantFrom(
      '',
      '/id_work',
      '/settings.json',
      '/hooks',
      '/hooks/pre-commit',
      '/hooks/pre-push',
      '/env.txt',
      '/hook.sh',
      '/new.txt',
      '/x/y',
    ),
  );
  return fc.oneof(
    fc.constantFrom(...LINKED.secrets, ...LINKED.denied, 'config/settings.json', 'config/tasks.json'),
    through.map(([a, b]) => a + b),
  );
}

/**
 * A successful call's gate questions and outcome, checked against the linked fixture: a target
 * secret (or, for a save, protected) through a link was asked about as a secret, at the first
 * question or once the links were walked.
 */
function checkLinked(name: string, calls: readonly GateCall[], text: string): void {
  const askedAbout = (display: string): boolean =>
    calls.some((c) => c.secret && c.targets.some((t) => t.display === display));
  for (const target of calls.flatMap((c) => c.targets)) {
    const secret = (LINKED.secrets as readonly string[]).includes(target.display);
    assert.ok(
      !secret || askedAbout(target.display),
      `${name} reached "${target.display}", secret through a link, without the modal ask`,
    );
    const guarded =
      (name === 'save_media' || name === 'undo_save') && target.display.startsWith(LINKED.protectedFolder);
    assert.ok(
      !guarded || askedAbout(target.display),
      `${name} wrote "${target.display}", protected through .vscode, without the modal ask`,
    );
  }
  if (name === 'find_files')
    for (const secret of LINKED.secrets) assert.ok(!text.split('\n').includes(secret), `find_files listed ${secret}`);
}

const pathLike = fc.oneof(
  fc.constantFrom(
    'a.txt',
    'src',
    'src/index.ts',
    'data.json',
    'doc.md',
    'deep.json',
    'hashes.md',
    '.',
    '',
    '../x',
    '/etc/passwd',
    'src/../..',
    'nope/nothing',
    '~',
    'C:\\x',
    '%2e%2e',
    'a\u0000b',
    '\uFF0E\uFF0E/x',
  ),
  fc.constantFrom(...SECRETS, 'certs', '.Env', 'ID_RSA'),
  spelling,
  fc.string({ maxLength: 40 }),
  fc
    .array(fc.constantFrom('src', '..', '.', 'a.txt', '', '\u2024', ' ', 'CON'), { maxLength: 6 })
    .map((parts) => parts.join('/')),
  linkPaths(),
);

const anyJson = fc.jsonValue({ maxDepth: 3 });
const number = fc.oneof(
  fc.integer({ min: -5, max: 3000 }),
  fc.double(),
  fc.constantFrom(0, -1, 1.5, Infinity, NaN, 2 ** 60),
);

/** Inputs shaped like each tool's schema (often valid), plus wrong types and extra keys. */
function inputFor(name: ToolName): fc.Arbitrary<unknown> {
  const shaped = fc.record(
    {
      path: pathLike,
      callId: fc.oneof(fc.string(), fc.constant('a1')),
      media_id: fc.oneof(fc.string(), fc.constant('m1')),
      pattern: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom('(', '[a-', 'foo', '\\', '.*', 'a\u0000b', '\u0000', 'KEY', 'x'.repeat(70_000)),
      ),
      glob: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom(
          '**/*.ts',
          '*',
          '{a,b}',
          '[',
          '*.\u0000',
          `${'{*a,*a}'.repeat(9)}b`,
          `${'*a'.repeat(12)}b`,
          '{.ENV,id_RSA,*.Pem}',
          '**/SERVER.*',
        ),
      ),
      iglob: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(`${'{*a,*b}'.repeat(12)}c`, '*.PEM', '\u0000')),
      offset: number,
      limit: number,
      max_depth: number,
      maxResults: fc.oneof(number, fc.constantFrom(1e12, Number.MAX_SAFE_INTEGER, 10_001)),
      context: number,
      literal: fc.boolean(),
      ignore_case: fc.boolean(),
      hidden: fc.boolean(),
      no_ignore: fc.boolean(),
      follow: fc.boolean(),
      select: fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.constantFrom('', '/a', '/a/0', 'Intro', 'Intro/Install', '/a/0'.repeat(3000), '#/#'),
      ),
      content: fc.string({ maxLength: 50 }),
      patch: fc.oneof(
        anyJson,
        fc.record({ find: fc.string({ maxLength: 8 }), replace: fc.string({ maxLength: 8 }) }),
        fc.record({ unified: fc.string({ maxLength: 40 }) }),
      ),
      extra: anyJson,
    },
    { requiredKeys: [] },
  );
  const schemaKeys = Object.keys(
    (TOOLS[name].inputSchema({ supportsFollow: false }) as unknown as { shape: Record<string, unknown> }).shape,
  );
  const valid = shaped.map((input) =>
    Object.fromEntries(Object.entries(input).filter(([k]) => schemaKeys.includes(k))),
  );
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: shaped }, { weight: 1, arbitrary: anyJson });
}

test(
  `fuzz: every tool either succeeds or fails with a SandboxError (${RUNS} runs)`,
  { timeout: BUDGET_MS + 100_000 },
  async (tc) => {
    const rg = locateRipgrep();
    assert.ok(rg, 'ripgrep must be available for the fuzz suite');
    const t = session(tc, { overrides: { search: createRipgrepSearch(createRipgrep(rg.path)) } });
    mkdirSync(nodePath.join(t.root, 'src'));
    writeFileSync(nodePath.join(t.root, 'a.txt'), 'alpha\nbeta\n');
    writeFileSync(nodePath.join(t.root, 'src', 'index.ts'), 'export const x = 1;\n');
    writeFileSync(nodePath.join(t.root, 'data.json'), '{"a": [1, 2, {"b": null}]}');
    writeFileSync(nodePath.join(t.root, 'doc.md'), '# Intro\n\n## Install\n\ntext\n');
    writeFileSync(nodePath.join(t.root, '.env'), 'TOKEN=fuzz\n');
    // The new shapes: case variants of secrets, JSON nested 5,000 deep, 2 MiB of "#" lines.
    mkdirSync(nodePath.join(t.root, 'certs'));
    mkdirSync(nodePath.join(t.root, '.\u212Aube'));
    for (const secret of SECRETS.slice(1)) writeFileSync(nodePath.join(t.root, secret), 'KEY=fuzz-secret\n');
    writeFileSync(nodePath.join(t.root, 'deep.json'), `${'{"a":['.repeat(5000)}1${']}'.repeat(5000)}`);
    writeFileSync(nodePath.join(t.root, 'hashes.md'), '#\n'.repeat(1024 * 1024));
    linkFixture(t.root);
    const call = fc
      .tuple(fc.constantFrom(...TOOL_NAMES), fc.nat())
      .chain(([name]) => inputFor(name).map((input) => ({ name, input })));
    let outcomes = { ok: 0, sandbox: 0 };
    await fc.assert(
      fc.asyncProperty(call, async ({ name, input }) => {
        t.gate.calls.length = 0;
        try {
          const outcome = await settles(t.invoke(name, input), `${name} ${JSON.stringify(input)}`);
          outcomes = { ...outcomes, ok: outcomes.ok + 1 };
          for (const call of t.gate.calls) {
            const secret = call.targets.find((target) => SECRETS.includes(target.display));
            assert.ok(!secret || call.secret, `${name} reached the secret "${secret?.display}" without the modal ask`);
          }
          // Search and find never read or list a secret, whatever its case.
          if (name === 'search_files')
            assert.doesNotMatch(outcome.text, /fuzz/, `search_files ${JSON.stringify(input)} returned a secret's line`);
          if (name === 'find_files')
            for (const secret of SECRETS)
              assert.ok(
                !outcome.text.split('\n').includes(secret),
                `find_files ${JSON.stringify(input)} listed ${secret}`,
              );
          checkLinked(name, t.gate.calls, outcome.text);
        } catch (e) {
          if (e instanceof BugError || !(e instanceof SandboxError)) throw e;
          assert.match(e.code, /^E_(SANDBOX|READER)_/);
          assert.ok(e.message.length > 20, `unnarrated: ${e.message}`);
          outcomes = { ...outcomes, sandbox: outcomes.sandbox + 1 };
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: true },
    );
    const calls = outcomes.ok + outcomes.sandbox;
    for (const hook of LINKED.denied)
      assert.equal(
        readFileSync(nodePath.join(t.root, hook), 'utf8'),
        '#!/bin/sh\n',
        `${hook}, denied through .git, was written`,
      );
    console.log(`fuzz: ${calls} calls, ${outcomes.ok} succeeded, ${outcomes.sandbox} narrated SandboxErrors`);
    assert.equal(calls, RUNS);
    assert.ok(outcomes.ok > 0);
  },
);

test('attack: a NUL, or more than ripgrep can take, in a search_files, find_files or artifact_grep pattern or glob', async (tc) => {
  const t = session(tc, { overrides: { search: createRipgrepSearch(createRipgrep(locateRipgrep()!.path)) } });
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'alpha\n');
  const callId = oneFile((await runTool(t.session, TOOLS.open_file, { path: 'a.txt' })).result).callId;
  const cases: [ToolName, object][] = [];
  for (const bad of ['a\u0000b', '\u0000', 'x'.repeat(200_000)]) {
    cases.push(
      ['search_files', { pattern: bad }],
      ['search_files', { pattern: 'a', glob: bad }],
      ['search_files', { pattern: 'a', iglob: bad }],
      ['find_files', { glob: bad }],
      ['find_files', { glob: '*', iglob: bad }],
      ['artifact_grep', { callId, pattern: bad }],
      ['artifact_grep', { callId, pattern: bad, literal: true }],
    );
  }
  for (const [tool, input] of cases) {
    await assert.rejects(
      t.invoke(tool, input),
      (e: unknown) =>
        e instanceof SandboxError &&
        e.code === 'E_SANDBOX_INVALID_INPUT' &&
        /NUL character|longer than 65536 bytes/.test(e.message),
      `${tool} ${JSON.stringify(input).slice(0, 80)}`,
    );
  }
});

/** Images drawn per run of the path fuzz: each starts a decoding worker, so fewer. */
const IMAGE_RUNS = Math.max(20, Math.round(RUNS / 50));

/** A side in pixels: ordinary ones, ones just past the bounds, and the largest each format can say. */
const side = fc.oneof(fc.integer({ min: 1, max: 1800 }), fc.constantFrom(1568, 1569, 5000, 8001, 16383, 65535));
const drawnFrame: fc.Arbitrary<FrameSpec> = fc.record({
  x: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 70_000 })),
  y: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 70_000 })),
  width: side,
  height: side,
});

/** Headers that may lie: a declared size, and frames of their own sizes and places. */
const lyingImage = fc
  .tuple(
    fc.constantFrom('gif', 'png', 'jpeg', 'webp', 'vp8', 'vp8l'),
    side,
    side,
    fc.array(drawnFrame, { maxLength: 3 }),
  )
  .map(([format, width, height, frames]) => {
    switch (format) {
      case 'gif':
        return gif(Math.min(width, 65535), Math.min(height, 65535), frames);
      // Pixels only where they are few: the data of a size never made is empty.
      case 'png':
        return png(width, height, frames, width * height <= 4_000_000);
      case 'jpeg':
        return jpeg([{ width, height }, ...frames]);
      case 'webp':
        return webp(
          width,
          height,
          frames.map((f) => anmf(f, vp8(Math.min(f.width, 16383), Math.min(f.height, 16383)))),
        );
      case 'vp8':
        return simpleWebp(vp8(Math.min(width, 16383), Math.min(height, 16383)));
      default:
        return simpleWebp(vp8l(Math.min(width, 16384), Math.min(height, 16384)));
    }
  });

test(
  `fuzz: open_file of drawn images (valid, truncated, lying headers) answers, shows at most ${IMAGE_SHOWN_MAX_SIDE} px a side, and ends every worker it starts (${IMAGE_RUNS} runs)`,
  { timeout: BUDGET_MS + 100_000 },
  async (tc) => {
    const t = session(tc);
    const { Jimp } = await import('../../src/core/images/codecs.ts');
    const valid = [
      png(1700, 30),
      png(40, 30),
      await new Jimp({ width: 1700, height: 30, color: 0x336699ff }).getBuffer('image/jpeg'),
      await new Jimp({ width: 30, height: 1700, color: 0x000000ff }).getBuffer('image/gif'),
    ];
    const drawn = fc
      .oneof(fc.constantFrom(...valid), lyingImage)
      .chain((bytes) =>
        fc
          .option(fc.nat({ max: bytes.length }), { freq: 3 })
          .map((cut) => (cut === null ? bytes : bytes.subarray(0, cut))),
      );
    const workers: Worker[] = [];
    const seen = (message: unknown): void => {
      workers.push((message as { worker: Worker }).worker);
    };
    diagnostics.subscribe('worker_threads', seen);
    tc.after(() => diagnostics.unsubscribe('worker_threads', seen));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(drawn, async (bytes) => {
        const name = `drawn-${n++}.img`;
        writeFileSync(nodePath.join(t.root, name), bytes);
        const what = `open_file of ${bytes.length} bytes: ${bytes.subarray(0, 64).toString('hex')}…`;
        try {
          const outcome = await settles(t.invoke('open_file', { path: name }), what);
          for (const image of outcome.images ?? []) {
            const shown = sniffImage(image.data, image.data.byteLength);
            assert.ok(
              image.data.byteLength <= IMAGE_MAX_BYTES,
              `${what}: an image part of ${image.data.byteLength} bytes`,
            );
            if (shown !== undefined && Buffer.compare(Buffer.from(image.data), bytes) !== 0)
              assert.ok(
                Math.max(shown.width, shown.height) <= IMAGE_SHOWN_MAX_SIDE,
                `${what}: shown at ${shown.width}×${shown.height}`,
              );
          }
        } catch (e) {
          if (e instanceof BugError || !(e instanceof SandboxError)) throw e;
          assert.ok(e.message.length > 20, `unnarrated: ${e.message}`);
        }
        // Every decoding worker has ended once its call answered.
        await settles(
          Promise.all(
            workers.map((w) => (w.threadId === -1 ? undefined : new Promise((resolve) => w.once('exit', resolve)))),
          ),
          `${what}: its worker to end`,
        );
        workers.length = 0;
      }),
      { numRuns: IMAGE_RUNS, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: true },
    );
  },
);
