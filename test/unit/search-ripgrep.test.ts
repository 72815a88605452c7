import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { getDefaultHighWaterMark } from 'node:stream';
import * as nodePath from 'node:path';
import fc from 'fast-check';
import { Policy, type Rule } from '../../src/core/policy/policy.ts';
import { isCancellation } from '../../src/core/errors.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import { contentArgs, exclusionArgs, pathArgsFor, walkThreads } from '../../src/core/search/ripgrep-args.ts';
import { ContentParser, NulSplitter, parseStderr, type ContentRecord } from '../../src/core/search/ripgrep-output.ts';
import { SearchVisibility } from '../../src/core/search/visibility.ts';
import { compileGlob } from '../../src/core/search/ripgrep-glob.ts';
import type { ContentQuery, PathQuery, SearchBatch, SearchFrame } from '../../src/core/search/port.ts';
import { tempDir, testDir } from './harness.ts';
import { SEARCH_TREE, failure, rgChildren, rgPath, unprivilegedRg, waitFor, writeTree } from './search-helpers.ts';

const never = new AbortController().signal;

async function collect(batches: AsyncIterable<SearchBatch>): Promise<SearchFrame[]> {
  const out: SearchFrame[] = [];
  for await (const batch of batches) {
    assert.ok(batch.length > 0, 'a batch is never empty');
    out.push(...batch);
  }
  return out;
}

function baseContent(cwd: string, extra: Partial<ContentQuery> = {}): ContentQuery {
  return { scopes: [{ folder: 'ws', cwd, path: '' }], policy: new Policy([]), signal: never, pattern: 'x', ...extra };
}

describe('ripgrep arguments', () => {
  const query = (extra: Partial<ContentQuery> = {}): ContentQuery => baseContent('/ws', { pattern: '-e', ...extra });

  it('passes no --max-depth flag at all when max_depth is omitted', () => {
    assert.equal(
      contentArgs(query(), [], '').some((a) => a.startsWith('--max-depth')),
      false,
    );
    assert.equal(
      pathArgsFor({ ...query(), glob: '*' }, [], '').some((a) => a.startsWith('--max-depth')),
      false,
    );
    assert.ok(pathArgsFor({ ...query(), glob: '*', maxDepth: 2 }, [], '').includes('--max-depth=2'));
    assert.ok(contentArgs(query({ maxDepth: 3 }), [], '').includes('--max-depth=3'));
  });

  it('find_files never hands its glob to rg as a --glob override, which would re-include hidden and ignored files', () => {
    const threads = (narrowed: boolean): string[] =>
      walkThreads(narrowed) === undefined ? [] : [`--threads=${walkThreads(narrowed)}`];
    // A name-only glob narrows the listing as a file type, which keeps ignore files in force; dot entries stay out unless hidden.
    // A listing prunes excluded folders; file-name exclusions are left to the policy's test of every listed path.
    // "!.*" prunes the dot-prefixed folders, the excluded ones among them: their own exclusions would only cost ripgrep time.
    assert.deepEqual(
      pathArgsFor({ ...query(), glob: '*.ts', iglob: 'A*' }, ['*.pem', '**/.ssh/**', 'keys/**'], 'src'),
      [
        '--no-config',
        '--no-ignore-messages',
        '--color=never',
        '--files',
        '--null',
        ...threads(true),
        '--type-add=wtfind:*.ts',
        '--type=wtfind',
        '--glob=!.*',
        '--iglob=!/keys',
        '--',
        'src',
      ],
    );
    // A scope inside a dot-prefixed folder is not pruned by it, nor is a hidden listing: they keep every folder exclusion.
    assert.deepEqual(pathArgsFor({ ...query(), glob: '*.ts' }, ['**/.config/secret/**'], '.config'), [
      '--no-config',
      '--no-ignore-messages',
      '--color=never',
      '--files',
      '--null',
      ...threads(true),
      '--type-add=wtfind:*.ts',
      '--type=wtfind',
      '--glob=!.*',
      '--iglob=!**/.config/secret',
      '--',
      '.config',
    ]);
    assert.deepEqual(pathArgsFor({ ...query(), glob: '*.ts', hidden: true }, ['**/.ssh/**'], ''), [
      '--no-config',
      '--no-ignore-messages',
      '--color=never',
      '--files',
      '--null',
      ...threads(true),
      '--type-add=wtfind:*.ts',
      '--type=wtfind',
      '--hidden',
      '--iglob=!**/.ssh',
      '--',
    ]);
    assert.deepEqual(pathArgsFor({ ...query(), glob: 'src/**/*.ts' }, ['*.pem'], 'src'), [
      '--no-config',
      '--no-ignore-messages',
      '--color=never',
      '--files',
      '--null',
      ...threads(false),
      '--',
      'src',
    ]);
  });

  it("walks a narrowed listing with two threads more than the cores, a listing of every file with one fewer, and one core with ripgrep's default", () => {
    assert.deepEqual(
      [1, 2, 4, 10, 64].map((cores) => walkThreads(true, cores)),
      [undefined, 4, 6, 12, 12],
    );
    assert.deepEqual(
      [1, 2, 4, 10, 64].map((cores) => walkThreads(false, cores)),
      [undefined, 1, 3, 9, 12],
    );
    assert.equal(
      contentArgs(query(), [], '').some((a) => a.startsWith('--threads')),
      false,
      "a content search keeps ripgrep's default",
    );
  });

  it('guards long lines with --max-columns and a preview, and never reads a ripgrep config file', () => {
    const args = contentArgs(query(), [], '');
    for (const flag of [
      '--max-columns=2000',
      '--max-columns-preview',
      '--no-config',
      '--null',
      '--line-number',
      '--with-filename',
    ])
      assert.ok(args.includes(flag), flag);
  });

  it('puts the policy exclusions after the caller globs as case-insensitive --iglob, the pattern in --regexp=, and the path after --', () => {
    const args = contentArgs(query({ globs: ['*.pem'], iglobs: ['*.KEY'] }), ['*.pem', 'secrets/**'], 'src/-odd');
    assert.deepEqual(args.slice(args.indexOf('--glob=*.pem')), [
      '--glob=*.pem',
      '--iglob=*.KEY',
      '--iglob=!*.pem',
      '--iglob=!/secrets',
      '--regexp=-e',
      '--',
      'src/-odd',
    ]);
  });

  it('excludes a protected folder itself, anchored like its rule (ripgrep never enters it, so nothing below needs a glob)', () => {
    assert.deepEqual(exclusionArgs(['secrets/**', '**/.ssh/**', 'a/b/**', '*.key', '!odd']), [
      '--iglob=!/secrets',
      '--iglob=!**/.ssh',
      '--iglob=!a/b',
      '--iglob=!*.key',
    ]);
  });
});

