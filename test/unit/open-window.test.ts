import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session, type TestSession } from './harness.ts';

function write(t: TestSession, rel: string, content: string | Uint8Array): void {
  const file = nodePath.join(t.root, rel);
  mkdirSync(nodePath.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** The text with the run-specific callId replaced by "ID". */
const pin = (text: string, callId: string): string => text.split(callId).join('ID');

describe('a window on open', () => {
  it('open_file with offset and limit returns the handle and that page, line-numbered, in one call', async (t) => {
    const s = session(t);
    write(s, 'src/app.ts', numbered(120));
    const outcome = await s.invoke('open_file', { path: 'src/app.ts', offset: 40, limit: 3 });
    const result = outcome.result;
    assert.ok('callId' in result && result.window && 'page' in result.window);
    assert.deepEqual(result.window.page.lines.map((l) => [l.n, l.text]), [[40, 'line 40'], [41, 'line 41'], [42, 'line 42']]);
    assert.equal(result.window.page.nextOffset, 43);
    const lines = pin(outcome.text, result.callId).split('\n');
    assert.match(lines[0]!, /^artifact ID: src\/app\.ts, 120 lines, \d+ bytes, utf8, lf, modified /);
    assert.deepEqual(lines.slice(1), [
      'Lines 40-42 of 120:',
      '40\tline 40',
      '41\tline 41',
      '42\tline 42',
      '(more: artifact_read {callId: "ID", offset: 43}; artifact_grep {callId: "ID", pattern} finds lines)',
    ]);
    assert.equal(s.gate.calls.length, 1, 'one gated call opens and reads');
    assert.equal(s.gate.calls[0]!.summary, 'open src/app.ts and read lines 40-42');
    // The handle stays the point: artifact_read goes on from it.
    const next = await s.invoke('artifact_read', { callId: result.callId, offset: 43, limit: 1 });
    assert.equal(next.result.lines[0]!.text, 'line 43');
  });

  it('reads the page exactly as artifact_read does: negative offsets from the end, limit alone from line 1', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(10));
    const tail = (await s.invoke('open_file', { path: 'a.txt', offset: -3 })).result;
    assert.ok(tail.window && 'page' in tail.window);
    const read = (await s.invoke('artifact_read', { callId: tail.callId, offset: -3 })).result;
    assert.deepEqual(tail.window.page, read);
    assert.deepEqual(tail.window.page.lines.map((l) => l.n), [8, 9, 10]);
    assert.equal(s.gate.calls[0]!.summary, 'open a.txt and read from line -3 (counted from the end)');
    const head = await s.invoke('open_file', { path: 'a.txt', limit: 2 });
    assert.ok(head.result.window && 'page' in head.result.window);
    assert.deepEqual(head.result.window.page.lines.map((l) => l.n), [1, 2]);
    assert.match(head.text, /\n\(more: artifact_read \{callId: "[^"]+", offset: 3\}/);
    const whole = await s.invoke('open_file', { path: 'a.txt', offset: 1 });
    assert.ok(whole.text.endsWith('10\tline 10\n(end of file)'));
  });

  it('without offset and limit nothing changes: the handle alone', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(3));
    const outcome = await s.invoke('open_file', { path: 'a.txt' });
    assert.equal('window' in outcome.result, false);
    assert.doesNotMatch(outcome.text, /line 1/);
    assert.equal(s.gate.calls[0]!.summary, 'open a.txt');
  });

  it('a page that cannot be read still returns the handle, with why (past the end, binary)', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(5));
    const past = await s.invoke('open_file', { path: 'a.txt', offset: 9 });
    assert.deepEqual(past.result.window, { pageError: 'offset 9 is past the end: "a.txt" has 5 lines; lines are 1-based. Call artifact_read with an offset from 1 to 5.' });
    assert.match(past.text, /\nNo page: offset 9 is past the end: "a\.txt" has 5 lines; lines are 1-based\. Call artifact_read with an offset from 1 to 5\.\nNext: artifact_read/);
    write(s, 'blob.bin', Buffer.from([0, 1, 2, 0, 255, 0]));
    const binary = await s.invoke('open_file', { path: 'blob.bin', limit: 10 });
    assert.ok(binary.result.binary);
    assert.match(binary.text, /\nNo page: the file is binary, so it has no text lines\.\nNo text lines \(binary\): search its bytes with artifact_grep/);
  });

  it('refuses a bad window with a narrated error before anything is opened', async (t) => {
    const s = session(t);
    write(s, 'a.txt', numbered(5));
    await assert.rejects(s.invoke('open_file', { path: 'a.txt', offset: 0 }), { code: 'E_SANDBOX_INVALID_INPUT', message: /offset 0 is no line: lines are 1-based \(1 is the first\), and -1 is the last/ });
    await assert.rejects(s.invoke('open_file', { path: 'a.txt', limit: 2001 }), { code: 'E_SANDBOX_INVALID_INPUT', message: /Argument "limit" is invalid/ });
    assert.equal(s.gate.calls.length, 0);
  });

  it('open_json_file and open_markdown_file return their structure, the handle and the page', async (t) => {
    const s = session(t);
    write(s, 'p.json', '{\n  "name": "x",\n  "version": "1.0.0"\n}\n');
    const json = await s.invoke('open_json_file', { path: 'p.json', offset: 2, limit: 2 });
    assert.equal(json.result.shape.type, 'object');
    assert.ok(json.result.window && 'page' in json.result.window);
    assert.deepEqual(json.result.window.page.lines.map((l) => l.text), ['  "name": "x",', '  "version": "1.0.0"']);
    assert.match(pin(json.text, json.result.handle.callId), /\n {2}"version": string \(5 chars\) @L3\nLines 2-3 of 4:\n2\t {2}"name": "x",\n3\t {2}"version": "1\.0\.0"\n\(more: artifact_read \{callId: "ID", offset: 4\}; artifact_grep \{callId: "ID", pattern\} finds lines\)\n\(artifact_query \{callId: "ID", select: "\/name"\} shows a value by JSON Pointer\)$/);
    write(s, 'r.md', '# Title\n\ntext\n\n## Part\n\nmore\n');
    const md = await s.invoke('open_markdown_file', { path: 'r.md', offset: -3 });
    assert.equal(md.result.outline.length, 2);
    assert.ok(md.result.window && 'page' in md.result.window);
    assert.deepEqual(md.result.window.page.lines.map((l) => l.text), ['## Part', '', 'more']);
    assert.match(md.text, /\(end of file\)\n\(artifact_query \{callId: "[^"]+", select: "Title\/Part"\} reads a section\)$/);
    const plain = await s.invoke('open_markdown_file', { path: 'r.md' });
    assert.equal('window' in plain.result, false);
  });
});
