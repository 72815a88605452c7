import type * as Jsonc from 'jsonc-parser';
import { lazyModule } from '../lazy-module.ts';
import { visitJson } from './json-visit.ts';
import { SandboxError, invalidInput } from '../errors.ts';
import { nearest } from './nearest.ts';

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

/** A JSON value, summarized: containers beyond the expanded depth carry only their size. */
export interface JsonSummary {
  readonly type: JsonType;
  /** Keys of an object, items of an array, characters of a string. */
  size?: number;
  /** 1-based lines in the file where the value starts and ends. */
  readonly startLine: number;
  endLine: number;
  /** A literal's JSON text; a string's is cut to the string limit. */
  readonly value?: string;
  /** The string in `value` was cut. */
  readonly valueCut?: boolean;
  /** Expanded object members / array items, in file order. */
  readonly children?: Array<{ readonly key: string | number; readonly node: JsonSummary }>;
  /** Members or items left out of `children`. */
  omitted?: number;
  /** How many items of each type an expanded array holds. */
  readonly itemTypes?: Partial<Record<JsonType, number>>;
}

export interface SummarizeOptions {
  /** Levels below the selected value whose members are listed (0 = only the value's own size). */
  readonly depth: number;
  /** Members listed per container. */
  readonly maxChildren: number;
  /** Values listed in total. */
  readonly maxNodes: number;
  /** Characters of a string value shown; 0 shows no literal values at all. */
  readonly maxString: number;
}

export interface JsonSyntaxError {
  readonly error: string;
  /** 1-based. */
  readonly line: number;
  readonly column: number;
}

export type JsonSelection =
  | { readonly found: true; readonly node: JsonSummary; readonly truncated: boolean; readonly error?: JsonSyntaxError }
  | { readonly found: false; readonly error?: JsonSyntaxError; readonly miss: JsonMiss }
  | { readonly found: false; readonly tooDeep: JsonPosition };

/** 1-based. */
export interface JsonPosition {
  readonly line: number;
  readonly column: number;
}

/** The deepest nesting parsed: each level costs a frame, and 100,000 levels cost about 25 MB. */
export const JSON_MAX_DEPTH = 100_000;

/** Where a pointer stopped matching. */
export interface JsonMiss {
  /** Segments that matched. */
  readonly matched: readonly string[];
  readonly failed: string;
  readonly at: {
    readonly type: JsonType;
    readonly size: number;
    readonly keys: readonly string[];
    readonly startLine: number;
    readonly endLine: number;
  };
}

/** Parses an RFC 6901 JSON Pointer into its unescaped segments. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    const guess =
      '/' +
      pointer
        .replace(/^[#$.]+/, '')
        .split(/[./]/)
        .filter(Boolean)
        .join('/');
    throw invalidInput(
      `${JSON.stringify(pointer)} is not a JSON Pointer: a pointer is "" (the whole document) or starts with "/", e.g. ${JSON.stringify(guess)}.`,
      `Call artifact_query again with that form.`,
    );
  }
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => {
      if (/~(?![01])/.test(segment))
        throw invalidInput(
          `JSON Pointer ${JSON.stringify(pointer)} has "~" not followed by 0 or 1 in ${JSON.stringify(segment)}: write "~0" for "~" and "~1" for "/" inside a key.`,
          '',
        );
      return segment.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/** Builds a pointer from segments (escaping "~" and "/"). */
export function formatPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

interface Frame {
  readonly type: 'object' | 'array';
  /** The summary being built, when this container is part of the result. */
  readonly node: JsonSummary | undefined;
  /** Depth below the selected value (-1: above it, on the pointer's path). */
  readonly rel: number;
  /** Children are listed (not only counted). */
  readonly expand: boolean;
  count: number;
  pendingKey: string;
  /** Keys seen, for an on-path object (to suggest near ones). */
  readonly keys: string[];
  readonly startLine: number;
  endLine: number;
}

const isIndex = (segment: string): boolean => segment === '0' || /^[1-9][0-9]{0,15}$/.test(segment);

/**
 * One pass of a JSONC visitor over `text` (comments and trailing commas allowed), without recursion:
 * summarizes the value at `pointer`, skipping the subtrees off the pointer's path. With
 * `validate`, nothing is skipped, so every syntax error is seen.
 */