describe('ripgrep output parsing', () => {
  const stream = Buffer.concat([
    Buffer.from('src/a.ts\u00001:const a = 1;\n'),
    Buffer.from('src/a.ts: WARNING: stopped searching binary file after match (found "\\0" byte around offset 9)\n'),
    Buffer.from('new\nline.txt\u000012:has: colons\r\n'),
    Buffer.from('x.txt\u00003:' + 'y'.repeat(2000) + ' [... omitted end of long line]\n'),
    Buffer.from('lat.txt\u00007:caf\xe9\n', 'latin1'),
  ]);
  const expected: ContentRecord[] = [
    { path: 'src/a.ts', line: 1, text: 'const a = 1;', cut: false },
    { path: 'new\nline.txt', line: 12, text: 'has: colons', cut: false },
    { path: 'x.txt', line: 3, text: 'y'.repeat(2000), cut: true },
    { path: 'lat.txt', line: 7, text: 'caf\uFFFD', cut: false },
  ];

  it('reads path NUL line:text records, keeps LF inside paths, drops binary warnings, marks cut lines', () => {
    assert.deepEqual(new ContentParser('').push(stream), expected);
  });

  it('gives the same records however the stream is chunked', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }), (cuts) => {
        const parser = new ContentParser('');
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const records = points.slice(1).flatMap((end, i) => parser.push(stream.subarray(points[i], end)));
        assert.deepEqual(records, expected);
      }),
    );
  });

  it('drops the binary-file message about the explicitly searched path', () => {
    assert.deepEqual(
      new ContentParser('bin.dat').push(
        Buffer.from('bin.dat: binary file matches (found "\\0" byte around offset 3)\n'),
      ),
      [],
    );
  });

  it('splits --files --null output in any chunking', () => {
    const data = Buffer.from('a.ts\u0000dir/with\nnewline\u0000./b.ts\u0000');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: data.length }), (cut) => {
        const s = new NulSplitter();
        assert.deepEqual(
          [...s.push(data.subarray(0, cut)), ...s.push(data.subarray(cut))],
          ['a.ts', 'dir/with\nnewline', 'b.ts'],
        );
      }),
    );
  });

  it('decodes each path as it would alone, multi-byte and invalid UTF-8 included, in any chunking', () => {
    // Paths of bytes (no NUL): é, €, 😀 and bytes that are not UTF-8 (a lone lead byte, a stray continuation).
    const pieces = [[0x61], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xc3], [0x80], [0x2f], [0xff]];
    const pathBytes = fc.array(fc.constantFrom(...pieces), { maxLength: 6 }).map((p) => Buffer.from(p.flat()));
    fc.assert(
      fc.property(fc.array(pathBytes, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 4 }), (paths, cuts) => {
        const data = Buffer.concat(paths.flatMap((p) => [p, Buffer.from([0])]));
        const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
        const s = new NulSplitter();
        const got: string[] = [];
        let from = 0;
        for (const cut of [...at, data.length]) {
          got.push(...s.push(data.subarray(from, cut)));
          from = cut;
        }
        assert.deepEqual(
          got,
          paths.filter((p) => p.length > 0).map((p) => p.toString('utf8')),
        );
      }),
    );
  });

  it('sorts stderr into unreadable paths and other messages', () => {
    assert.deepEqual(
      parseStderr('rg: ./src/x.txt: Permission denied (os error 13)\nrg: regex parse error:\n    (?:a()\n'),
      {
        unreadable: [{ path: 'src/x.txt', reason: 'Permission denied (os error 13)' }],
        other: ['rg: regex parse error:', '    (?:a()'],
      },
    );
  });
});

