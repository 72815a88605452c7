import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createNewlineCounter } from '../../src/core/artifacts/newlines.ts';
import { INDEX_BLOCK_BYTES, LineIndexBuilder } from '../../src/core/artifacts/line-index.ts';
import { bomEncoding, detectBinary } from '../../src/core/text/encoding.ts';
import { Utf8Validator, firstInvalidUtf8 } from '../../src/core/text/utf8.ts';
import { parsePointer, formatPointer, selectJson } from '../../src/core/artifacts/json.ts';
import { findSection, parseOutline } from '../../src/core/artifacts/markdown.ts';
import { nearest } from '../../src/core/artifacts/nearest.ts';
import { visit } from 'jsonc-parser';
import { visitJson, type JsonVisitor } from '../../src/core/artifacts/json-visit.ts';

function reference(bytes: Uint8Array): { lf: number; crlf: number } {
  let lf = 0;
  let crlf = 0;
  bytes.forEach((b, i) => {
    if (b === 10) {
      lf++;
      if (i > 0 && bytes[i - 1] === 13) crlf++;
    }
  });
  return { lf, crlf };
}

describe('newline counter', () => {
  it('is the WebAssembly SIMD one on this runtime (a silent fallback would be 5x slower)', () => {
    assert.equal(createNewlineCounter().simd, true);
  });

  it('counts LF and CRLF like a byte loop, wasm and JS alike, with pairs split across calls', () => {
    const byte = fc.constantFrom(10, 13, 65, 0, 0xff);
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 300 }), fc.nat(300), (list, splitAt) => {
        const bytes = Uint8Array.from(list);
        const split = Math.min(splitAt, bytes.length);
        for (const counter of [createNewlineCounter(), createNewlineCounter({ forceJs: true })]) {
          counter.scratch.set(bytes.subarray(0, split), 0);
          let lf = counter.count(0, split);
          counter.scratch.set(bytes.subarray(split), 7);
          lf += counter.count(7, bytes.length - split);
          assert.deepEqual({ lf, crlf: counter.crlf }, reference(bytes));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('line index', () => {
  it('records line feeds before each 32 KiB block, and lines/eol as an editor counts them', () => {
    const builder = new LineIndexBuilder(createNewlineCounter());
    const text = Buffer.from('a\r\n'.repeat(10_932) + 'tail');
    builder.feed(text.subarray(0, 1000));
    builder.feed(text.subarray(1000));
    const index = builder.finish();
    assert.equal(index.bytes, text.length);
    assert.equal(index.newlines, 10_932);
    assert.equal(index.lines, index.newlines + 1);
    assert.equal(index.eol, 'crlf');
    // The line feeds at 2, 5, ..., 32765 come before byte 32768.
    assert.equal(INDEX_BLOCK_BYTES, 32768);
    assert.deepEqual([...index.blockCounts], [0, 10_922]);
  });

  it('counts an empty file as 0 lines and a final newline as ending the last line', () => {
    const empty = new LineIndexBuilder(createNewlineCounter()).finish();
    assert.deepEqual({ lines: empty.lines, eol: empty.eol }, { lines: 0, eol: 'none' });
    const b = new LineIndexBuilder(createNewlineCounter());
    b.feed(Buffer.from('x\ny\n'));
    assert.deepEqual({ lines: b.finish().lines, eol: 'lf' }, { lines: 2, eol: 'lf' });
  });
});

describe('encoding', () => {
  it('sniffs UTF-8 and UTF-16 byte order marks', () => {
    assert.equal(bomEncoding(Buffer.from([0xef, 0xbb, 0xbf, 0x41])), 'utf8bom');
    assert.equal(bomEncoding(Buffer.from([0xff, 0xfe, 0x41, 0])), 'utf16le');
    assert.equal(bomEncoding(Buffer.from([0xfe, 0xff, 0, 0x41])), 'utf16be');
    assert.equal(bomEncoding(Buffer.from('plain')), undefined);
  });

  it('accepts valid UTF-8 split at every byte position', () => {
    const text = Buffer.from('aé€😀z'.repeat(3));
    for (let split = 0; split <= text.length; split++) {
      const v = new Utf8Validator();
      v.feed(text.subarray(0, split), 0);
      v.feed(text.subarray(split), split);
      assert.equal(v.finish(), undefined, `split at ${split}`);
    }
  });

  it('reports the offset of the first invalid byte, across a chunk boundary too', () => {
    const bytes = Buffer.concat([Buffer.from('ok é '), Buffer.from([0xe9, 0x20]), Buffer.from(' more')]);
    for (let split = 0; split <= bytes.length; split++) {
      const v = new Utf8Validator();
      v.feed(bytes.subarray(0, split), 0);
      v.feed(bytes.subarray(split), split);
      assert.equal(v.finish(), 6, `split at ${split}`);
    }
    assert.equal(firstInvalidUtf8(Buffer.from([0x41, 0xed, 0xa0, 0x80])), 1, 'a UTF-16 surrogate encoded in UTF-8');
    assert.equal(firstInvalidUtf8(Buffer.from([0x41, 0xc0, 0x80])), 1, 'an overlong NUL');
    const truncated = new Utf8Validator();
    truncated.feed(Buffer.from([0x41, 0xe2, 0x82]), 0);
    assert.equal(truncated.finish(), 1, 'a character cut off by the end of the file');
  });

  it('detects binary by extension, by content, and by a NUL near the start whatever the name says', () => {
    assert.equal(detectBinary('logo.png', Buffer.from('looks like text'), Buffer.alloc(0)), true);
    assert.equal(detectBinary('notes.txt', Buffer.from('plain text'), Buffer.alloc(0)), false);
    assert.equal(detectBinary('notes.txt', Buffer.from('PK\u0003\u0004\u0000\u0000'), Buffer.alloc(0)), true);
    assert.equal(detectBinary('blob', Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 200, 201]), Buffer.alloc(0)), true);
    assert.equal(detectBinary('Makefile', Buffer.from('all:\n\techo hi\n'), Buffer.alloc(0)), false);
  });
});

describe('JSON pointer and summary', () => {
  it('parses RFC 6901 escapes and rejects a path without the leading slash, suggesting one', () => {
    assert.deepEqual(parsePointer('/a~1b/m~0n/0'), ['a/b', 'm~n', '0']);
    assert.deepEqual(parsePointer(''), []);
    assert.equal(formatPointer(['a/b', 'm~n', 0]), '/a~1b/m~0n/0');
    assert.throws(() => parsePointer('scripts.test'), {
      code: 'E_SANDBOX_INVALID_INPUT',
      message:
        '"scripts.test" is not a JSON Pointer: a pointer is "" (the whole document) or starts with "/", e.g. "/scripts/test". Call artifact_query again with that form.',
    });
    assert.throws(() => parsePointer('/a~2'), { code: 'E_SANDBOX_INVALID_INPUT' });
  });

  it('selects by pointer without descending into other subtrees, with line ranges', () => {
    const text = '{\n "a": {"x": [1, 2]},\n "b": [\n  {"y": true}\n ]\n}';
    const s = selectJson(text, ['b', '0'], { depth: 2, maxChildren: 10, maxNodes: 10, maxString: 10 });
    assert.ok(s.found);
    assert.deepEqual(s.node, {
      type: 'object',
      size: 1,
      startLine: 4,
      endLine: 4,
      children: [{ key: 'y', node: { type: 'boolean', startLine: 4, endLine: 4, value: 'true' } }],
    });
  });

  it('treats an array index with a leading zero as no index', () => {
    const s = selectJson('[1,2]', ['01'], { depth: 1, maxChildren: 10, maxNodes: 10, maxString: 10 });
    assert.equal(s.found, false);
  });
});

describe('markdown outline', () => {
  it('skips "#" in fences and front matter, counts setext headings, and ends each section before the next of its level', () => {
    const text = [
      '---',
      'title: x',
      '---',
      '# A',
      '```',
      '# not a heading',
      '```',
      'B',
      '-',
      'text',
      '### C',
      '# D',
      '',
    ].join('\n');
    assert.deepEqual(
      parseOutline(text, 12).headings.map((h) => [h.level, h.path, h.startLine, h.endLine]),
      [
        [1, 'A', 4, 11],
        [2, 'A/B', 8, 11],
        [3, 'A/B/C', 11, 11],
        [1, 'D', 12, 12],
      ],
    );
  });

  it('matches a heading path with skipped levels, case and inline markup, and titles holding "/"', () => {
    const { headings } = parseOutline('# Top\n## Install `npm`\n### Linux/WSL\n## Usage\n', 4);
    assert.equal(findSection(headings, 'Install npm/Linux/WSL')?.startLine, 3);
    assert.equal(findSection(headings, 'top/usage')?.startLine, 4);
    assert.equal(findSection(headings, 'Usage/Linux/WSL'), undefined);
  });

  it('ranks near candidates by containment, then edit distance', () => {
    assert.deepEqual(nearest('tset', ['build', 'test', 'testing', 'lint'], 2), ['test', 'lint']);
    assert.deepEqual(nearest('dep', ['devDependencies', 'dependencies', 'name'], 2), [
      'devDependencies',
      'dependencies',
    ]);
  });
});

describe('JSON visitor without recursion', () => {
  /** Every callback with its arguments, in order; begins at a depth where `skip` says so return false. */
  function events(run: (visitor: JsonVisitor) => void, skip: (depth: number) => boolean): string[] {
    const out: string[] = [];
    let depth = 0;
    const begin =
      (kind: string) =>
      (o: number, l: number, line: number): boolean => {
        out.push(`${kind}{ ${o} ${l} ${line}`);
        depth++;
        return !skip(depth);
      };
    const end =
      (kind: string) =>
      (o: number, l: number, line: number): void => {
        out.push(`${kind}} ${o} ${l} ${line}`);
        depth--;
      };
    run({
      onObjectBegin: begin('o'),
      onArrayBegin: begin('a'),
      onObjectEnd: end('o'),
      onArrayEnd: end('a'),
      onObjectProperty: (p) => {
        out.push(`key ${JSON.stringify(p)}`);
      },
      onLiteralValue: (v, o, l, line) => {
        out.push(`lit ${JSON.stringify(v)} ${o} ${l} ${line}`);
      },
      onError: (e, o, l, line, col) => {
        out.push(`err ${e} ${o} ${l} ${line} ${col}`);
      },
    });
    return out;
  }

  it("reports exactly what jsonc-parser's recursive visit reports, on valid and broken JSONC alike", () => {
    const noise = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '"k"',
      '1',
      '-',
      'e',
      'tru',
      'null',
      '//c\n',
      '/*',
      '*/',
      '\n',
      ' ',
      'x',
      '\\u12',
    );
    const text = fc.oneof(
      fc.json({ maxDepth: 6 }),
      fc
        .tuple(fc.json({ maxDepth: 4 }), fc.array(fc.tuple(fc.nat(), fc.nat(3), noise), { maxLength: 6 }))
        .map(([json, edits]) =>
          edits.reduce((t, [at, cut, add]) => {
            const i = t.length === 0 ? 0 : at % (t.length + 1);
            return t.slice(0, i) + add + t.slice(i + cut);
          }, json),
        ),
      fc.array(noise, { maxLength: 30 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, fc.nat(4), (json, skipAt) => {
        const skip = (depth: number): boolean => skipAt > 0 && depth === skipAt;
        const theirs = events(
          (v) =>
            visit(json, v as Parameters<typeof visit>[1], {
              allowTrailingComma: true,
              disallowComments: false,
              allowEmptyContent: false,
            }),
          skip,
        );
        const ours = events((v) => visitJson(json, v), skip);
        assert.deepEqual(ours, theirs, json);
      }),
      { numRuns: 3000 },
    );
  });

  it('walks a document nested 100,000 levels deep, where the recursive parser overflows the stack', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    assert.throws(() => visit(deep, {}), RangeError);
    let ends = 0;
    visitJson(deep, {
      onArrayEnd: () => {
        ends++;
      },
    });
    assert.equal(ends, 100_000);
    const selection = selectJson(deep, [], { depth: 3, maxChildren: 50, maxNodes: 500, maxString: 200 }, true);
    assert.ok(selection.found && selection.error === undefined);
  });
});