export function selectJson(
  text: string,
  pointer: readonly string[],
  options: SummarizeOptions,
  validate = false,
): JsonSelection {
  const stack: Frame[] = [];
  let found: JsonSummary | undefined;
  let nodes = 0;
  let truncated = false;
  let error: JsonSyntaxError | undefined;
  let literalOnPath: { readonly depth: number; readonly type: JsonType; readonly line: number } | undefined;
  let tooDeep: JsonPosition | undefined;
  const pathFrames: Frame[] = [];

  /** Places a value that begins now; returns its depth below the selection (-1 above, undefined off the path). */
  const place = (
    type: JsonType,
    line: number,
    literal: { value: unknown; raw: string } | undefined,
  ): { rel: number | undefined; node: JsonSummary | undefined } => {
    const parent = stack[stack.length - 1];
    const depth = stack.length;
    let key: string | number | undefined;
    if (parent) {
      key = parent.type === 'object' ? parent.pendingKey : parent.count;
      if (parent.type === 'array') parent.count++;
    }
    let rel: number | undefined;
    if (!parent) rel = pointer.length === 0 ? 0 : -1;
    else if (parent.rel >= 0) rel = parent.rel + 1;
    else if (parent.rel === -1) {
      const want = pointer[depth - 1]!;
      const matches = parent.type === 'object' ? key === want : isIndex(want) && Number(want) === key;
      rel = matches ? (depth === pointer.length ? 0 : -1) : undefined;
    }
    if (rel === undefined) return { rel, node: undefined };
    if (rel === -1 && literal) literalOnPath = { depth, type, line };
    if (rel < 0) return { rel, node: undefined };
    const listed = rel === 0 || (parent?.expand === true && parent.node !== undefined);
    if (parent?.node?.itemTypes) {
      const types = parent.node.itemTypes;
      types[type] = (types[type] ?? 0) + 1;
    }
    if (!listed) return { rel, node: undefined };
    if (rel > 0 && (nodes >= options.maxNodes || (parent!.node!.children?.length ?? 0) >= options.maxChildren)) {
      parent!.node!.omitted = (parent!.node!.omitted ?? 0) + 1;
      if (nodes >= options.maxNodes) truncated = true;
      return { rel, node: undefined };
    }
    nodes++;
    let value: string | undefined;
    let size: number | undefined;
    let valueCut = false;
    if (literal) {
      if (type === 'string') {
        const s = String(literal.value);
        size = s.length;
        valueCut = s.length > options.maxString;
        if (options.maxString > 0) value = JSON.stringify(valueCut ? s.slice(0, options.maxString) : s);
      } else if (options.maxString > 0) {
        value = literal.raw;
      }
    }
    const node: JsonSummary = {
      type,
      startLine: line,
      endLine: line,
      ...(value !== undefined ? { value } : {}),
      ...(size !== undefined ? { size } : {}),
      ...(value !== undefined && valueCut ? { valueCut } : {}),
      ...(type === 'object' || type === 'array' ? { children: [] } : {}),
      ...(type === 'array' ? { itemTypes: {} } : {}),
    };
    if (rel === 0) found = node;
    else parent!.node!.children!.push({ key: key!, node });
    return { rel, node };
  };

  const begin = (type: 'object' | 'array', line: number): boolean => {
    const { rel, node } = place(type, line + 1, undefined);
    if (rel === undefined) {
      stack.push({
        type,
        node: undefined,
        rel: -2,
        expand: false,
        count: 0,
        pendingKey: '',
        keys: [],
        startLine: line + 1,
        endLine: line + 1,
      });
      return validate;
    }
    const expand = rel >= 0 && node !== undefined && rel < options.depth;
    const frame: Frame = {
      type,
      node,
      rel,
      expand,
      count: 0,
      pendingKey: '',
      keys: [],
      startLine: line + 1,
      endLine: line + 1,
    };
    stack.push(frame);
    if (rel === -1) pathFrames[stack.length - 1] = frame;
    // A container is entered when it is on the path, or when its members are listed or counted.
    return validate || rel === -1 || node !== undefined;
  };
  const end = (line: number): void => {
    const frame = stack.pop();
    if (!frame) return;
    frame.endLine = line + 1;
    if (!frame.node) return;
    frame.node.size = frame.count;
    frame.node.endLine = line + 1;
  };

  visitJson(
    text,
    {
      onObjectBegin: (_o, _l, line) => begin('object', line),
      onArrayBegin: (_o, _l, line) => begin('array', line),
      onObjectEnd: (_o, _l, line) => end(line),
      onArrayEnd: (_o, _l, line) => end(line),
      onObjectProperty: (property: string) => {
        const top = stack[stack.length - 1];
        if (!top) return;
        top.pendingKey = property;
        top.count++;
        if (top.rel === -1 && top.keys.length < 1000) top.keys.push(property);
      },
      onLiteralValue: (value: unknown, offset, length, line) => {
        const type: JsonType =
          value === null
            ? 'null'
            : typeof value === 'string'
              ? 'string'
              : typeof value === 'boolean'
                ? 'boolean'
                : 'number';
        place(type, line + 1, { value, raw: text.slice(offset, offset + length) });
      },
      onError: (code: Jsonc.ParseErrorCode, _offset, _length, line, column) => {
        error ??= {
          error: lazyModule<typeof Jsonc>('jsonc-parser').printParseErrorCode(code),
          line: line + 1,
          column: column + 1,
        };
      },
      onTooDeep: (_offset, line, column) => {
        tooDeep = { line: line + 1, column: column + 1 };
      },
    },
    JSON_MAX_DEPTH,
  );

  if (tooDeep) return { found: false, tooDeep };
  if (found) return { found: true, node: found, truncated, ...(error ? { error } : {}) };
  const matchedDepth = pathFrames.length;
  const matched = pointer.slice(0, Math.max(0, matchedDepth - 1));
  const container = pathFrames[matchedDepth - 1];
  const failed = pointer[Math.max(0, matchedDepth - 1)] ?? '';
  if (literalOnPath && literalOnPath.depth === matchedDepth) {
    return {
      found: false,
      ...(error ? { error } : {}),
      miss: {
        matched: pointer.slice(0, matchedDepth),
        failed: pointer[matchedDepth] ?? '',
        at: { type: literalOnPath.type, size: 0, keys: [], startLine: literalOnPath.line, endLine: literalOnPath.line },
      },
    };
  }
  const at = container
    ? {
        type: container.type,
        size: container.count,
        keys: container.keys,
        startLine: container.startLine,
        endLine: container.endLine,
      }
    : { type: 'null' as const, size: 0, keys: [], startLine: 1, endLine: 1 };
  return { found: false, ...(error ? { error } : {}), miss: { matched, failed, at } };
}

