// Bundles the extension and the CLI. `--production` minifies; `--watch` rebuilds on change;
// `--outdir=DIR` builds into DIR instead of dist/ (with `--metafile`, also DIR/<bundle>.meta.json: what each holds).
import * as esbuild from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const outdir = process.argv.find((a) => a.startsWith('--outdir='))?.slice('--outdir='.length) ?? 'dist';
const metafile = process.argv.includes('--metafile');

/** Prints build start/finish, and errors as file:line:col so editors and terminals link them. */
const reporter = {
  name: 'reporter',
  setup(build) {
    build.onStart(() => console.log(`[build] started ${build.initialOptions.outfile}`));
    build.onEnd((result) => {
      for (const { text, location } of [...result.errors, ...result.warnings]) {
        const where = location ? `${location.file}:${location.line}:${location.column + 1}` : '(unknown)';
        console.error(`${where}: ${text}`);
      }
      console.log(
        `[build] finished ${build.initialOptions.outfile} (${result.errors.length} errors, ${result.warnings.length} warnings)`,
      );
    });
  },
};

const LAZY_BUNDLES = {
  'iconv-lite': './iconv-lite.js',
  'markdown-it': './markdown-it.js',
  re2js: './re2js.js',
  picomatch: './picomatch.js',
  diff: './diff.js',
  'image-size': './image-size.js',
  'jsonc-parser': './jsonc-parser.js',
  // Worker threads' code (src/core/lazy-module.ts's workerFile): the folder reader's, which lists big trees beside the listing,
  // and the image decoder's (jimp's PNG, JPEG and GIF codecs with its resize), which decodes where it can be stopped.
  'folder-worker': './folder-worker.js',
  'image-worker': './image-worker.js',
};

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node22',
  // The sandbox library finds its own helpers (seccomp filters, the proxy agent) next to its files: loaded from node_modules, never bundled.
  external: ['vscode', '@anthropic-ai/sandbox-runtime'],
  // Prefer a package's ESM build: jsonc-parser's "main" is UMD, whose require() calls esbuild cannot follow.
  mainFields: ['module', 'main'],
  // Packages only some calls need are bundled into files of their own that src/core/lazy-module.ts
  // loads on first use: iconv-lite (~490 KB minified with its CJK tables, for files that are not
  // UTF-8), markdown-it (~95 KB with its helpers, for Markdown outlines) and re2js (~150 KB, the linear-time regex engine for globs that could make RegExp backtrack);
  // and, so the activation bundle keeps room to grow (issue 27): picomatch (~25 KB, on the policy's
  // first decision), diff (~11 KB, on the first patch or +/- count), image-size (~13 KB, on the
  // first file that may be an image) and jsonc-parser (~7 KB, on the first JSON outline).
  define: { WT_LAZY_BUNDLES: JSON.stringify(LAZY_BUNDLES), 'import.meta.url': 'undefined' },
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'silent',
  plugins: [reporter],
};

const entries = [
  { entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { entryPoints: ['iconv-lite'], outfile: 'dist/iconv-lite.js', define: {} },
  { entryPoints: ['markdown-it'], outfile: 'dist/markdown-it.js', define: {} },
  { entryPoints: ['re2js'], outfile: 'dist/re2js.js', define: {} },
  { entryPoints: ['picomatch'], outfile: 'dist/picomatch.js', define: {} },
  { entryPoints: ['diff'], outfile: 'dist/diff.js', define: {} },
  { entryPoints: ['image-size'], outfile: 'dist/image-size.js', define: {} },
  { entryPoints: ['jsonc-parser'], outfile: 'dist/jsonc-parser.js', define: {} },
  { entryPoints: ['src/core/images/decode-worker.ts'], outfile: 'dist/image-worker.js', define: {} },
  { entryPoints: ['src/core/fs/folder-worker.ts'], outfile: 'dist/folder-worker.js', define: {} },
];

mkdirSync(outdir, { recursive: true });
// The sources are ESM; the bundles are CommonJS, whatever the root package.json says.
writeFileSync(path.join(outdir, 'package.json'), '{ "type": "commonjs" }\n');

const placed = (entry) => ({ ...entry, outfile: path.join(outdir, path.basename(entry.outfile)) });
const contexts = await Promise.all(entries.map((entry) => esbuild.context({ ...common, ...placed(entry), metafile })));
if (watch) {
  await Promise.all(contexts.map((ctx) => ctx.watch()));
  console.log('[watch] watching for changes');
} else {
  const results = await Promise.allSettled(contexts.map((ctx) => ctx.rebuild()));
  if (metafile) {
    results.forEach((r, i) => {
      if (r.status === 'fulfilled')
        writeFileSync(
          path.join(outdir, `${path.basename(entries[i].outfile, '.js')}.meta.json`),
          JSON.stringify(r.value.metafile),
        );
    });
  }
  await Promise.all(contexts.map((ctx) => ctx.dispose()));
  if (results.some((r) => r.status === 'rejected')) process.exit(1);
}
