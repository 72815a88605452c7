// The folder order of src/: which folder may import which. The file-level rule (no import cycle
// anywhere, import type included) is in core-boundary.test.ts; this one holds the picture one level
// up, so a shared primitive cannot drift back into a domain and circle two folders again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodePath from 'node:path';
import { filesUnder, relativeImportsOf } from './source-imports.ts';

/**
 * The folders of src/core from the bottom up. A folder may import the folders of lower layers only:
 * never its own layer's siblings, never a layer above. `(base)` is the files directly in src/core
 * (the shared words: types, errors, ports, paths, gate, events…), which import no folder at all.
 * A new folder goes into the lowest layer above everything it imports.
 */
const CORE_LAYERS: readonly (readonly string[])[] = [
  ['(base)'],
  ['text', 'glob', 'links', 'git', 'problems'],
  // Shared primitives, below the domains that use them.
  ['fs', 'images', 'paging', 'ripgrep', 'outline', 'policy'],
  ['list', 'artifacts'],
  ['media', 'results'],
  ['search'],
  ['shell'],
  // The tool contract (the tool type, schema helpers, tool names): everything a tool may be given.
  ['contract'],
  ['tools'],
  // What runs a call: the runner and its steps, the batch gate, the registry, the manifest, the session.
  ['pipeline'],
];

/** The hosts over the core, from the bottom up (the VS Code and CLI hosts use the MCP server's pieces). */
const HOST_LAYERS: readonly (readonly string[])[] = [['core'], ['mcp'], ['cli', 'vscode'], ['extension.ts']];

const CORE = nodePath.join('src', 'core');

/** The folder of src/core that holds `file` (a path under src/core), as CORE_LAYERS names it. */
function coreFolderOf(file: string): string {
  const parts = nodePath.relative(CORE, file).split(nodePath.sep);
  return parts.length > 1 ? parts[0]! : '(base)';
}

/** The host (or `core`) that holds `file` (a path under src), as HOST_LAYERS names it. */
function hostOf(file: string): string {
  return nodePath.relative('src', file).split(nodePath.sep)[0]!;
}

/** Each folder's layer (its index in `layers`), failing on a folder the table does not place. */
function rankOf(layers: readonly (readonly string[])[], folder: string, table: string): number {
  const rank = layers.findIndex((layer) => layer.includes(folder));
  assert.notEqual(
    rank,
    -1,
    `${folder} is in no layer of ${table}: add it to the lowest layer above every folder it imports`,
  );
  return rank;
}

/** The imports of a graph (file -> the files it imports) that go sideways or up in `layers`, as "from -> to (folder -> folder)". */
function importsAgainst(
  graph: ReadonlyMap<string, readonly string[]>,
  folderOf: (file: string) => string,
  layers: readonly (readonly string[])[],
  table: string,
): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets
      .filter((target) => folderOf(target) !== folderOf(file))
      .filter((target) => rankOf(layers, folderOf(target), table) >= rankOf(layers, folderOf(file), table))
      .map((target) => `${file} -> ${target} (${folderOf(file)} -> ${folderOf(target)})`),
  );
}

const sources = (dir: string): string[] =>
  filesUnder(dir).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
const importGraph = (files: readonly string[]): Map<string, string[]> =>
  new Map(files.map((file) => [file, relativeImportsOf(file)]));

test('src/core folders import only the layers below them (CORE_LAYERS)', () => {
  const offenders = importsAgainst(importGraph(sources(CORE)), coreFolderOf, CORE_LAYERS, 'CORE_LAYERS');
  assert.deepEqual(offenders, [], `imports against the folder order:\n${offenders.join('\n')}`);
});

test('the hosts import the core and the hosts below them, and the core imports no host (HOST_LAYERS)', () => {
  const offenders = importsAgainst(importGraph(sources('src')), hostOf, HOST_LAYERS, 'HOST_LAYERS');
  assert.deepEqual(offenders, [], `imports against the host order:\n${offenders.join('\n')}`);
});

test('every folder of src/core and src/ has its place in the tables', () => {
  for (const folder of new Set(sources(CORE).map(coreFolderOf))) rankOf(CORE_LAYERS, folder, 'CORE_LAYERS');
  for (const host of new Set(sources('src').map(hostOf))) rankOf(HOST_LAYERS, host, 'HOST_LAYERS');
});

test('the folder order names an import that climbs, one between siblings of a layer, and a folder it does not place', () => {
  const layers = [['low'], ['a', 'b'], ['high']];
  const folderOf = (file: string): string => file.split('/')[0]!;
  const graph = new Map([
    ['high/x.ts', ['low/y.ts']],
    ['low/y.ts', ['high/x.ts']],
    ['a/z.ts', ['b/w.ts', 'a/v.ts', 'low/y.ts']],
  ]);
  assert.deepEqual(importsAgainst(graph, folderOf, layers, 'T'), [
    'low/y.ts -> high/x.ts (low -> high)',
    'a/z.ts -> b/w.ts (a -> b)',
  ]);
  assert.throws(
    () => importsAgainst(new Map([['new/n.ts', ['low/y.ts']]]), folderOf, layers, 'T'),
    /new is in no layer of T/,
  );
});
