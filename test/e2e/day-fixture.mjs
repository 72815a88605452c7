// The day's fixture (issue 46): a small `node --test` package in a git repository, with a `.env`
// that must never reach the model. Made fresh for each run in a temporary folder: the files, one
// commit, and the repository's own name and email (git commit needs them, in a terminal or the sandbox).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CANARY } from './scenario.mjs';

export const FILES = {
  'package.json': `${JSON.stringify({ name: 'day', version: '1.0.0', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2)}\n`,
  '.gitignore': 'node_modules/\n.env\n',
  '.env': `API_TOKEN=${CANARY}\n`,
  'config.json': '{ "title": "Weekly report", "currency": "EUR" }\n',
  'src/sum.js': [
    'export function sum(values) {',
    '  return values.reduce((total, value) => total + value, 1);',
    '}',
    '',
  ].join('\n'),
  'src/util.js': [
    '/** A URL-safe name for a title: "Hello, World" → "hello-world". */',
    'export function slug(text) {',
    "  return text.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');",
    '}',
    '',
  ].join('\n'),
  'src/config.js': [
    "import { readFileSync } from 'node:fs';",
    "import { join } from 'node:path';",
    '',
    "const DEFAULTS = { title: 'Report', currency: 'USD', precision: 2 };",
    '',
    '/** The settings in <dir>/config.json over the defaults; a missing file gives the defaults. */',
    'export function loadConfig(dir) {',
    '  try {',
    "    return { ...DEFAULTS, ...JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) };",
    '  } catch (err) {',
    "    if (err.code === 'ENOENT') return { ...DEFAULTS };",
    '    throw err;',
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/report.js': [
    "import { writeFileSync } from 'node:fs';",
    "import { join } from 'node:path';",
    "import { loadConfig } from './config.js';",
    "import { sum } from './sum.js';",
    "import { slug } from './util.js';",
    '',
    '/** Writes <dir>/<slug of the title>.txt with the total of the amounts; returns its path. */',
    'export function writeReport(dir, amounts) {',
    '  const config = loadConfig(dir);',
    '  const file = join(dir, `${slug(config.title)}.txt`);',
    '  writeFileSync(file, `${config.title}: ${sum(amounts).toFixed(config.precision)} ${config.currency}\\n`);',
    '  return file;',
    '}',
    '',
  ].join('\n'),
  'src/cli.js': [
    "import { loadConfig } from './config.js';",
    "import { writeReport } from './report.js';",
    "import { slug } from './util.js';",
    '',
    'const amounts = process.argv.slice(2).map(Number);',
    "console.log(slug(loadConfig('.').title), writeReport('.', amounts));",
    '',
  ].join('\n'),
  'src/index.js': [
    "export { sum } from './sum.js';",
    "export { writeReport } from './report.js';",
    "export { legacyTotal } from './legacy/total.js';",
    '',
  ].join('\n'),
  'src/legacy/total.js': [
    '/** @deprecated Nothing calls this any more; sum() replaced it. */',
    'export function legacyTotal(values) {',
    '  let total = 0;',
    '  for (let i = 0; i < values.length; i++) total += values[i];',
    '  return total;',
    '}',
    '',
  ].join('\n'),
  'test/sum.test.js': [
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { sum } from '../src/sum.js';",
    '',
    "test('sum adds the values', () => {",
    '  assert.equal(sum([1, 2, 3]), 6);',
    '});',
    '',
    "test('sum of nothing is 0', () => {",
    '  assert.equal(sum([]), 0);',
    '});',
    '',
  ].join('\n'),
  'test/util.test.js': [
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { slug } from '../src/util.js';",
    '',
    "test('slug lowers and joins words', () => {",
    "  assert.equal(slug('Hello, World'), 'hello-world');",
    '});',
    '',
    "test('slug trims dashes', () => {",
    "  assert.equal(slug('  -Weekly report- '), 'weekly-report');",
    '});',
    '',
  ].join('\n'),
  // Tests that make a temporary folder: they need a $TMPDIR that exists.
  'test/report.test.js': [
    "import assert from 'node:assert/strict';",
    "import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';",
    "import { tmpdir } from 'node:os';",
    "import { join } from 'node:path';",
    "import { test } from 'node:test';",
    "import { writeReport } from '../src/report.js';",
    '',
    "test('writeReport writes the total under the title', (t) => {",
    "  const dir = mkdtempSync(join(tmpdir(), 'report-'));",
    '  t.after(() => rmSync(dir, { recursive: true }));',
    '  writeFileSync(join(dir, \'config.json\'), \'{"title": "Weekly report"}\');',
    '  const file = writeReport(dir, [1.5, 2.5]);',
    "  assert.equal(readFileSync(file, 'utf8'), 'Weekly report: 4.00 USD\\n');",
    '});',
    '',
    "test('writeReport uses the defaults without a config.json', (t) => {",
    "  const dir = mkdtempSync(join(tmpdir(), 'report-'));",
    '  t.after(() => rmSync(dir, { recursive: true }));',
    "  assert.equal(writeReport(dir, [2]), join(dir, 'report.txt'));",
    '});',
    '',
  ].join('\n'),
};

/** Makes the package as a repository with one commit in `dir` (which must not exist). */
export function makeDayFixture(dir) {
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const git = (...args) => execFileSync('git', ['-C', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Day Person');
  git('config', 'user.email', 'day@example.com');
  git('add', '-A');
  git('commit', '-qm', 'Report package');
}