describe('search visibility', () => {
  it('answers exactly as Policy.hidesFromSearch', () => {
    const rules: Rule[] = [
      { glob: 'private/**', read: 'deny' },
      { glob: 'docs/*.pem', read: 'allow' },
      { glob: 'build', read: 'deny' },
    ];
    const policy = new Policy(rules);
    const segment = fc.constantFrom(
      'src',
      'private',
      'docs',
      '.ssh',
      'a.pem',
      '.env',
      'id_rsa',
      'build',
      'x.ts',
      '.git',
      'config',
      'secrets.yaml',
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(segment, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 20 }),
        (paths) => {
          const visibility = new SearchVisibility(policy);
          for (const parts of paths) {
            const rel = parts.join('/');
            assert.equal(visibility.hides(rel), policy.hidesFromSearch(rel, 'read'), rel);
          }
        },
      ),
    );
  });

  it('answers exactly as Policy.hidesFromSearch where the quick tests clear most paths (name rules, a workspace folder)', () => {
    const policy = new Policy([
      { glob: '*.secret', read: 'deny' },
      { glob: 'build', read: 'ask' },
      { glob: 'ok.pem', read: 'allow' },
    ]);
    const segment = fc.constantFrom(
      'src',
      'build',
      'BUILD',
      'docs',
      '.ssh',
      'a.pem',
      'ok.pem',
      'k.secret',
      '.env',
      'id_rsa',
      'x.ts',
      '.git',
      'config',
      'secrets.yaml',
      '\u00e9t\u00e9',
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(segment, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 20 }),
        fc.constantFrom('/home/u/proj', '/home/u/.ssh/proj'),
        (paths, folder) => {
          const visibility = new SearchVisibility(policy, folder);
          for (const parts of paths) {
            const rel = parts.join('/');
            assert.equal(visibility.hides(rel), policy.hidesFromSearch(rel, 'read', folder), `${folder} ${rel}`);
          }
        },
      ),
    );
  });
});

