// Issue 24's layering rules: contracts live with their tools, hosts learn what a call writes from its
// plan, and no module imports its way back to itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';

const SRC = nodePath.resolve(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = nodePath.join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import and re-export of each source file (type-only ones included), as absolute paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    const imports = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gm)].map((m) => nodePath.resolve(nodePath.dirname(file), m[1]!));
    graph.set(file, imports);
  }
  return graph;
}

/** The import cycles: strongly connected groups of more than one file, or a file importing itself. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do { w = stack.pop()!; onStack.delete(w); group.push(w); } while (w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.map((f) => nodePath.relative(SRC, f)));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import cycle anywhere in src/', () => {
  assert.deepEqual(cycles(importGraph()), []);
});

test('the cycle check finds a cycle (a graph of two files importing each other)', () => {
  assert.deepEqual(cycles(new Map([['/a.ts', ['/b.ts']], ['/b.ts', ['/a.ts']], ['/c.ts', ['/a.ts']]])).map((g) => g.sort()), [['../../../a.ts', '../../../b.ts'].map((p) => nodePath.relative(SRC, nodePath.resolve(SRC, p))).sort()]);
});

test('no domain module (a folder of src/core other than tools/) imports the tool contract (tool.ts) or the pipeline: they take plain arguments', () => {
  const core = nodePath.join(SRC, 'core');
  const contract = ['tool.ts', 'pipeline.ts'].map((f) => nodePath.join(core, f));
  const domain = (file: string): boolean => nodePath.dirname(file) !== core && !file.startsWith(nodePath.join(core, 'tools') + nodePath.sep);
  const offenders = [...importGraph()].filter(([file, imports]) => file.startsWith(core + nodePath.sep) && domain(file) && imports.some((i) => contract.includes(i)));
  assert.deepEqual(offenders.map(([file]) => nodePath.relative(SRC, file)), []);
});

test('VS Code features never switch on a tool\'s name: what a call writes comes from its plan', () => {
  const offenders = sources(nodePath.join(SRC, 'vscode')).filter((file) => /\b(?:tool\.name|call\.tool)\s*[!=]==|[!=]==\s*(?:tool\.name|call\.tool)\b/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(offenders.map((f) => nodePath.relative(SRC, f)), []);
});
