import type * as Jsonc from 'jsonc-parser';
import type { JSONScanner, ParseErrorCode } from 'jsonc-parser';
import { lazyModule } from '../lazy-module.ts';

/** The callbacks of jsonc-parser's `visit` that the JSON artifacts use, with the same arguments. */
export interface JsonVisitor {
  /** Return false to skip the callbacks of everything inside (its end is still reported). */
  onObjectBegin?(offset: number, length: number, startLine: number): boolean | void;
  onObjectEnd?(offset: number, length: number, startLine: number): void;
  onArrayBegin?(offset: number, length: number, startLine: number): boolean | void;
  onArrayEnd?(offset: number, length: number, startLine: number): void;
  onObjectProperty?(property: string): void;
  onLiteralValue?(value: unknown, offset: number, length: number, startLine: number): void;
  onError?(error: ParseErrorCode, offset: number, length: number, startLine: number, startCharacter: number): void;
  /** A container opens deeper than `maxDepth`: the walk stops there. */
  onTooDeep?(offset: number, startLine: number, startCharacter: number): void;
}

// jsonc-parser's token kinds, scan errors and parse error codes (declared there as const enums).
const T = {
  OpenBrace: 1,
  CloseBrace: 2,
  OpenBracket: 3,
  CloseBracket: 4,
  Comma: 5,
  Colon: 6,
  Null: 7,
  True: 8,
  False: 9,
  String: 10,
  Number: 11,
  LineComment: 12,
  BlockComment: 13,
  LineBreak: 14,
  Trivia: 15,
  Unknown: 16,
  EOF: 17,
} as const;
const SCAN_ERRORS: Record<number, number> = { 1: 11, 2: 12, 3: 13, 4: 14, 5: 15, 6: 16 };
const E = {
  InvalidSymbol: 1,
  InvalidNumberFormat: 2,
  PropertyNameExpected: 3,
  ValueExpected: 4,
  ColonExpected: 5,
  CommaExpected: 6,
  CloseBraceExpected: 7,
  CloseBracketExpected: 8,
  EndOfFileExpected: 9,
} as const;

interface Container {
  readonly kind: 'object' | 'array';
  needsComma: boolean;
  /** A member's value that is itself a container is being parsed. */
  awaiting: boolean;
}

/**
 * jsonc-parser's `visit` (comments and trailing commas allowed, empty content an error), walked with
 * an explicit stack instead of recursion: a document nested thousands of levels deep is parsed in
 * bounded stack, where the recursive parser overflows it. Same tokens, errors and recovery, and the
 * same callbacks in the same order (a test holds the two equal). Security: a container nested
 * deeper than `maxDepth` stops the walk (`onTooDeep`): 4 MB of "[" held 2 million levels (500 MB).
 */
