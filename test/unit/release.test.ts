import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TOOL_NAMES, type ToolName } from '../../src/core/contract/names.ts';
import { TOOLS } from '../../src/core/tools/index.ts';

interface Manifest {
  version: string;
  icon?: string;
  galleryBanner?: { color?: string; theme?: string };
  engines: { vscode: string };
  capabilities: Record<'untrustedWorkspaces' | 'virtualWorkspaces', { supported: string; description: string }>;
  contributes: {
    configuration: { properties: Record<string, { default?: unknown }> };
    commands: { command: string; title: string }[];
  };
}
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as Manifest;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from a PNG's IHDR chunk, which the format puts first, right after the signature. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  assert.deepEqual(bytes.subarray(0, 8), PNG_SIGNATURE, 'not a PNG: the signature differs');
  assert.equal(bytes.toString('latin1', 12, 16), 'IHDR', 'the first chunk is not IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

test('the Marketplace icon is a 128×128 PNG, rendered from media/icon.svg by scripts/icon.mjs', () => {
  assert.equal(manifest.icon, 'media/icon.png');
  assert.deepEqual(pngSize(readFileSync('media/icon.png')), { width: 128, height: 128 });
  assert.match(readFileSync('media/icon.svg', 'utf8'), /viewBox="0 0 128 128"/);
  assert.match(readFileSync('scripts/icon.mjs', 'utf8'), /media\/icon\.svg/);
});

test('the gallery banner has a colour and a theme its text can be read on', () => {
  assert.match(manifest.galleryBanner?.color ?? '', /^#[0-9a-f]{6}$/i);
  assert.ok(manifest.galleryBanner?.theme === 'dark' || manifest.galleryBanner?.theme === 'light');
});

test('CHANGELOG.md has a section for the version package.json declares, newest first', () => {
  const headings = [...readFileSync('CHANGELOG.md', 'utf8').matchAll(/^## (\S+)/gm)].map((m) => m[1]);
  assert.ok(headings.length > 0, 'CHANGELOG.md has no version section ("## 0.1.0 ...")');
  assert.equal(
    headings[0],
    manifest.version,
    `the newest section of CHANGELOG.md is ${headings[0]}, but package.json's version is ${manifest.version}`,
  );
});

/** The snake_case words of a text: what it names as tools. */
function namedTools(text: string): string[] {
  return [...new Set(text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? [])].sort();
}

function toolsRequiring(capability: 'writable' | 'search'): ToolName[] {
  return TOOL_NAMES.filter((name) => TOOLS[name].requires.includes(capability)).sort();
}

test('the restricted-mode text names exactly the tools an untrusted workspace does not register', () => {
  const text = manifest.capabilities.untrustedWorkspaces.description;
  assert.deepEqual(namedTools(text), toolsRequiring('writable'));
  assert.match(text, /every call asks/);
});

test('the virtual-workspace text names the tools that need a local disk, and only settings that exist', () => {
  const text = manifest.capabilities.virtualWorkspaces.description;
  const named = namedTools(text);
  for (const name of named) assert.ok((TOOL_NAMES as readonly string[]).includes(name), `${name} is not a tool`);
  for (const name of toolsRequiring('search'))
    assert.ok(named.includes(name), `${name} needs a local disk but the text does not say so`);
  for (const setting of text.match(/workspaceTools\.[\w.]*\w/g) ?? [])
    assert.ok(setting in manifest.contributes.configuration.properties, `${setting} is not a setting`);
});

test('engines.vscode is the VS Code the integration and e2e suites run (code-server 4.N runs VS Code 1.N)', () => {
  const codeServer = /CODE_SERVER_VERSION = '4\.(\d+)\.\d+'/.exec(readFileSync('test/host/ensure.mjs', 'utf8'));
  assert.ok(codeServer, 'test/host/ensure.mjs names no CODE_SERVER_VERSION');
  assert.equal(manifest.engines.vscode, `^1.${codeServer[1]}.0`);
});

/** The text of README's `## title` section, up to the next `## ` heading. */
function readmeSection(title: string): string {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.search(new RegExp(`^## ${title}$`, 'm'));
  assert.ok(start >= 0, `README.md has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** A README table's rows as [first cell, second cell], without the header, the separator and the cells' backticks. */
function tableRows(section: string): [string, string][] {
  return section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) => {
      const [first = '', second = ''] = line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim().replace(/^`(.*)`$/, '$1'));
      return [first, second];
    });
}

test("README's Settings table has every setting of package.json, with its default", () => {
  const rows = new Map(tableRows(readmeSection('Settings')).map(([name, fallback]) => [name, fallback]));
  for (const [name, schema] of Object.entries(manifest.contributes.configuration.properties)) {
    assert.ok(rows.has(name), `README's Settings table has no row for ${name}`);
    assert.equal(rows.get(name), JSON.stringify(schema.default), `README's default for ${name}`);
  }
  for (const name of rows.keys())
    assert.ok(
      name in manifest.contributes.configuration.properties,
      `README's Settings table lists ${name}, which package.json does not contribute`,
    );
});

test("README's Commands table has every command of package.json, by its palette title and its id", () => {
  const rows = new Map(tableRows(readmeSection('Commands')).map(([title, id]) => [id, title]));
  for (const { command, title } of manifest.contributes.commands) {
    assert.ok(rows.has(command), `README's Commands table has no row for ${command}`);
    assert.equal(rows.get(command), title, `README's title for ${command}`);
  }
  for (const id of rows.keys())
    assert.ok(
      manifest.contributes.commands.some((c) => c.command === id),
      `README's Commands table lists ${id}, which package.json does not contribute`,
    );
});

test("README's Known limits name the tools restricted mode and a virtual workspace leave out, as the registry declares them", () => {
  const rows = new Map(tableRows(readmeSection('Known limits')));
  const restricted =
    rows.get('every platform, untrusted (restricted mode)') ??
    assert.fail("README's Known limits have no restricted-mode row");
  assert.deepEqual(namedTools(restricted), toolsRequiring('writable'));
  const virtual =
    rows.get('a virtual workspace, or any folder not on the local disk') ??
    assert.fail("README's Known limits have no virtual-workspace row");
  assert.deepEqual(namedTools(virtual), toolsRequiring('search'));
});

test('README shows the icon first, and has the Requirements, Known limits and Release notes sections', () => {
  const readme = readFileSync('README.md', 'utf8');
  assert.match(readme, /^!\[Workspace Tools\]\(media\/icon\.png\)\n/);
  const minimum = /^\^(\d+\.\d+)\.0$/.exec(manifest.engines.vscode)?.[1];
  assert.ok(minimum, `engines.vscode ${manifest.engines.vscode} is not ^MAJOR.MINOR.0`);
  assert.match(
    readmeSection('Requirements'),
    new RegExp(
      `VS Code ${minimum.replace('.', '\\.')} or later.*\`${manifest.engines.vscode.replace(/[.^]/g, '\\$&')}\``,
    ),
  );
  for (const platform of ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'])
    assert.match(readmeSection('Known limits'), new RegExp(`\`${platform}\``));
  assert.match(readmeSection('Release notes'), /\[CHANGELOG\.md\]\(CHANGELOG\.md\)/);
});