/** "line 4" or "lines 4-9". */
export function lineRange(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}-${end}`;
}

/** The narrated error for a pointer that selects nothing. */
export function missError(pointer: string, miss: JsonMiss): SandboxError {
  const where = miss.matched.length === 0 ? 'the document root' : JSON.stringify(formatPointer(miss.matched));
  const lines = lineRange(miss.at.startLine, miss.at.endLine);
  let detail: string;
  if (miss.at.type === 'object') {
    const near = nearest(miss.failed, miss.at.keys, 8).map((k) => JSON.stringify(formatPointer([...miss.matched, k])));
    detail =
      miss.at.size === 0
        ? `${where} (${lines}) is an empty object. Select ${JSON.stringify(formatPointer(miss.matched))} itself.`
        : `${where} (${lines}) is an object with ${miss.at.size} key${miss.at.size === 1 ? '' : 's'}, none of them ${JSON.stringify(miss.failed)}. Nearest: ${near.join(', ')}; call artifact_query with one of those.`;
  } else if (miss.at.type === 'array') {
    detail =
      miss.at.size === 0
        ? `${where} (${lines}) is an empty array. Select ${JSON.stringify(formatPointer(miss.matched))} itself.`
        : `${where} (${lines}) is an array of ${miss.at.size} item${miss.at.size === 1 ? '' : 's'}: use an index from 0 to ${miss.at.size - 1}, e.g. ${JSON.stringify(formatPointer([...miss.matched, 0]))}.`;
  } else {
    detail = `${where} (${lines}) is a ${miss.at.type}, which has no members; select ${JSON.stringify(formatPointer(miss.matched))} itself.`;
  }
  return new SandboxError(
    'E_SANDBOX_NOT_FOUND',
    `JSON Pointer ${JSON.stringify(pointer)} selects nothing: ${detail}`,
    '',
  );
}

const INLINE_MAX = 100;

/** Renders a summary as indented pseudo-JSON: cut containers show `{…N keys}` / `[…N items]`. */
export function renderJson(node: JsonSummary, maxChars: number): { text: string; capped: boolean } {
  const out: string[] = [];
  let used = 0;
  let capped = false;
  const push = (line: string): boolean => {
    if (capped) return false;
    if (used + line.length + 1 > maxChars) {
      capped = true;
      out.push('… (output capped; select a deeper pointer)');
      return false;
    }
    out.push(line);
    used += line.length + 1;
    return true;
  };
  const scalar = (n: JsonSummary): string => {
    if (n.type === 'object') return n.size ? `{…${n.size} key${n.size === 1 ? '' : 's'}}` : '{}';
    if (n.type === 'array') return n.size ? `[…${n.size} item${n.size === 1 ? '' : 's'}]` : '[]';
    if (n.valueCut && n.value !== undefined) return `${n.value.slice(0, -1)}…" (${n.size} chars)`;
    return n.value ?? n.type;
  };
  const walk = (n: JsonSummary, indent: string, prefix: string, comma: string): void => {
    const children = n.children;
    if (!children || (children.length === 0 && (n.size ?? 0) > 0) || n.size === 0) {
      push(`${indent}${prefix}${scalar(n)}${comma}`);
      return;
    }
    const [open, close] = n.type === 'object' ? ['{', '}'] : ['[', ']'];
    // A short container of scalars fits on one line.
    if (!n.omitted && children.every((c) => !c.node.children || c.node.children.length === 0)) {
      const inline = children
        .map(({ key, node }) => (n.type === 'object' ? `${JSON.stringify(key)}: ` : '') + scalar(node))
        .join(', ');
      if (inline.length <= INLINE_MAX) {
        push(`${indent}${prefix}${open}${inline}${close}${comma}`);
        return;
      }
    }
    if (!push(`${indent}${prefix}${open}`)) return;
    children.forEach(({ key, node }, i) => {
      const last = i === children.length - 1 && !n.omitted;
      walk(node, indent + '  ', n.type === 'object' ? `${JSON.stringify(key)}: ` : '', last ? '' : ',');
    });
    if (n.omitted) push(`${indent}  … ${n.omitted} more ${n.type === 'object' ? 'keys' : 'items'}`);
    push(`${indent}${close}${comma}`);
  };
  walk(node, '', '', '');
  return { text: out.join('\n'), capped };
}