export function visitJson(text: string, visitor: JsonVisitor, maxDepth = Infinity): void {
  // jsonc-parser (~7 KB) loads on the first JSON document, not at activation.
  const scanner: JSONScanner = lazyModule<typeof Jsonc>('jsonc-parser').createScanner(text, false);
  let suppressed = 0;
  const at = (): [number, number, number] => [
    scanner.getTokenOffset(),
    scanner.getTokenLength(),
    scanner.getTokenStartLine(),
  ];
  const error = (code: number): void => {
    if (suppressed === 0)
      visitor.onError?.(
        code as ParseErrorCode,
        scanner.getTokenOffset(),
        scanner.getTokenLength(),
        scanner.getTokenStartLine(),
        scanner.getTokenStartCharacter(),
      );
  };
  const scanNext = (): number => {
    for (;;) {
      const token = scanner.scan();
      const scanError = SCAN_ERRORS[scanner.getTokenError()];
      if (scanError !== undefined) error(scanError);
      if (token === T.Unknown) error(E.InvalidSymbol);
      else if (token !== T.LineComment && token !== T.BlockComment && token !== T.Trivia && token !== T.LineBreak)
        return token;
    }
  };
  const handleError = (
    code: number,
    skipUntilAfter: readonly number[] = [],
    skipUntil: readonly number[] = [],
  ): void => {
    error(code);
    if (skipUntilAfter.length + skipUntil.length === 0) return;
    for (let token = scanner.getToken(); token !== T.EOF; token = scanNext()) {
      if (skipUntilAfter.includes(token)) {
        scanNext();
        return;
      }
      if (skipUntil.includes(token)) return;
    }
  };
  const begin = (callback: JsonVisitor['onObjectBegin']): void => {
    if (suppressed > 0) suppressed++;
    else if (callback?.(...at()) === false) suppressed = 1;
  };
  const end = (callback: JsonVisitor['onObjectEnd']): void => {
    if (suppressed > 0) suppressed--;
    if (suppressed === 0) callback?.(...at());
  };
  const literal = (value: unknown): void => {
    if (suppressed === 0) visitor.onLiteralValue?.(value, ...at());
  };

  const stack: Container[] = [];
  /** Starts the value at the current token: true/false as parseValue returns, 'container' when one was opened, 'deep' past `maxDepth`. */
  const startValue = (): boolean | 'container' | 'deep' => {
    const token = scanner.getToken();
    if ((token === T.OpenBracket || token === T.OpenBrace) && stack.length >= maxDepth) {
      visitor.onTooDeep?.(scanner.getTokenOffset(), scanner.getTokenStartLine(), scanner.getTokenStartCharacter());
      return 'deep';
    }
    switch (token) {
      case T.OpenBracket:
        begin(visitor.onArrayBegin);
        scanNext();
        stack.push({ kind: 'array', needsComma: false, awaiting: false });
        return 'container';
      case T.OpenBrace:
        begin(visitor.onObjectBegin);
        scanNext();
        stack.push({ kind: 'object', needsComma: false, awaiting: false });
        return 'container';
      case T.String:
        literal(scanner.getTokenValue());
        scanNext();
        return true;
      case T.Number: {
        let value = Number(scanner.getTokenValue());
        if (Number.isNaN(value)) {
          handleError(E.InvalidNumberFormat);
          value = 0;
        }
        literal(value);
        scanNext();
        return true;
      }
      case T.Null:
        literal(null);
        scanNext();
        return true;
      case T.True:
        literal(true);
        scanNext();
        return true;
      case T.False:
        literal(false);
        scanNext();
        return true;
      default:
        return false;
    }
  };

  scanNext();
  if (scanner.getToken() === T.EOF) {
    handleError(E.ValueExpected);
    return;
  }
  const root = startValue();
  if (root === 'deep') return;
  if (root === false) {
    handleError(E.ValueExpected);
    return;
  }
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.awaiting) {
      top.awaiting = false;
      top.needsComma = true;
    }
    const close = top.kind === 'object' ? T.CloseBrace : T.CloseBracket;
    let closing = scanner.getToken() === close || scanner.getToken() === T.EOF;
    if (!closing) {
      if (scanner.getToken() === T.Comma) {
        if (!top.needsComma) handleError(E.ValueExpected);
        scanNext();
        closing = scanner.getToken() === close;
      } else if (top.needsComma) {
        handleError(E.CommaExpected);
      }
    }
    if (!closing) {
      if (top.kind === 'object' && scanner.getToken() !== T.String) {
        handleError(E.PropertyNameExpected, [], [T.CloseBrace, T.Comma]);
        handleError(E.ValueExpected, [], [T.CloseBrace, T.Comma]);
      } else if (top.kind === 'object') {
        if (suppressed === 0) visitor.onObjectProperty?.(scanner.getTokenValue());
        scanNext();
        if (scanner.getToken() === T.Colon) {
          scanNext();
          const started = startValue();
          if (started === 'deep') return;
          if (started === 'container') {
            top.awaiting = true;
            continue;
          }
          if (!started) handleError(E.ValueExpected, [], [T.CloseBrace, T.Comma]);
        } else {
          handleError(E.ColonExpected, [], [T.CloseBrace, T.Comma]);
        }
      } else {
        const started = startValue();
        if (started === 'deep') return;
        if (started === 'container') {
          top.awaiting = true;
          continue;
        }
        if (!started) handleError(E.ValueExpected, [], [T.CloseBracket, T.Comma]);
      }
      top.needsComma = true;
      continue;
    }
    stack.pop();
    end(top.kind === 'object' ? visitor.onObjectEnd : visitor.onArrayEnd);
    if (scanner.getToken() !== close)
      handleError(top.kind === 'object' ? E.CloseBraceExpected : E.CloseBracketExpected, [close], []);
    else scanNext();
    const parent = stack[stack.length - 1];
    if (parent) parent.awaiting = true;
  }
  if (scanner.getToken() !== T.EOF) handleError(E.EndOfFileExpected);
}