describe('ripgrep backend', () => {
  it('throws a narrated error naming the pending containment audit when it receives follow: true, before starting rg', async () => {
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    assert.equal(search.supportsFollow, false);
    for (const call of [
      () => search.searchContent(baseContent('/nonexistent', { follow: true })),
      () => search.findPaths({ ...baseContent('/nonexistent', { follow: true }), glob: '*' }),
    ]) {
      const error = await failure(async () => collect(call()));
      assert.equal(error.code, 'E_SANDBOX_UNSUPPORTED');
      assert.match(error.message, /containment audit/);
      assert.match(error.message, /without follow/);
    }
    assert.deepEqual(rgChildren(), []);
  });

  it('refuses a bad limit or max_depth from a caller that bypasses the schemas', async () => {
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    for (const limit of [0, -1, 1.5, Infinity, NaN]) {
      const error = await failure(async () => collect(search.searchContent(baseContent('/nonexistent', { limit }))));
      assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT', String(limit));
      const depth = await failure(async () =>
        collect(search.findPaths({ ...baseContent('/nonexistent', { maxDepth: limit }), glob: '*' })),
      );
      assert.equal(depth.code, 'E_SANDBOX_INVALID_INPUT', String(limit));
    }
  });

  it('reads all that ripgrep wrote when it reads the pipe in pauses, and leaves the default high-water mark as it was', async (tc) => {
    const dir = testDir(tc);
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`d${i % 7}/f${i}.txt`] = `line\nx ${i}\n${'y'.repeat(i * 37)}\nx again\n`;
    writeTree(dir.path, files);
    const args = ['--no-config', '--line-number', '--with-filename', '--null', 'x', '--'];
    const before = getDefaultHighWaterMark(false);
    const rg = createRipgrep(rgPath()).run(args, { cwd: dir.path });
    assert.equal(getDefaultHighWaterMark(false), before);
    const chunks: Buffer[] = [];
    for await (const chunk of rg.stdout) chunks.push(chunk);
    assert.equal((await rg.exited).code, 0);
    const lines = (out: Buffer): string[] =>
      out
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')
        .sort();
    const raw = execFileSync(rgPath(), args, {
      cwd: dir.path,
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(lines(raw).length, 800);
    assert.deepEqual(lines(Buffer.concat(chunks)), lines(raw));
  });

  it('ends with done when unbounded or under the limit, and with limit only when more results exist', async (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, { 'a.txt': 'x\nx\n', 'b.txt': 'x\n' });
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    const all = await collect(search.searchContent(baseContent(dir.path)));
    assert.equal(all.filter((f) => f.kind === 'match').length, 3);
    assert.deepEqual(all.at(-1), { kind: 'done', complete: true });
    assert.equal(
      all.some((f) => f.kind === 'limit'),
      false,
    );
    const exact = await collect(search.searchContent(baseContent(dir.path, { limit: 3 })));
    assert.deepEqual(exact.at(-1), { kind: 'done', complete: true });
    const cut = await collect(search.searchContent(baseContent(dir.path, { limit: 2 })));
    assert.equal(cut.filter((f) => f.kind === 'match').length, 2);
    assert.deepEqual(cut.at(-1), { kind: 'limit', limit: 2 });
    assert.equal(
      cut.some((f) => f.kind === 'done'),
      false,
    );
  });

  it('kills rg once the limit is exceeded: no rg process is left when the call returns', async (tc) => {
    const dir = testDir(tc);
    const files: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) files[`d${i % 20}/f${i}.txt`] = 'hit\n'.repeat(50);
    writeTree(dir.path, files);
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    const frames = await collect(search.searchContent(baseContent(dir.path, { pattern: 'hit', limit: 1 })));
    assert.equal(frames.length, 2, JSON.stringify(frames));
    assert.deepEqual(frames[1], { kind: 'limit', limit: 1 });
    assert.deepEqual(rgChildren(), []);
    const early: SearchBatch[] = [];
    for await (const batch of search.findPaths({ ...baseContent(dir.path), glob: '*' })) {
      early.push(batch);
      break;
    }
    assert.equal(early.length, 1);
    assert.deepEqual(rgChildren(), []);
  });

  it('kills rg at once on abort: 200 cancelled searches leave no rg process', async (tc) => {
    const dir = testDir(tc);
    // Security/lifetime: a FIFO with no writer blocks rg forever, so every one of these is still running when aborted.
    execFileSync('mkfifo', [nodePath.join(dir.path, 'pipe')]);
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    const controllers = Array.from({ length: 200 }, () => new AbortController());
    const runs = controllers.map((c) =>
      collect(
        search.searchContent({
          ...baseContent(dir.path, { signal: c.signal }),
          scopes: [{ folder: 'ws', cwd: dir.path, path: 'pipe' }],
        }),
      ),
    );
    await waitFor(() => rgChildren().length === 200, 30_000);
    // Each rg blocks on the FIFO forever: every run settling at all shows the abort killed it.
    for (const c of controllers) c.abort();
    const settled = await Promise.allSettled(runs);
    for (const s of settled) {
      assert.equal(s.status, 'rejected');
      assert.ok(isCancellation(s.reason), String(s.reason));
    }
    assert.deepEqual(rgChildren(), []);
  });

  it('treats exit code 2 as a partial result and names the unreadable paths in notes', async (t) => {
    const rg = unprivilegedRg();
    if (!rg) {
      t.skip('cannot make a file unreadable to rg here (root without setpriv)');
      return;
    }
    const dir = tempDir();
    try {
      writeTree(dir.path, { 'ok.txt': 'needle\n', 'locked.txt': 'needle\n', 'lockdir/inner.txt': 'needle\n' });
      chmodSync(dir.path, 0o755);
      chmodSync(nodePath.join(dir.path, 'locked.txt'), 0o000);
      chmodSync(nodePath.join(dir.path, 'lockdir'), 0o000);
      const search = createRipgrepSearch(createRipgrep(rg.path));
      const frames = await collect(search.searchContent(baseContent(dir.path, { pattern: 'needle' })));
      const notes = frames.filter((f) => f.kind === 'note');
      assert.deepEqual(
        frames.filter((f) => f.kind === 'match'),
        [{ kind: 'match', folder: 'ws', path: 'ok.txt', line: 1, text: 'needle' }],
      );
      assert.deepEqual(notes.map((n) => n.path).sort(), ['lockdir', 'locked.txt']);
      for (const n of notes)
        assert.match(
          n.message,
          /could not read this path \(Permission denied \(os error 13\)\); any results in it are missing/,
        );
      assert.deepEqual(frames.at(-1), { kind: 'done', complete: true });
    } finally {
      chmodSync(nodePath.join(dir.path, 'lockdir'), 0o755);
      dir.dispose();
      rg.dispose();
    }
  });

  it('narrates an invalid regex quoting ripgrep, and an invalid glob of the caller', async (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, { 'a.txt': 'a(\n' });
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    const regex = await failure(() => collect(search.searchContent(baseContent(dir.path, { pattern: 'a(' }))));
    assert.equal(regex.code, 'E_SANDBOX_INVALID_INPUT');
    assert.match(
      regex.message,
      /not a valid regular expression; ripgrep says:\nregex parse error:[\s\S]*unclosed group/,
    );
    assert.match(regex.message, /pass literal: true/);
    const literal = await collect(search.searchContent(baseContent(dir.path, { pattern: 'a(', literal: true })));
    assert.equal(literal.filter((f) => f.kind === 'match').length, 1);
    const glob = await failure(() => collect(search.searchContent(baseContent(dir.path, { globs: ['a{'] }))));
    assert.equal(glob.code, 'E_SANDBOX_INVALID_INPUT');
    assert.match(glob.message, /The glob "a\{" is not valid; ripgrep says: error parsing glob/);
    const findGlob = await failure(() => collect(search.findPaths({ ...baseContent(dir.path), glob: 'a{' })));
    assert.equal(findGlob.code, 'E_SANDBOX_INVALID_INPUT');
    assert.match(findGlob.message, /The glob "a\{" is not valid: a "\{" has no closing "\}"/);
  });

  it('reports a missing rg binary as a narrated io failure', async (tc) => {
    const dir = testDir(tc);
    const search = createRipgrepSearch(createRipgrep(nodePath.join(dir.path, 'no-such-rg')));
    const error = await failure(() => collect(search.findPaths({ ...baseContent(dir.path), glob: '*' })));
    assert.equal(error.code, 'E_SANDBOX_IO');
    assert.match(error.message, /ripgrep could not be started/);
  });
});

