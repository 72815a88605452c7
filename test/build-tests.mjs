// Bundles the integration suite for the extension host: test/integration/index.ts plus every
// `*.test.ts` under test/integration/ (and mocha) into out/test/integration/index.js (CommonJS;
// `vscode` stays external, the extension host provides it). The untrusted-workspace variant is the
// same runner over test/integration-untrusted/*.test.ts, in out/test/integration-untrusted/index.js;
// the packaged variant over test/integration-packaged/*.test.ts, in out/test/integration-packaged/index.js.
//
//   node test/build-tests.mjs [untrusted|packaged]
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const integrationDir = join(repoRoot, 'test/integration');
export const integrationEntry = join(repoRoot, 'out/test/integration/index.js');
const untrustedDir = join(repoRoot, 'test/integration-untrusted');
export const untrustedEntry = join(repoRoot, 'out/test/integration-untrusted/index.js');
const packagedDir = join(repoRoot, 'test/integration-packaged');
export const packagedEntry = join(repoRoot, 'out/test/integration-packaged/index.js');

/** `*.test.ts` files under a folder, sorted, as absolute paths. */
function suiteFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Resolves `require('wt:integration-suites')` to the list of suite files under `dir`, each loaded lazily. */
const suitesPluginFor = (dir) => ({
  name: 'wt-integration-suites',
  setup(build) {
    build.onResolve({ filter: /^wt:integration-suites$/ }, () => ({ path: 'suites', namespace: 'wt-suites' }));
    build.onLoad({ filter: /.*/, namespace: 'wt-suites' }, () => {
      const files = suiteFiles(dir);
      return {
        resolveDir: dir,
        loader: 'js',
        watchFiles: files,
        contents: `module.exports = [\n${files
          .map(
            (f) => `  { file: ${JSON.stringify(relative(repoRoot, f))}, load: () => require(${JSON.stringify(f)}) },`,
          )
          .join('\n')}\n];\n`,
      };
    });
  },
});

/** Builds the integration bundle; returns its path. */
export async function buildTests() {
  return buildSuite(integrationDir, integrationEntry);
}

/** Builds the untrusted-workspace bundle (the same runner, test/integration/index.ts, over test/integration-untrusted/); returns its path. */
export async function buildUntrustedTests() {
  return buildSuite(untrustedDir, untrustedEntry);
}

/** Builds the installed-package bundle (the same runner over test/integration-packaged/); returns its path. */
export async function buildPackagedTests() {
  return buildSuite(packagedDir, packagedEntry);
}

async function buildSuite(suitesDir, outfile) {
  await esbuild.build({
    entryPoints: [join(integrationDir, 'index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: ['vscode'],
    // As esbuild.mjs: prefer a package's ESM build (jsonc-parser's "main" is UMD, whose require()
    // calls esbuild cannot follow), for suites that import the core.
    mainFields: ['module', 'main'],
    sourcemap: 'inline',
    logLevel: 'warning',
    // mocha's parallel mode (unused here) resolves worker files at run time. The core's iconv-lite
    // loader (src/core/text/iconv.ts) reads import.meta only outside a bundle; the suites decode no files.
    logOverride: { 'require-resolve-not-external': 'silent', 'empty-import-meta': 'silent' },
    plugins: [suitesPluginFor(suitesDir)],
  });
  // The bundle is CommonJS whatever the root package.json's "type" says.
  mkdirSync(join(repoRoot, 'out/test'), { recursive: true });
  writeFileSync(join(repoRoot, 'out/test/package.json'), '{ "type": "commonjs" }\n');
  return outfile;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const builders = { untrusted: buildUntrustedTests, packaged: buildPackagedTests };
  console.log(await (builders[process.argv[2]] ?? buildTests)());
}
