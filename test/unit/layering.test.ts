// Issue 24: hosts learn what a call writes from its plan, never from a tool's name; issue 45: every
// host, and the core outside the tools themselves, take what they need from a tool's declaration
// (risk, requires, needs) or its plan. (No import cycle in src/ and no domain module importing the
// tool contract: core-boundary.test.ts; the folder order: folder-order.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { TOOL_NAMES } from '../../src/core/contract/names.ts';
import { filesUnder } from './source-imports.ts';

/** Where a tool's name may decide something: the tools' own files (and the list of names, wherever it lives). */
const OWN_NAMES = nodePath.join('src', 'core', 'tools') + nodePath.sep;

const quotedName = `'(?:${TOOL_NAMES.join('|')})'`;
/**
 * A decision taken on a tool's name: `tool.name === …`, `call.tool !== …`, a comparison with or a
 * `case` of a quoted tool name, or a table of facts keyed by every tool name (`Record<ToolName, boolean>`).
 * Naming a tool to call it (`runForPerson(host, 'save_media', …)`) and the registry of tools
 * (`Record<ToolName, Tool>`) are no decision.
 */
const SWITCH_ON_NAME = new RegExp(
  [
    String.raw`\b(?:tool\.name|call\.tool)\s*[!=]==`,
    String.raw`[!=]==\s*(?:tool\.name|call\.tool)\b`,
    String.raw`[!=]==\s*${quotedName}`,
    String.raw`${quotedName}\s*[!=]==`,
    String.raw`\bcase\s+${quotedName}`,
    String.raw`Record<ToolName,(?!\s*Tool\b)`,
  ].join('|'),
);

/** The lines of `files` that decide on a tool's name, as "file:line: text". */
function switchesOnNames(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (SWITCH_ON_NAME.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

const sources = (dir: string): string[] => filesUnder(dir).filter((file) => file.endsWith('.ts'));

test("the hosts (src/vscode, src/mcp, src/cli) never switch on a tool's name: what a call does comes from its plan and declaration", () => {
  const offenders = switchesOnNames([
    ...sources('src/vscode'),
    ...sources('src/mcp'),
    ...sources('src/cli'),
    nodePath.join('src', 'extension.ts'),
  ]);
  assert.deepEqual(offenders, []);
});

test("the core outside src/core/tools never switches on a tool's name (the tools pass what they are, e.g. a search says what it finds)", () => {
  const offenders = switchesOnNames(
    sources('src/core').filter(
      (file) => !file.startsWith(OWN_NAMES) && !file.endsWith(nodePath.join('tools', 'names.ts')),
    ),
  );
  assert.deepEqual(offenders, []);
});

test('the name-switch finder names each form of switching and leaves a call by name alone', () => {
  const lines = [
    `if (tool.name === 'save_media') {`,
    `if (call.tool !== x) {`,
    `const shell = name === 'run_shell_command';`,
    `spec.tool === 'search_files' ? a : b`,
    `case 'undo_save':`,
    `const DISK: Record<ToolName, boolean> = {`,
    `satisfies Record<ToolName, Tool>`,
    `await runForPerson(host, 'save_media', input);`,
    `const kind = spec.finds === 'lines';`,
  ];
  assert.deepEqual(
    lines.map((line) => SWITCH_ON_NAME.test(line)),
    [true, true, true, true, true, true, false, false, false],
  );
});
