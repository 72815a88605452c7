import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';

/* Start-up stays small as the product grows (issue 27): what activation loads is held here. */

/** The activation bundle's budget (1 KB = 1,000 bytes), as the bench reports it. */
const BUDGET_BYTES = 600_000;
/** Loaded on first use only: never inside dist/extension.js. */
const LAZY = [
  /node_modules\/re2js\//, /node_modules\/iconv-lite\//, /node_modules\/markdown-it\//, /node_modules\/jimp|node_modules\/@jimp\//,
  /node_modules\/picomatch\//, /node_modules\/diff\//, /node_modules\/image-size\//, /node_modules\/jsonc-parser\//,
  /node_modules\/@anthropic-ai\/sandbox-runtime\//, /^src\/mcp\/server\.ts$/, /node_modules\/@modelcontextprotocol\//,
];

test('the production activation bundle stays within 600 KB and holds none of the parts loaded on first use (re2js, iconv-lite, markdown-it, image codecs, picomatch, diff, image-size, jsonc-parser, the shell\'s sandbox, the MCP server)', (tc) => {
  const dir = mkdtempSync(nodePath.join(tmpdir(), 'wt-bundle-'));
  tc.after(() => rmSync(dir, { recursive: true, force: true }));
  const built = spawnSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${dir}`, '--metafile'], { encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  const bytes = statSync(nodePath.join(dir, 'extension.js')).size;
  assert.ok(bytes <= BUDGET_BYTES, `dist/extension.js is ${bytes} bytes in production, over the ${BUDGET_BYTES} budget: load something on first use (src/core/lazy-module.ts)`);
  const meta = JSON.parse(readFileSync(nodePath.join(dir, 'extension.meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
  const inputs = Object.keys(meta.inputs);
  assert.ok(inputs.some((f) => f.startsWith('src/core/tools/')), 'the metafile lists the bundle\'s inputs');
  assert.deepEqual(inputs.filter((f) => LAZY.some((re) => re.test(f))), [], 'parts that load on first use are in the activation bundle');
});
