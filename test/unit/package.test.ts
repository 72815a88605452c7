import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import type { Readable } from 'node:stream';
import * as yauzl from 'yauzl';
import {
  buildPackage,
  listPackage,
  NATIVE_MODULES,
  planPackage,
  TARGETS,
  UNIVERSAL,
  vsixName,
  type Target,
} from '../../scripts/package.mjs';

const MiB = 1024 * 1024;
/**
 * The .vsix size (compressed) of a package without node_modules files: on 2026-12-03 1011 KiB from
 * `npm run package` (minified) and 1276 KiB from the development build the tests package.
 */
const BASE_BUDGET = 1.5 * MiB;
/** What each native module may add to a platform package, its production dependencies included. */
const MODULE_BUDGET: Record<string, number> = { '@anthropic-ai/sandbox-runtime': 2 * MiB };

/** Every package's files outside node_modules, as they sit in the .vsix (vsce renames README, CHANGELOG and LICENSE). */
const BASE_FILES = [
  '[Content_Types].xml',
  'extension.vsixmanifest',
  'extension/LICENSE.txt',
  'extension/agents/workspace-tools.agent.md',
  'extension/changelog.md',
  'extension/dist/cli.js',
  'extension/dist/diff.js',
  'extension/dist/extension.js',
  'extension/dist/folder-worker.js',
  'extension/dist/iconv-lite.js',
  'extension/dist/image-size.js',
  'extension/dist/image-worker.js',
  'extension/dist/jsonc-parser.js',
  'extension/dist/markdown-it.js',
  'extension/dist/package.json',
  'extension/dist/picomatch.js',
  'extension/dist/re2js.js',
  'extension/media/icon.png',
  'extension/media/screenshot-demo.png',
  'extension/media/screenshot-review.png',
  'extension/media/screenshot-sandbox.png',
  'extension/media/staged.svg',
  'extension/package.json',
  'extension/readme.md',
];

const PACKAGES = [UNIVERSAL, ...TARGETS] as const;
const installed = (name: string, root = '.'): boolean =>
  existsSync(nodePath.join(root, 'node_modules', name, 'package.json'));

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The entries of a .vsix (a zip) and its extension.vsixmanifest. */
async function openVsix(file: string): Promise<{ names: string[]; manifest: string }> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  try {
    const names: string[] = [];
    let manifest = '';
    for await (const entry of zip.eachEntry()) {
      names.push(entry.fileName);
      if (entry.fileName === 'extension.vsixmanifest') manifest = await text(await zip.openReadStreamPromise(entry));
    }
    return { names: names.sort(), manifest };
  } finally {
    zip.close();
  }
}

