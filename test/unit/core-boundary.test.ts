import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { filesUnder, relativeImportsOf } from './source-imports.ts';

// Which folder may import which: folder-order.test.ts.

test('src/core never imports vscode', () => {
  const offenders = filesUnder('src/core').filter((file) =>
    /from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)|import\(\s*['"]vscode['"]\s*\)/.test(
      readFileSync(file, 'utf8'),
    ),
  );
  assert.deepEqual(offenders, []);
});

test('only src/vscode and src/extension.ts import vscode', () => {
  const offenders = filesUnder('src')
    .filter((file) => !file.startsWith(nodePath.join('src', 'vscode')) && file !== nodePath.join('src', 'extension.ts'))
    .filter((file) => /from\s+['"]vscode['"]/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(offenders, []);
});

/** The cycles of an import graph, one per strongly connected component (Tarjan), each as a closed path. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = new Set<string>();
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.add(member);
      if (member === file) break;
    }
    const selfImport = graph.get(file)?.includes(file) ?? false;
    if (component.size > 1 || selfImport) cycles.push(pathWithin(graph, component, file));
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** One closed import path through a strongly connected component, from `start` back to it (breadth-first). */
function pathWithin(
  graph: ReadonlyMap<string, readonly string[]>,
  component: ReadonlySet<string>,
  start: string,
): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const next of graph.get(file) ?? []) {
      if (!component.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = file; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, file);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

test('the cycle finder names a cycle it is given', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  assert.deepEqual(importCycles(graph), [['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
});

/**
 * Past this many lines (as the formatter writes them) a module is a signal to look for a split by
 * meaning, never for one made to dodge it; the test names them without failing.
 */
const SIGNAL_LINES = 300;
/** No module grows past this: by then it holds more than one meaning. */
const MAX_LINES = 500;

test(`no src/core module is over ${MAX_LINES} lines; those over ${SIGNAL_LINES} are named as a signal`, (t) => {
  const counted = filesUnder('src/core')
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }));
  for (const { file, lines } of counted.filter(({ lines }) => lines > SIGNAL_LINES))
    t.diagnostic(`${file}: ${lines} lines`);
  assert.deepEqual(
    counted.filter(({ lines }) => lines > MAX_LINES).map(({ file, lines }) => `${file}: ${lines} lines`),
    [],
  );
});

/**
 * Issue 24, "contracts live with their tools": only the tools and the modules that assemble and run
 * calls (src/core/contract, src/core/pipeline) may know the tool contract or the pipeline; domain
 * modules (media, artifacts, search, results, shell…) take plain arguments.
 */
const KNOWS_TOOLS = ['contract', 'pipeline', 'tools'].map(
  (folder) => nodePath.join('src', 'core', folder) + nodePath.sep,
);

test('nothing below src/core/tools imports the tool contract or the pipeline (domain modules take plain arguments)', () => {
  const contracts = [
    nodePath.join('src', 'core', 'contract', 'tool.ts'),
    ...filesUnder(nodePath.join('src', 'core', 'pipeline')),
  ];
  const offenders = filesUnder('src/core')
    .filter((file) => file.endsWith('.ts') && !KNOWS_TOOLS.some((folder) => file.startsWith(folder)))
    .flatMap((file) =>
      relativeImportsOf(file)
        .filter((target) => contracts.includes(target))
        .map((target) => `${file} -> ${target}`),
    );
  assert.deepEqual(offenders, []);
});

/** The import cycles among the .ts files under `dir` (import type included). */
function importCyclesUnder(dir: string): string[] {
  const files = filesUnder(dir).filter((file) => file.endsWith('.ts'));
  const graph = new Map(
    files.map((file) => [file, relativeImportsOf(file).filter((target) => files.includes(target))]),
  );
  return importCycles(graph).map((cycle) => cycle.join(' -> '));
}

test('src/ has no import cycle anywhere (import type included)', () => {
  const cycles = importCyclesUnder('src');
  assert.deepEqual(cycles, [], `src import cycles:\n${cycles.join('\n')}`);
});