describe('parity with raw rg on the same flags', () => {
  const tree: Record<string, string> = {
    ...SEARCH_TREE,
    '.env': 'Alpha=1\n',
    'keys/server.pem': 'Alpha pem\n',
    'private/plan.txt': 'Alpha private\n',
    'private/sub/x.md': 'alpha private md\n',
  };
  const rules: Rule[] = [{ glob: 'private/**', read: 'deny' }];
  type Flags = {
    pattern?: string;
    ignore_case?: boolean;
    literal?: boolean;
    hidden?: boolean;
    no_ignore?: boolean;
    max_depth?: number;
    glob?: string;
    iglob?: string;
  };
  const combos: Flags[] = [
    {},
    { hidden: true },
    { no_ignore: true },
    { hidden: true, no_ignore: true },
    { ignore_case: true },
    { max_depth: 1 },
    { max_depth: 2, hidden: true },
    { glob: '*.md' },
    { iglob: '*.md' },
    { glob: '!*.ts' },
    { pattern: 'a.b' },
    { pattern: 'a.b', literal: true },
    { glob: '*.pem', hidden: true, no_ignore: true },
  ];

  function rawFlags(f: Flags): string[] {
    return [
      ...(f.ignore_case ? ['-i'] : []),
      ...(f.literal ? ['-F'] : []),
      ...(f.hidden ? ['--hidden'] : []),
      ...(f.no_ignore ? ['--no-ignore'] : []),
      ...(f.max_depth !== undefined ? ['--max-depth', String(f.max_depth)] : []),
      ...(f.glob ? ['-g', f.glob] : []),
      ...(f.iglob ? ['--iglob', f.iglob] : []),
    ];
  }

  it('search_files: the same matching lines as rg, less what the policy hides', async (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, tree);
    const policy = new Policy(rules);
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    for (const f of combos) {
      const pattern = f.pattern ?? 'alpha';
      const raw = spawnSync(
        rgPath(),
        ['--no-config', '--null', '--no-heading', '--with-filename', '--line-number', ...rawFlags(f), '-e', pattern],
        { cwd: dir.path, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
      assert.ok(raw.status === 0 || raw.status === 1, raw.stderr);
      const expected = raw.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace('\0', ':'))
        .filter((l) => !policy.hidesFromSearch(l.slice(0, l.indexOf(':')), 'read'))
        .sort();
      const frames = await collect(
        search.searchContent({
          ...baseContent(dir.path, { pattern }),
          policy,
          ignoreCase: f.ignore_case,
          literal: f.literal,
          hidden: f.hidden,
          noIgnore: f.no_ignore,
          maxDepth: f.max_depth,
          globs: f.glob ? [f.glob] : [],
          iglobs: f.iglob ? [f.iglob] : [],
        }),
      );
      const ours = frames.flatMap((m) => (m.kind === 'match' ? [`${m.path}:${m.line}:${m.text}`] : [])).sort();
      assert.deepEqual(ours, expected, JSON.stringify(f));
      assert.deepEqual(frames.at(-1), { kind: 'done', complete: true });
    }
  });

  it('find_files: the paths rg --files lists with the same flags that rg -g also matches, less what the policy hides', async (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, tree);
    const policy = new Policy(rules);
    const search = createRipgrepSearch(createRipgrep(rgPath()));
    const raw = (args: string[]): Set<string> => {
      const r = spawnSync(rgPath(), ['--no-config', '--files', ...args], { cwd: dir.path, encoding: 'utf8' });
      assert.ok(r.status === 0 || r.status === 1, r.stderr);
      return new Set(r.stdout.split('\n').filter(Boolean));
    };
    const globs: (Flags & { find: string })[] = [
      { find: '*' },
      { find: '*', hidden: true },
      { find: '*', hidden: true, no_ignore: true },
      { find: '*.md' },
      { find: '*', iglob: '*.MD' },
      { find: 'src/**/*.ts', max_depth: 2 },
      { find: '*.pem', hidden: true },
      { find: '**', hidden: true, no_ignore: true, max_depth: 1 },
      { find: '*.log', no_ignore: true },
      { find: '*.log' },
      { find: 'ignored/*' },
      { find: '.*', hidden: true },
    ];
    for (const f of globs) {
      // rg's -g is an override that re-includes hidden and ignored files, so the oracle is an intersection:
      // what rg lists with the flags alone, that rg -g would also match.
      const walk = raw(rawFlags({ ...f, glob: undefined, iglob: undefined }));
      const matched = raw(['--hidden', '--no-ignore', ...rawFlags({ max_depth: f.max_depth }), '-g', f.find]);
      const imatched =
        f.iglob === undefined
          ? matched
          : raw(['--hidden', '--no-ignore', ...rawFlags({ max_depth: f.max_depth }), '--iglob', f.iglob]);
      const expected = [...walk]
        .filter((p) => matched.has(p) && imatched.has(p) && !policy.hidesFromSearch(p, 'read'))
        .sort();
      const frames = await collect(
        search.findPaths({
          ...baseContent(dir.path),
          policy,
          glob: f.find,
          iglob: f.iglob,
          hidden: f.hidden,
          noIgnore: f.no_ignore,
          maxDepth: f.max_depth,
        }),
      );
      const ours = frames.flatMap((p) => (p.kind === 'path' ? [p.path] : [])).sort();
      assert.deepEqual(ours, expected, JSON.stringify(f));
    }
  });
});

