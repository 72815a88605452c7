import { stripVTControlCharacters } from 'node:util';
import type { ShellLine } from './output.ts';

/**
 * A command's output as a person reads it in a terminal, for the model: colours and cursor codes
 * stripped, a progress line that rewrote itself (`\r`) as its last state, and a TAP stream (what
 * `node --test` prints without a terminal) condensed: the passing tests become one count, the
 * summary one line, node's own stack frames go; every failing test stays with its location, error,
 * expected and actual values and its stack frames in the project. Anything not recognised stays
 * as it is. The result artifact of a paged run keeps every line as printed.
 */
export function condenseOutput(lines: readonly ShellLine[]): ShellLine[] {
  const cleaned = lines.map((line) => {
    // A progress line that rewrote itself shows its last state, as a terminal does.
    const text =
      stripVTControlCharacters(line.text)
        .split('\r')
        .findLast((part) => part !== '') ?? '';
    return text === line.text ? line : { stream: line.stream, text };
  });
  if (cleaned.some((line) => line.stream === 'out' && TAP_VERSION.test(line.text))) return condenseTap(cleaned);
  if (cleaned.some((line) => line.stream === 'out' && SPEC_TOTAL.test(line.text))) return condenseSpec(cleaned);
  return cleaned;
}

const TAP_VERSION = /^TAP version 1[34]$/;
const SUBTEST = /^\s*# Subtest: /;
const TEST_POINT = /^(\s*)(not )?ok \d+( - .*)?$/;
const DIRECTIVE = /\s#\s*(SKIP|TODO)\b/i;
const PLAN = /^\s*1\.\.\d+$/;
const SUMMARY = /^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\S+)$/;
/** YAML keys of a failure that say nothing about it. */
const NOISE_KEY = /^(duration_ms|type|failureType):/;
/** A stack frame inside Node itself (TAP's YAML drops the `at `). */
const NODE_FRAME = /^(?:at )?(?:async )?(?:[^(]*\()?(?:node:|<anonymous>\))/;
/** The spec reporter's (node --test's default from Node 23 on, and in a terminal) lines. */
const SPEC_TOTAL = /^ℹ tests \d+$/;
const SPEC_SUMMARY = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\S+)$/;
const SPEC_RESULT = /^(\s*)([✔✖▶﹣]) (.*?)(?: \([\d.]+m?s\))?$/;
const FAILING_SECTION = '✖ failing tests:';

/** The passing count and the summary on one line, as both reporters get them. */
function totals(passed: number, summary: readonly string[], mark: string): ShellLine[] {
  const tail: ShellLine[] = [];
  if (passed > 0)
    tail.push({ stream: 'out', text: `${mark} ${passed} passing test${passed === 1 ? '' : 's'} not listed` });
  if (summary.length > 0) tail.push({ stream: 'out', text: `${mark} ${summary.join(', ')}` });
  return tail;
}

/**
 * A spec run's lines condensed: passing tests and suites counted, not listed; a failure's details
 * kept once (in the "failing tests" section when the run prints one, inline otherwise), without
 * node's own stack frames; the summary on one line.
 */
function condenseSpec(lines: readonly ShellLine[]): ShellLine[] {
  const section = lines.findIndex((line) => line.stream === 'out' && line.text === FAILING_SECTION);
  const out: ShellLine[] = [];
  const summary: string[] = [];
  let summaryAt = -1;
  let passed = 0;
  let detailsOf: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.stream === 'err') {
      out.push(line);
      continue;
    }
    const inSection = section !== -1 && i > section;
    const result = SPEC_RESULT.exec(line.text);
    if (result !== null && !inSection) {
      const [, indent, mark, name] = result as unknown as [string, string, string, string];
      detailsOf = undefined;
      if (mark === '▶') {
        // A suite: listed only when it failed (its closing line says which).
        const close = lines
          .slice(i + 1)
          .find((l) => l.text.startsWith(`${indent}✔ ${name} (`) || l.text.startsWith(`${indent}✖ ${name} (`));
        if (close?.text.startsWith(`${indent}✖`) !== false) out.push(line);
        continue;
      }
      if (mark === '✔') {
        if (!lines.slice(0, i).some((l) => l.text === `${indent}▶ ${name}`)) passed++;
        continue;
      }
      if (mark === '✖') detailsOf = indent;
      out.push(line);
      continue;
    }
    const total = SPEC_SUMMARY.exec(line.text);
    if (total !== null) {
      if (summaryAt === -1) summaryAt = out.length;
      summary.push(`${total[1]} ${total[2]}`);
      continue;
    }
    if (NODE_FRAME.test(line.text.trim())) {
      // The last frame opens the error's own properties: the brace stays.
      if (line.text.endsWith(' {')) out.push({ stream: line.stream, text: `${/^\s*/.exec(line.text)![0]}{` });
      continue;
    }
    // A failure's details inline are printed again in the failing tests section: kept there.
    if (
      detailsOf !== undefined &&
      section !== -1 &&
      i < section &&
      (line.text.startsWith(`${detailsOf} `) || line.text === '')
    )
      continue;
    detailsOf = undefined;
    out.push(line);
  }
  out.splice(summaryAt === -1 ? out.length : summaryAt, 0, ...totals(passed, summary, 'ℹ'));
  return out;
}

/** A TAP stream's lines condensed (see condenseOutput); other lines, stderr among them, kept in place. */
function condenseTap(lines: readonly ShellLine[]): ShellLine[] {
  const out: ShellLine[] = [];
  const summary: string[] = [];
  let summaryAt = -1;
  let passed = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const text = line.text;
    if (line.stream === 'err') {
      out.push(line);
      continue;
    }
    if (TAP_VERSION.test(text) || SUBTEST.test(text) || PLAN.test(text)) continue;
    const point = TEST_POINT.exec(text);
    if (point !== null) {
      const failed = point[2] !== undefined;
      const kept = failed || DIRECTIVE.test(text);
      if (kept) out.push(line);
      else passed++;
      i = yamlBlock(lines, i, point[1]!, (yaml) => {
        if (failed) out.push(yaml);
      });
      continue;
    }
    const total = SUMMARY.exec(text);
    if (total !== null) {
      if (summaryAt === -1) summaryAt = out.length;
      summary.push(`${total[1]} ${total[2]}`);
      continue;
    }
    out.push(line);
  }
  out.splice(summaryAt === -1 ? out.length : summaryAt, 0, ...totals(passed, summary, '#'));
  return out;
}

/**
 * Skips the YAML block (`---` … `...`, indented two more than its test point) after line `at`,
 * handing each line worth keeping to `keep`; returns the index of its last line (or `at` if none).
 */
function yamlBlock(lines: readonly ShellLine[], at: number, indent: string, keep: (line: ShellLine) => void): number {
  const inner = `${indent}  `;
  if (lines[at + 1]?.text !== `${inner}---`) return at;
  let i = at + 2;
  let inStack = false;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.text === `${inner}...`) return i;
    if (line.stream === 'err') {
      keep(line);
      continue;
    }
    const body = line.text.startsWith(inner) ? line.text.slice(inner.length) : line.text;
    const isKey = !body.startsWith(' ');
    if (isKey) inStack = body.startsWith('stack:');
    if (isKey ? NOISE_KEY.test(body) : inStack && NODE_FRAME.test(body.trim())) continue;
    keep(line);
  }
  return i - 1;
}
