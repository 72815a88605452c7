import type { Problem } from './port.ts';

/** Where a problem is: `12:5-12:9`, or `12:5-9` on one line. */
export function problemRange(p: Problem): string {
  return p.startLine === p.endLine
    ? `${p.startLine}:${p.startColumn}-${p.endColumn}`
    : `${p.startLine}:${p.startColumn}-${p.endLine}:${p.endColumn}`;
}

/** One problem in one line: `12:5-9 error ts(2322): Type 'string' is not assignable to type 'number'.` */
export function problemLine(p: Problem): string {
  const by =
    p.source === undefined
      ? p.code === undefined
        ? ''
        : ` (${p.code})`
      : ` ${p.source}${p.code === undefined ? '' : `(${p.code})`}`;
  // A message can span lines (TypeScript's elaborations): indented, so it stays one item.
  return `${problemRange(p)} ${p.severity}${by}: ${p.message.replace(/\r?\n/g, '\n    ')}`;
}