describe('find_files globs match as ripgrep --glob does', () => {
  it('agrees with rg -g on every listed path, for a spread of glob syntax', (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, {
      'a.ts': '',
      'a.js': '',
      'b.tsx': '',
      'README.md': '',
      'readme.txt': '',
      'x{y}.txt': '',
      'star*.txt': '',
      'br[a].txt': '',
      'src/a.ts': '',
      'src/util/b.ts': '',
      'src/util/deep/c.ts': '',
      'docs/x.md': '',
      'docs/sub/y.MD': '',
      'src/docs/z.md': '',
      '.hidden/h.ts': '',
      '.h.ts': '',
    });
    const files = spawnSync(rgPath(), ['--no-config', '--files', '--hidden'], { cwd: dir.path, encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
    const globs = [
      '*',
      '**',
      '*.ts',
      '*.{ts,tsx}',
      '*.[!t]s',
      '*.[^j]s',
      '*.[a-j]s',
      '?.ts',
      'src/*.ts',
      'src/**',
      'src/**/*.ts',
      '**/util/*',
      '**/util/**',
      'src/**/c.ts',
      '/a.ts',
      '/*.md',
      'docs',
      'docs/',
      'docs/**',
      '**/docs/*.md',
      '!*.ts',
      '!src/**',
      'a**',
      'x\\{y\\}.txt',
      'star\\*.txt',
      'br[[]a].txt',
      'README.*',
      '{a,{b,docs/**/*}}.{ts,md,MD}',
      '.*',
      '**/.*',
      '*/*.md',
    ];
    for (const glob of globs) {
      for (const caseInsensitive of [false, true]) {
        const r = spawnSync(
          rgPath(),
          ['--no-config', '--files', '--hidden', caseInsensitive ? '--iglob' : '--glob', glob],
          { cwd: dir.path, encoding: 'utf8' },
        );
        assert.ok(r.status === 0 || r.status === 1, `${glob}: ${r.stderr}`);
        const expected = r.stdout.split('\n').filter(Boolean).sort();
        const matches = compileGlob(glob, { caseInsensitive });
        assert.deepEqual(
          files.filter((f) => matches(f)).sort(),
          expected,
          `${caseInsensitive ? 'iglob' : 'glob'} ${glob}`,
        );
      }
    }
  });

  it('agrees with rg -g on random globs built from the syntax pieces', (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, {
      'a.ts': '',
      'ab.md': '',
      'src/a.ts': '',
      'src/b/ab.md': '',
      'docs/a.b': '',
      '.a/b.ts': '',
      'b/a/src/x.md': '',
    });
    const files = spawnSync(rgPath(), ['--no-config', '--files', '--hidden'], { cwd: dir.path, encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
    const piece = fc.constantFrom(
      '*',
      '**',
      '?',
      'a',
      'b',
      '.',
      '/',
      '{a,b}',
      '{src/*,b}',
      '[ab]',
      '[!a]',
      'ts',
      'md',
      'src',
      '!',
      '\\*',
      '\\.',
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.boolean(), (pieces, caseInsensitive) => {
        const glob = pieces.join('');
        const r = spawnSync(
          rgPath(),
          ['--no-config', '--files', '--hidden', caseInsensitive ? '--iglob' : '--glob', glob],
          { cwd: dir.path, encoding: 'utf8' },
        );
        let matches: ((p: string) => boolean) | undefined;
        try {
          matches = compileGlob(glob, { caseInsensitive });
        } catch {
          matches = undefined;
        }
        if (r.status === 2) {
          assert.equal(matches, undefined, `rg rejects ${glob}: ${r.stderr}`);
          return;
        }
        // A glob of only "!" and "/" means nothing; it is refused rather than matched silently.
        if (!matches) {
          assert.match(glob, /^!?\/*$/, `rg accepts ${glob}`);
          return;
        }
        assert.deepEqual(files.filter((f) => matches(f)).sort(), r.stdout.split('\n').filter(Boolean).sort(), glob);
      }),
      { numRuns: 150 },
    );
  });

  it('rejects what ripgrep rejects, with a narrated error', () => {
    for (const [glob, why] of [
      ['a{', /"\{" has no closing "\}"/],
      ['[abc', /"\[" has no closing "\]"/],
      ['a\\', /lone "\\"/],
      ['a}', /has no opening/],
    ] as const) {
      assert.throws(
        () => compileGlob(glob),
        (e: unknown) =>
          e instanceof Error && (e as { code?: string }).code === 'E_SANDBOX_INVALID_INPUT' && why.test(e.message),
        glob,
      );
      const r = spawnSync(rgPath(), ['--no-config', '--files', '-g', glob], { encoding: 'utf8' });
      assert.equal(r.status, 2, glob);
    }
  });
});

describe('ripgrep never lists protected folders', () => {
  it('a denied folder is excluded itself, so rg does not even read the ignore files inside it', async (tc) => {
    const dir = testDir(tc);
    // An ignore file with a broken glob: if rg read it, it would complain on stderr (exit 2).
    writeTree(dir.path, {
      'private/.ignore': 'bad{\n',
      'private/x.txt': 'needle\n',
      'src/private/y.txt': 'needle\n',
      'ok.txt': 'needle\n',
    });
    const policy = new Policy([{ glob: 'private/**', read: 'deny' }]);
    const query: PathQuery = { ...baseContent(dir.path), policy, glob: '*', hidden: true };
    const raw = spawnSync(
      rgPath(),
      ['--no-config', '--files', '--hidden', ...exclusionArgs(policy.searchExclusions('read'))],
      { cwd: dir.path, encoding: 'utf8' },
    );
    assert.equal(raw.stderr, '');
    const frames = await collect(createRipgrepSearch(createRipgrep(rgPath())).findPaths(query));
    assert.deepEqual(frames.flatMap((p) => (p.kind === 'path' ? [p.path] : [])).sort(), [
      'ok.txt',
      'src/private/y.txt',
    ]);
  });

  it('a denied dot-prefixed folder is pruned by "!.*" when find_files has no exclusion of its own for it, even where a .gitignore re-includes it', async (tc) => {
    const dir = testDir(tc);
    writeTree(dir.path, {
      '.gitignore': '!.vault/\n',
      '.vault/.ignore': 'bad{\n',
      '.vault/x.txt': 'x\n',
      'a/.vault/.ignore': 'bad{\n',
      'a/.vault/y.txt': 'y\n',
      'a/ok.txt': 'ok\n',
      'ok.txt': 'ok\n',
    });
    const policy = new Policy([{ glob: '**/.vault/**', read: 'deny' }]);
    const args = pathArgsFor({ ...baseContent(dir.path), policy, glob: '*.txt' }, policy.searchExclusions('read'), '');
    assert.equal(
      args.some((a) => a.includes('.vault')),
      false,
      'no exclusion of its own',
    );
    const raw = spawnSync(rgPath(), args, { cwd: dir.path, encoding: 'utf8' });
    assert.equal(raw.stderr, '', 'rg read no ignore file inside the denied folders');
    const frames = await collect(
      createRipgrepSearch(createRipgrep(rgPath())).findPaths({ ...baseContent(dir.path), policy, glob: '*.txt' }),
    );
    assert.deepEqual(frames.flatMap((p) => (p.kind === 'path' ? [p.path] : [])).sort(), ['a/ok.txt', 'ok.txt']);
  });
});