describe(
  'the .vsix packages: universal and one per platform',
  { skip: !existsSync('dist/extension.js') && 'build first (npm run build)' },
  () => {
    let outDir: string;
    const built = new Map<string, { vsix: string; bytes: number; names: string[]; manifest: string }>();

    before(async () => {
      outDir = mkdtempSync(nodePath.join(tmpdir(), 'wt-packages-'));
      // Packaging is a few seconds a package: every package is built, none only listed.
      for (const target of PACKAGES) {
        const { vsix, bytes } = await buildPackage(target, { outDir });
        assert.equal(nodePath.basename(vsix), vsixName(target));
        built.set(target, { vsix, bytes, ...(await openVsix(vsix)) });
      }
    });
    after(() => rmSync(outDir, { recursive: true, force: true }));

    for (const target of PACKAGES) {
      test(`${vsixName(target)}: its files outside node_modules are exactly the runtime's, README, CHANGELOG and the icon`, () => {
        const names = built.get(target)!.names;
        assert.deepEqual(
          names.filter((n) => !n.startsWith('extension/node_modules/')),
          BASE_FILES,
        );
        assert.deepEqual(
          names.filter((n) => /\.(ts|map)$/.test(n) || /^extension\/(src|test|scripts|bench)\//.test(n)),
          [],
        );
      });

      test(`${vsixName(target)}: native files of its own platform only, within its size budget`, () => {
        const { names, bytes, manifest } = built.get(target)!;
        const modules = NATIVE_MODULES.filter((m) => target !== UNIVERSAL && installed(m.name));
        if (modules.length === 0)
          assert.deepEqual(
            names.filter((n) => n.startsWith('extension/node_modules/')),
            [],
          );
        for (const m of modules) {
          const own = new Set(m.native[target as Target]);
          for (const file of own)
            assert.ok(names.includes(`extension/node_modules/${m.name}/${file}`), `${m.name}/${file} is missing`);
          const foreign = TARGETS.flatMap((t) => m.native[t]).filter((file) => !own.has(file));
          for (const file of foreign)
            assert.ok(
              !names.includes(`extension/node_modules/${m.name}/${file}`),
              `${m.name}/${file} belongs to another platform`,
            );
        }
        const budget = BASE_BUDGET + modules.reduce((sum, m) => sum + (MODULE_BUDGET[m.name] ?? 0), 0);
        assert.ok(bytes <= budget, `${vsixName(target)} is ${bytes} bytes, over its budget of ${budget}`);
        if (target === UNIVERSAL) assert.doesNotMatch(manifest, /TargetPlatform=/);
        else assert.match(manifest, new RegExp(`TargetPlatform="${target}"`));
      });
    }

    test('the dry run (--list) names the files the package holds', async () => {
      const listed = await listPackage('linux-x64');
      const renamed: Record<string, string> = {
        'README.md': 'readme.md',
        'CHANGELOG.md': 'changelog.md',
        LICENSE: 'LICENSE.txt',
      };
      const zipped = built
        .get('linux-x64')!
        .names.filter((n) => n.startsWith('extension/'))
        .map((n) => n.slice('extension/'.length));
      assert.deepEqual(listed.files.map((f) => renamed[f] ?? f).sort(), zipped.sort());
    });
  },
);

describe('a platform package with a native module installed (a stand-in @anthropic-ai/sandbox-runtime)', () => {
  const SRT = '@anthropic-ai/sandbox-runtime';
  let root: string;

  const write = (path: string, content = 'x'): void => {
    const file = nodePath.join(root, path);
    mkdirSync(nodePath.dirname(file), { recursive: true });
    writeFileSync(file, content);
  };
  const json = (path: string, value: object): void => write(path, JSON.stringify(value));

  before(() => {
    root = mkdtempSync(nodePath.join(tmpdir(), 'wt-package-root-'));
    for (const file of [
      'README.md',
      'CHANGELOG.md',
      'LICENSE',
      '.vscodeignore',
      'agents/workspace-tools.agent.md',
      'media/icon.png',
      'media/staged.svg',
    ])
      write(file, readFileSync(file, 'utf8'));
    for (const file of ['dist/extension.js', 'dist/iconv-lite.js', 'dist/package.json']) write(file, '');
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as Record<string, unknown>;
    json('package.json', { ...manifest, dependencies: { [SRT]: '1.0.0' }, devDependencies: {} });
    // The module, with every file the table names for any platform, its declarations and a
    // dependency of its own nested (zod 3 under it, zod 4 at the top for someone else).
    const srt = `node_modules/${SRT}`;
    json(`${srt}/package.json`, { name: SRT, version: '1.0.0', dependencies: { commander: '^12.0.0', zod: '^3.0.0' } });
    for (const file of [
      'LICENSE',
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.js.map',
      'vendor/seccomp/build.ts',
      'vendor/srt-win/x64/srt-win.exe',
    ])
      write(`${srt}/${file}`);
    for (const m of NATIVE_MODULES.filter((n) => n.name === SRT)) {
      for (const file of [
        ...m.files.filter((f) => !f.includes('*') && f !== 'package.json'),
        ...TARGETS.flatMap((t) => m.native[t]),
      ])
        write(`${srt}/${file}`);
    }
    json(`${srt}/node_modules/zod/package.json`, { name: 'zod', version: '3.25.0' });
    write(`${srt}/node_modules/zod/index.js`);
    write(`${srt}/node_modules/zod/index.d.ts`);
    json('node_modules/commander/package.json', { name: 'commander', version: '12.1.0' });
    write('node_modules/commander/index.js');
    write('node_modules/commander/LICENSE');
    write('node_modules/commander/Readme.md');
    json('node_modules/zod/package.json', { name: 'zod', version: '4.0.0' });
    write('node_modules/zod/index.js');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test("each platform gets the module's code, its own native files and the module's dependencies; the universal package none", async () => {
    const module = NATIVE_MODULES.find((m) => m.name === SRT)!;
    for (const target of PACKAGES) {
      const { files, skipped } = await listPackage(target, { root });
      assert.deepEqual(skipped, []);
      const nodeModules = files.filter((f) => f.startsWith('node_modules/'));
      if (target === UNIVERSAL) {
        assert.deepEqual(nodeModules, [], target);
        continue;
      }
      const native = module.native[target].map((f) => `node_modules/${SRT}/${f}`);
      assert.deepEqual(
        nodeModules,
        [
          'node_modules/@anthropic-ai/sandbox-runtime/LICENSE',
          'node_modules/@anthropic-ai/sandbox-runtime/dist/index.js',
          'node_modules/@anthropic-ai/sandbox-runtime/node_modules/zod/index.js',
          'node_modules/@anthropic-ai/sandbox-runtime/node_modules/zod/package.json',
          'node_modules/@anthropic-ai/sandbox-runtime/package.json',
          'node_modules/@anthropic-ai/sandbox-runtime/vendor/java-proxy-agent/srt-proxy-agent.jar',
          ...native,
          'node_modules/commander/LICENSE',
          'node_modules/commander/index.js',
          'node_modules/commander/package.json',
        ].sort(),
        target,
      );
    }
  });

  test('a native file the table names but the installed version lacks stops the packaging, naming the table', () => {
    const missing = NATIVE_MODULES.find((m) => m.name === SRT)!.native['linux-arm64'][0]!;
    rmSync(nodePath.join(root, 'node_modules', SRT, missing));
    try {
      assert.throws(
        () => planPackage('linux-arm64', root),
        (e: Error) => e.message.includes(missing) && /NATIVE_MODULES in scripts\/package\.mjs/.test(e.message),
      );
    } finally {
      write(`node_modules/${SRT}/${missing}`);
    }
  });

  test('a native module that is not installed is left out and reported as skipped', () => {
    rmSync(nodePath.join(root, 'node_modules', SRT), { recursive: true });
    const plan = planPackage('linux-x64', root);
    assert.deepEqual(plan.skipped, [SRT]);
    assert.deepEqual(plan.include, []);
  });

  test('an unknown target is refused with the list of targets', () => {
    assert.throws(
      () => planPackage('linux-ia32', root),
      /unknown target "linux-ia32": one of universal, linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, or all/,
    );
  });
});
