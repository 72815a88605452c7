import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS, type ToolResult } from '../../src/core/tools/index.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import { SandboxError, type Narration } from '../../src/core/errors.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import type { ListedEntry } from '../../src/core/tools/list_directory.ts';
import type { ArtifactHandle } from '../../src/core/artifacts/types.ts';
import type { Gate } from '../../src/core/ports.ts';
import type { GateCall } from '../../src/core/gate.ts';
import { ofKind, session, tempDir, type TestSession, testSession, wholeResult, runTool } from './harness.ts';
import { rgPath, writeTree } from './search-helpers.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

/**
 * Canary secrets: a workspace whose secret files (asked: `.env`, keys, `.ssh`, `.git/config`) and
 * denied folder (`private/**`) each hold a unique canary. Every read, search and list tool is called
 * with every flag combination, through a gate that declines every protected path the way the person
 * declines VS Code's modal. No canary byte and no denied name may reach any output (result JSON,
 * rendered text, error message) or the audit log. Successful searches are compared with raw ripgrep
 * on a twin tree that holds only the normal files: the tools must behave as if the secrets did not exist.
 */

const tag = (): string => randomBytes(8).toString('hex');

const CANARY = {
  env: `CANARY_ENV_${tag()}`,
  envLocal: `CANARY_ENVLOCAL_${tag()}`,
  rsa: `CANARY_RSA_${tag()}`,
  pem: `CANARY_PEM_${tag()}`,
  ssh: `CANARY_SSH_${tag()}`,
  git: `CANARY_GIT_${tag()}`,
  payroll: `CANARY_PAYROLL_${tag()}`,
  merger: `CANARY_MERGER_${tag()}`,
};
/** Every canary, and its random part alone (a leak may cut the prefix off). */
const CANARY_TOKENS = Object.values(CANARY).flatMap((c) => [c, c.slice(c.lastIndexOf('_') + 1)]);

const PAYROLL = `payroll-${randomBytes(2).toString('hex')}.csv`;
const MERGER = `merger-${randomBytes(2).toString('hex')}.md`;
/** Names inside (and of) the denied folder: they must never reach the model unless it named them itself. */
const DENIED_NAMES = ['private', 'payroll', 'boardroom', 'merger'];
/** Names of the asked secrets: listed by list_directory by design, but never by a search or find. */
const SECRET_NAMES = ['.env', 'id_rsa', 'secret.pem', '.ssh', '.git/config', 'env.local'];

const SECRETS: Record<string, string> = {
  '.env': `API_KEY=${CANARY.env}\n`,
  'src/.env.local': `DB_PASSWORD=${CANARY.envLocal}\n`,
  id_rsa: `-----BEGIN OPENSSH PRIVATE KEY-----\n${CANARY.rsa}\n-----END OPENSSH PRIVATE KEY-----\n`,
  'config/secret.pem': `-----BEGIN CERTIFICATE-----\n${CANARY.pem}\n-----END CERTIFICATE-----\n`,
  '.ssh/config': `Host prod\n  IdentityFile ~/.ssh/${CANARY.ssh}\n`,
  '.git/config': `[remote "origin"]\n  url = https://deploy:${CANARY.git}@example.invalid/x.git\n`,
  [`private/${PAYROLL}`]: `name,salary\nalice,${CANARY.payroll}\n`,
  [`private/boardroom/${MERGER}`]: `# Merger\n\n${CANARY.merger}\n`,
};

/** Normal files, some of which look like what the probes search for (so each probe has real hits to find). */
const NORMAL: Record<string, string> = {
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.gitignore': 'build/\n',
  'README.md': '# Demo\n\nA canary demo; nothing secret here.\n',
  'src/app.ts': "export const CANARY_DECOY = 'decoy';\nexport const answer = 42;\n",
  'src/lib/util.ts': "export const sha = '0123456789abcdef0123';\nexport const banner = 'BEGIN here';\n",
  'config/app.json': '{\n  "name": "demo",\n  "port": 8080,\n  "nested": { "key": "value", "list": [1, 2, 3] }\n}\n',
  'docs/guide.md': '# Guide\n\nIntro text.\n\n## Setup\n\nRun `npm i`; see canary notes.\n\n## Usage\n\nCall it.\n',
  '.vscode/settings.json': '{ "editor.tabSize": 2, "note": "canary_decoy hidden" }\n',
  'build/out.txt': 'CANARY_DECOY built\nBEGIN build\n',
  'notes.txt': 'plain notes\nline two\n',
};

/** Links with innocent names to the protected places (dangling in the twin, where rg skips them all the same). */
const LINKS: Record<string, string> = {
  'env-link': '.env',
  'pem-link': 'config/secret.pem',
  keys: '.ssh',
  vault: 'private',
};

const RULES = [{ glob: 'private/**', read: 'deny' as const }];

function plant(root: string, withSecrets: boolean): void {
  writeTree(root, { ...NORMAL, ...(withSecrets ? SECRETS : {}), '.ssh/': '', 'private/boardroom/': '' });
  for (const [link, target] of Object.entries(LINKS)) symlinkSync(target, nodePath.join(root, link));
}

/** The person declines every protected path, as in VS Code's modal; everything else is allowed. */
const declineSecrets: Gate & { declined: number } = Object.assign(
  async (call: Parameters<Gate>[0]) => {
    const secret = call.targets.find((t) => t.action === 'ask');
    if (!secret) return { allow: true, decidedBy: 'person' as const };
    declineSecrets.declined++;
    return { allow: false, decidedBy: 'person' as const, reason: declinedReason(call.tool, secret.display) };
  },
  { declined: 0 },
);

function declinedReason(tool: string, display: string): Narration {
  return {
    what: `The user declined ${tool} on the protected file "${display}".`,
    next: 'Do not retry or look for its contents another way; ask the user for what you need.',
  };
}

function declinedMessage(tool: string, display: string): string {
  const { what, next } = declinedReason(tool, display);
  return `${what} ${next}`;
}

let t: TestSession;
let twin: { path: string; dispose(): void };
let rg: string;
let cases = 0;
let ruleNamed = 0;
/** Every target an input named (as displayed), so the audit log can be checked for anything else. */
const namedTargets = new Set<string>(['.']);

before(() => {
  rg = rgPath();
  const ripgrep = createRipgrep(rg);
  t = testSession({ rules: RULES, overrides: { search: createRipgrepSearch(ripgrep), ripgrep, gate: declineSecrets } });
  plant(t.root, true);
  twin = tempDir('wt-twin-');
  plant(twin.path, false);
});

after(async () => {
  await t.dispose();
  twin.dispose();
});

interface Outcome<R = unknown> {
  readonly ok: true;
  readonly result: R;
  readonly text: string;
}
interface Failure {
  readonly ok: false;
  readonly code: string;
  readonly message: string;
}

/** One call through the whole pipeline, as the chat invokes it, with the leak checks every output gets. */
async function call<N extends ToolName>(
  tool: N,
  input: Record<string, unknown>,
): Promise<Outcome<ToolResult<N>> | Failure> {
  cases++;
  if (typeof input['path'] === 'string')
    namedTargets.add(input['path'].replace(/^\.\//, '').replace(/\/+$/, '') || '.');
  let out: Outcome<ToolResult<N>> | Failure;
  try {
    const outcome = await t.invoke(tool, input, { signal: new AbortController().signal, origin: 'chat' });
    out = { ok: true, result: outcome.result, text: outcome.text };
  } catch (e) {
    assert.ok(e instanceof SandboxError, `${tool} ${JSON.stringify(input)} threw ${String(e)}`);
    out = { ok: false, code: e.code, message: e.message };
  }
  const shown = out.ok ? `${JSON.stringify(out.result)}\n${out.text}` : out.message;
  assertNoLeak(tool, input, shown);
  return out;
}

/**
 * No canary anywhere; no denied name unless the model named it itself (its own words may come back,
 * as in "refused by the rule"); and from search and find, no secret's name either.
 */
function assertNoLeak(tool: ToolName, input: Record<string, unknown>, shown: string): void {
  const said = JSON.stringify(input);
  const label = `${tool} ${said}`;
  for (const token of CANARY_TOKENS) {
    if (!said.includes(token)) assert.equal(shown.includes(token), false, `${label} leaked canary ${token}:\n${shown}`);
  }
  // A refusal names the rule it ran into (so the person can be asked to change it), and a rule's glob
  // may spell a protected name: "private/**", "**/.ssh/**". The rules are settings, not secrets.
  const withoutRule = shown.replace(/the rule "[^"]*"/g, 'the rule');
  if (withoutRule !== shown) ruleNamed++;
  for (const name of DENIED_NAMES) {
    if (!said.includes(name))
      assert.equal(withoutRule.includes(name), false, `${label} leaked denied name ${name}:\n${shown}`);
  }
  if (tool === 'search_files' || tool === 'find_files') {
    for (const name of SECRET_NAMES) {
      if (!said.includes(name))
        assert.equal(withoutRule.includes(name), false, `${label} leaked secret name ${name}:\n${shown}`);
    }
  }
}

function expectFailure(out: Outcome | Failure, code: string, message: string, label: string): void {
  assert.equal(out.ok, false, `${label} succeeded: ${out.ok ? out.text : ''}`);
  if (!out.ok) assert.deepEqual({ code: out.code, message: out.message }, { code, message }, label);
}

/** Paths aimed at the protected places, and how each must be refused (undefined: it is allowed). */
function refusalFor(tool: ToolName, path: string | undefined): { code: string; message: string } | undefined {
  if (path === undefined) return undefined;
  const display = path.replace(/^\.\//, '').replace(/\/+$/, '');
  if (display === 'private' || display.startsWith('private/')) {
    return {
      code: 'E_SANDBOX_REFUSED',
      message: `${tool} on "${display}" was refused by the rule "private/**" (read denied). Do not retry this path; work with other files or ask the user to change workspaceTools.rules.`,
    };
  }
  if (
    [
      '.ssh',
      '.ssh/config',
      '.env',
      '.env.local',
      'id_rsa',
      'config/secret.pem',
      'src/.env.local',
      '.git/config',
    ].includes(display)
  ) {
    return { code: 'E_SANDBOX_REFUSED', message: declinedMessage(tool, display) };
  }
  const link: Record<string, [string, string]> = {
    'env-link': ['.env', 'ask'],
    'pem-link': ['*.pem', 'ask'],
    keys: ['**/.ssh/**', 'ask'],
    vault: ['private/**', 'deny'],
  };
  const via = link[display] ?? link[display.split('/')[0]!];
  if (via)
    return {
      code: 'E_SANDBOX_REFUSED',
      message: `"${display}" is a link to a path that the rule "${via[0]}" protects (${via[1]} for read). Use the real path so the user is asked about it.`,
    };
  return undefined;
}

/** Paths the search and list tools are pointed at: the protected places, links to them, and ordinary folders. */
const FOLDER_PATHS: (string | undefined)[] = [
  undefined,
  '.',
  'src',
  'config',
  'build',
  '.vscode',
  '.git',
  'private',
  'private/boardroom',
  './private',
  'private/',
  '.ssh',
  'keys',
  'vault',
  'vault/boardroom',
  '.env',
  'id_rsa',
  'config/secret.pem',
  'src/.env.local',
  '.git/config',
  'env-link',
  'pem-link',
];

function* grid<T extends Record<string, readonly unknown[]>>(axes: T): Generator<{ [K in keyof T]: T[K][number] }> {
  const keys = Object.keys(axes) as (keyof T)[];
  const walk = function* (
    i: number,
    acc: Partial<{ [K in keyof T]: T[K][number] }>,
  ): Generator<{ [K in keyof T]: T[K][number] }> {
    if (i === keys.length) {
      yield acc as { [K in keyof T]: T[K][number] };
      return;
    }
    for (const v of axes[keys[i]!]!) yield* walk(i + 1, { ...acc, [keys[i]!]: v });
  };
  yield* walk(0, {});
}

/** Drops undefined values, so an omitted flag is really omitted. */
function defined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/** Runs `fn` over `items`, `width` at a time (ripgrep start-up dominates a call, so several overlap well). */
async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * max_depth × limit. `npm test` spreads the nine pairs over the other axes (every pair meets every
 * target); WT_HARDENING_FULL=1 crosses them with everything (nine times the calls).
 */
const FULL = process.env['WT_HARDENING_FULL'] === '1';
const BOUNDS: [number | undefined, number | undefined][] = [
  [undefined, undefined],
  [1, undefined],
  [2, undefined],
  [undefined, 1],
  [1, 1],
  [2, 1],
  [undefined, 100],
  [1, 100],
  [2, 100],
];

const rgMemo = new Map<string, Promise<string[]>>();

/** Raw ripgrep in the twin, once per distinct command line. */
function rgLines(args: string[]): Promise<string[]> {
  const key = args.join('\0');
  let lines = rgMemo.get(key);
  if (!lines) {
    lines = rgSpawn(args);
    rgMemo.set(key, lines);
  }
  return lines;
}

/** stdin is closed: with a readable stdin and no path, rg would search stdin. */
function rgSpawn(args: string[], cwd = twin.path): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(rg, ['--no-config', '--color=never', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    // 1 = nothing matched; 2 = "no files were searched" when a glob excludes everything.
    child.on('close', (code) =>
      code !== null && code <= 2
        ? resolve(Buffer.concat(out).toString('utf8').split('\n').filter(Boolean))
        : reject(new Error(`rg ${args.join(' ')} exited ${code}`)),
    );
  });
}

function scopeArgs(path: string | undefined): string[] {
  return path === undefined || path === '.' ? [] : ['--', path];
}

function traversal(input: {
  hidden?: boolean | undefined;
  no_ignore?: boolean | undefined;
  max_depth?: number | undefined;
}): string[] {
  return [
    ...(input.max_depth !== undefined ? [`--max-depth=${input.max_depth}`] : []),
    ...(input.hidden ? ['--hidden'] : []),
    ...(input.no_ignore ? ['--no-ignore'] : []),
  ];
}

test('canary: search_files with every flag combination finds exactly what raw rg finds in the secret-free twin, and leaks nothing', async () => {
  // Probes that find every secret file when ripgrep searches the real tree unguarded (checked first),
  // and lines of normal files too, so a comparison with the twin has hits to compare.
  const PATTERNS = [
    { literal: false, pattern: 'CANARY_[A-Z]+|BEGIN|[0-9a-f]{16}', js: /CANARY_[A-Z]+|BEGIN|[0-9a-f]{16}/ },
    { literal: true, pattern: 'CANARY_', js: /CANARY_/ },
  ];
  for (const { literal, pattern } of PATTERNS) {
    const unguarded = await rgSpawn(
      [
        '--files-with-matches',
        '--hidden',
        '--no-ignore',
        ...(literal ? ['--fixed-strings'] : []),
        `--regexp=${pattern}`,
      ],
      t.root,
    );
    for (const secret of Object.keys(SECRETS))
      assert.ok(unguarded.includes(secret), `probe ${pattern} misses ${secret} even unguarded`);
  }
  const TARGETS: Record<string, unknown>[] = [
    {},
    ...[
      '.env',
      '*.pem',
      'id_*',
      '.ssh/**',
      '**/.ssh/*',
      '.git/config',
      'private/**',
      '**/private/**',
      '*.csv',
      '**',
      '*',
      '!src/**',
      '{.env,id_rsa}',
      '.env*',
      'vault/**',
    ].map((glob) => ({ glob })),
    ...['.ENV', '*.PEM', 'ID_RSA', 'PRIVATE/**', '.SSH/CONFIG', '**/*.CSV', '.GIT/CONFIG'].map((iglob) => ({ iglob })),
    { glob: '*.ts', iglob: '.ENV' },
    { glob: '.env', iglob: '*.PEM' },
    { glob: '!*.ts', iglob: 'ID_*' },
    ...FOLDER_PATHS.filter((p) => p !== undefined).map((path) => ({ path })),
    { path: 'config', glob: '*.pem' },
    { path: 'src', glob: '.env*' },
    { path: '.', glob: 'private/**' },
    { path: '.git', glob: 'config' },
  ];
  const calls: Record<string, unknown>[] = [];
  TARGETS.forEach((target, j) => {
    for (const [i, { mode, ignore_case, hidden, no_ignore }] of [
      ...grid({ mode: PATTERNS, ignore_case: [false, true], hidden: [false, true], no_ignore: [false, true] }),
    ].entries()) {
      for (const [max_depth, limit] of FULL ? BOUNDS : [BOUNDS[(i + j) % BOUNDS.length]!]) {
        calls.push(
          defined({
            literal: mode.literal,
            pattern: mode.pattern,
            ignore_case,
            hidden,
            no_ignore,
            ...target,
            max_depth,
            limit,
          }),
        );
      }
    }
  });
  let found = 0;
  let refused = 0;
  await pool(calls, 8, async (input) => {
    const label = JSON.stringify(input);
    const out = await call('search_files', input);
    const path = input['path'] as string | undefined;
    const refusal = refusalFor('search_files', path);
    if (refusal) {
      expectFailure(out, refusal.code, refusal.message, label);
      refused++;
      return;
    }
    assert.ok(out.ok, `${label}: ${out.ok ? '' : out.message}`);
    const frames = wholeResult(out.result);
    // The twin's files that rg would search with these flags, grepped here: the expected matching lines.
    const files = await rgLines([
      '--files',
      ...traversal(input),
      ...(input['glob'] !== undefined ? [`--glob=${String(input['glob'])}`] : []),
      ...(input['iglob'] !== undefined ? [`--iglob=${String(input['iglob'])}`] : []),
      ...scopeArgs(path),
    ]);
    const probe = PATTERNS.find((p) => p.pattern === input['pattern'])!.js;
    const re = new RegExp(probe.source, input['ignore_case'] ? 'i' : '');
    const expected = files
      .flatMap((file) => {
        const text = readFileSync(nodePath.join(twin.path, file), 'utf8');
        return (text.endsWith('\n') ? text.slice(0, -1) : text)
          .split('\n')
          .flatMap((line, i) => (re.test(line) ? [`${file}:${i + 1}:${line}`] : []));
      })
      .sort();
    const got = frames.flatMap((f) => (f.kind === 'match' ? [`${f.path}:${f.line}:${f.text}`] : []));
    const limit = input['limit'] as number | undefined;
    if (limit !== undefined && expected.length > limit) {
      assert.equal(got.length, limit, label);
      for (const hit of got) assert.ok(expected.includes(hit), `${label}: ${hit} is not in the twin`);
      assert.deepEqual(frames.at(-1), { kind: 'limit', limit }, label);
    } else {
      assert.deepEqual([...got].sort(), expected, label);
      assert.deepEqual(frames.at(-1), { kind: 'done', complete: true }, label);
    }
    // A note about a path names only the path the model gave (a protected scope it was told is skipped).
    for (const f of frames) if (f.kind === 'note' && f.path !== undefined) assert.equal(f.path, path, label);
    found += got.length;
  });
  console.log(
    `canary search_files: ${calls.length} cases (${PATTERNS.length} literal/regex × ignore_case × hidden × no_ignore × ${TARGETS.length} globs/paths, max_depth × limit ${FULL ? 'crossed' : 'spread'}), ${refused} refused, ${found} hits, all on normal files`,
  );
  assert.ok(found > 100, `the probes found only ${found} normal lines: the comparison would prove little`);
});

test('canary: find_files with every flag combination lists exactly what raw rg lists in the secret-free twin, and leaks nothing', async () => {
  const GLOBS = [
    '*',
    '**',
    '.*',
    '.env',
    '*.pem',
    'id_*',
    '.ssh/*',
    '**/.ssh/**',
    'config',
    '**/config',
    '.git/**',
    'private/**',
    '**/private/**',
    '*.csv',
    '*.md',
    '!*.ts',
    '{.env,id_rsa,*.pem}',
    '.env*',
    'payroll*',
    'vault/**',
  ];
  const IGLOBS = ['*.PEM', 'ID_RSA', '.ENV*', 'PRIVATE/**', '**/CONFIG', '.SSH/*'];
  const TARGETS: Record<string, unknown>[] = [
    ...GLOBS.map((glob) => ({ glob })),
    ...IGLOBS.flatMap((iglob) => [
      { glob: '*', iglob },
      { glob: '.*', iglob },
      { glob: '!*.md', iglob },
    ]),
    ...FOLDER_PATHS.flatMap((path) =>
      path === undefined
        ? []
        : [
            { glob: '*', path },
            { glob: '*.pem', path },
            { glob: '.*', path },
          ],
    ),
  ];
  const calls: Record<string, unknown>[] = [];
  TARGETS.forEach((target, j) => {
    for (const [i, { hidden, no_ignore }] of [...grid({ hidden: [false, true], no_ignore: [false, true] })].entries()) {
      for (const [max_depth, limit] of FULL ? BOUNDS : [BOUNDS[(i * 2 + j) % BOUNDS.length]!])
        calls.push(defined({ ...target, hidden, no_ignore, max_depth, limit }));
    }
  });
  let listed = 0;
  let refused = 0;
  await pool(calls, 8, async (input) => {
    const label = JSON.stringify(input);
    const out = await call('find_files', input);
    const path = input['path'] as string | undefined;
    const refusal = refusalFor('find_files', path);
    if (refusal) {
      expectFailure(out, refusal.code, refusal.message, label);
      refused++;
      return;
    }
    assert.ok(out.ok, `${label}: ${out.ok ? '' : out.message}`);
    const frames = wholeResult(out.result);
    // find_files lists what `rg --files` lists with the flags, narrowed by the glob as `rg -g` matches it.
    const listing = new Set(await rgLines(['--files', ...traversal(input), ...scopeArgs(path)]));
    const byGlob = new Set(
      await rgLines(['--files', '--hidden', '--no-ignore', `--glob=${String(input['glob'])}`, ...scopeArgs(path)]),
    );
    const byIglob =
      input['iglob'] === undefined
        ? byGlob
        : new Set(
            await rgLines([
              '--files',
              '--hidden',
              '--no-ignore',
              `--iglob=${String(input['iglob'])}`,
              ...scopeArgs(path),
            ]),
          );
    const expected = [...listing].filter((p) => byGlob.has(p) && byIglob.has(p)).sort();
    const got = frames.flatMap((f) => (f.kind === 'path' ? [f.path] : []));
    const limit = input['limit'] as number | undefined;
    if (limit !== undefined && expected.length > limit) {
      assert.equal(got.length, limit, label);
      for (const p of got) assert.ok(expected.includes(p), `${label}: ${p} is not in the twin`);
      assert.deepEqual(frames.at(-1), { kind: 'limit', limit }, label);
    } else {
      assert.deepEqual([...got].sort(), expected, label);
      assert.deepEqual(frames.at(-1), { kind: 'done', complete: true }, label);
    }
    listed += got.length;
  });
  console.log(
    `canary find_files: ${calls.length} cases (${TARGETS.length} glob/iglob/path targets × hidden × no_ignore, max_depth × limit ${FULL ? 'crossed' : 'spread'}), ${refused} refused, ${listed} paths listed, all normal`,
  );
  assert.ok(listed > 50, `only ${listed} paths listed: the comparison would prove little`);
});

/** The tree as list_directory must show it: every entry but the denied folder, folders first, with lstat sizes. */
function expectedListing(rel: string, maxDepth: number | undefined): ListedEntry[] {
  const out: ListedEntry[] = [];
  const walk = (dirRel: string, shownRel: string, depth: number): void => {
    // The denied folder, and a link that leads into it (a link is judged by where it leads), are left out.
    const names = readdirSync(nodePath.join(t.root, dirRel)).filter(
      (n) => (dirRel ? `${dirRel}/${n}` : n) !== 'private' && LINKS[dirRel ? `${dirRel}/${n}` : n] !== 'private',
    );
    const entries = names
      .map((name) => ({ name, stat: lstatSync(nodePath.join(t.root, dirRel, name)) }))
      .sort((a, b) => Number(!a.stat.isDirectory()) - Number(!b.stat.isDirectory()) || (a.name < b.name ? -1 : 1));
    for (const { name, stat } of entries) {
      const path = shownRel ? `${shownRel}/${name}` : name;
      const type = stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'directory' : 'file';
      out.push({ path, type, depth, ...(type === 'directory' ? {} : { size: stat.size }) });
      if (type === 'directory' && (maxDepth === undefined || depth < maxDepth))
        walk(dirRel ? `${dirRel}/${name}` : name, path, depth + 1);
    }
  };
  walk(rel, '', 1);
  return out;
}

test('canary: list_directory at every path and depth omits the denied folder and never lists inside a declined one', async () => {
  let count = 0;
  for (const path of FOLDER_PATHS) {
    for (const max_depth of [undefined, 1, 2, 3]) {
      const input = defined({ path, max_depth });
      const label = JSON.stringify(input);
      const out = await call('list_directory', input);
      count++;
      const refusal = refusalFor('list_directory', path);
      if (refusal) {
        expectFailure(out, refusal.code, refusal.message, label);
        continue;
      }
      const rel = path === undefined || path === '.' ? '' : path;
      assert.ok(out.ok, `${label}: ${out.ok ? '' : out.message}`);
      const [listing] = wholeResult(out.result);
      // As the host serializes it for the model (the listing's entries are class instances).
      assert.deepEqual(
        JSON.parse(JSON.stringify(listing)),
        { path: rel || '.', entries: expectedListing(rel, max_depth) },
        label,
      );
      assert.equal(out.text.split('\n')[0], `${rel || '.'}: ${listing!.entries.length} entries`, label);
    }
  }
  console.log(`canary list_directory: ${count} cases (${FOLDER_PATHS.length} paths × 4 depths)`);
});

/** The lines of a normal file as artifact_read numbers them. */
function linesOf(rel: string): string[] {
  const text = NORMAL[rel]!;
  return text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
}

test('canary: the open tools refuse every secret, link and denied path; artifact tools on normal files read, grep and query exactly, and guessed callIds find nothing', async () => {
  let count = 0;
  const OPEN_PATHS = [
    ...new Set([
      ...FOLDER_PATHS.filter((p): p is string => p !== undefined && refusalFor('open_file', p) !== undefined),
      `private/${PAYROLL}`,
      `private/boardroom/${MERGER}`,
      `vault/${PAYROLL}`,
      `./private/${PAYROLL}`,
      '.ssh/config',
      'keys/config',
      '.env.local',
      'src/.env.local',
      '.git/config',
    ]),
  ];
  for (const tool of ['open_file', 'open_json_file', 'open_markdown_file'] as const) {
    for (const path of OPEN_PATHS) {
      const out = await call(tool, { path });
      count++;
      const refusal = refusalFor(tool, path);
      assert.ok(refusal, path);
      expectFailure(out, refusal.code, refusal.message, `${tool} ${path}`);
    }
  }

  const open = async (
    tool: 'open_file' | 'open_json_file' | 'open_markdown_file',
    path: string,
  ): Promise<ArtifactHandle> => {
    const out = await call(tool, { path });
    count++;
    assert.ok(out.ok, `${tool} ${path}`);
    const result = out.result;
    const handle = 'handle' in result ? result.handle : oneFile(result);
    assert.deepEqual(
      { path: handle.path, bytes: handle.bytes, lines: handle.lines },
      { path, bytes: Buffer.byteLength(NORMAL[path]!), lines: linesOf(path).length },
    );
    return handle;
  };
  const artifacts: [string, ArtifactHandle][] = [
    ['README.md', await open('open_file', 'README.md')],
    ['src/app.ts', await open('open_file', 'src/app.ts')],
    ['src/lib/util.ts', await open('open_file', 'src/lib/util.ts')],
    ['config/app.json', await open('open_json_file', 'config/app.json')],
    ['docs/guide.md', await open('open_markdown_file', 'docs/guide.md')],
  ];

  for (const [rel, { callId }] of artifacts) {
    const lines = linesOf(rel);
    for (const { offset, limit } of grid({ offset: [undefined, 1, 2, lines.length], limit: [undefined, 1, 2000] })) {
      const out = await call('artifact_read', defined({ callId, offset, limit }));
      count++;
      assert.ok(out.ok);
      const page = out.result;
      const from = offset ?? 1;
      const shown = lines.slice(from - 1, limit === undefined ? undefined : from - 1 + limit);
      assert.deepEqual(
        page.lines.map((l) => l.text),
        shown,
        `${rel} ${offset} ${limit}`,
      );
      assert.equal(page.startLine, from);
    }
    for (const g of grid({
      probe: ['CANARY_[A-Z]+|BEGIN|[0-9a-f]{16}', 'canary'],
      literal: [false, true],
      ignore_case: [false, true],
      maxResults: [undefined, 1],
      context: [undefined, 2],
    })) {
      const out = await call(
        'artifact_grep',
        defined({
          callId,
          pattern: g.probe,
          literal: g.literal,
          ignore_case: g.ignore_case,
          maxResults: g.maxResults,
          context: g.context,
        }),
      );
      count++;
      assert.ok(out.ok, `${rel} ${JSON.stringify(g)}: ${out.ok ? '' : out.message}`);
      const result = wholeResult(out.result);
      const source = g.literal ? g.probe.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : g.probe;
      const re = new RegExp(source, g.ignore_case ? 'i' : '');
      const matching = lines.flatMap((line, i) => (re.test(line) ? [i + 1] : []));
      const kept = matching.slice(0, g.maxResults ?? 100);
      const ctx = g.context ?? 0;
      const wanted = [...new Set(kept.flatMap((n) => Array.from({ length: 2 * ctx + 1 }, (_, k) => n - ctx + k)))]
        .filter((n) => n >= 1 && n <= lines.length)
        .sort((a, b) => a - b);
      assert.deepEqual(
        result.lines.map((l) => [l.n, l.match, l.text]),
        wanted.map((n) => [n, kept.includes(n), lines[n - 1]]),
        `${rel} ${JSON.stringify(g)}`,
      );
      assert.equal(result.limited, matching.length > kept.length);
    }
  }
  const json = artifacts[3]![1].callId;
  for (const [select, expected] of [
    ['', 'object'],
    ['/name', 'string'],
    ['/nested', 'object'],
    ['/nested/list', 'array'],
    ['/nested/list/2', 'number'],
  ] as const) {
    const out = await call('artifact_query', { callId: json, select });
    count++;
    assert.ok(out.ok, select);
    assert.equal(ofKind(out.result, 'json').node.type, expected, select);
  }
  const markdown = artifacts[4]![1].callId;
  for (const [select, first] of [
    ['Guide', '# Guide'],
    ['Guide/Setup', '## Setup'],
    ['Usage', '## Usage'],
  ] as const) {
    const out = await call('artifact_query', { callId: markdown, select });
    count++;
    assert.ok(out.ok, select);
    assert.equal(ofKind(out.result, 'markdown').page.lines[0]?.text, first, select);
  }
  for (const [callId, select] of [
    [json, '/missing'],
    [markdown, 'Private'],
    [artifacts[0]![1].callId, ''],
  ] as const) {
    const out = await call('artifact_query', { callId, select });
    count++;
    assert.equal(out.ok, false, select);
  }

  // The refused opens left no artifact behind: the ids around the real ones name nothing.
  const [, prefix, last] = /^(art-.+-)(\d+)$/.exec(artifacts.at(-1)![1].callId)!;
  for (let n = Number(last) + 1; n <= Number(last) + 5; n++) {
    for (const tool of ['artifact_read', 'artifact_grep', 'artifact_query'] as const) {
      const callId = `${prefix}${n}`;
      const out = await call(
        tool,
        tool === 'artifact_read'
          ? { callId }
          : tool === 'artifact_grep'
            ? { callId, pattern: 'CANARY' }
            : { callId, select: '' },
      );
      count++;
      expectFailure(
        out,
        'E_SANDBOX_NOT_FOUND',
        `No artifact has callId "${callId}": artifacts live only as long as the editor session and this id is not one of them. Open the file again with open_file and use the callId it returns.`,
        callId,
      );
    }
  }
  assert.equal(t.session.artifacts.list().length, artifacts.length);
  console.log(`canary open/artifact tools: ${count} cases`);
});

test('canary: list_media shows only what was staged; staging a secret is declined and leaves no media', async () => {
  let count = 0;
  const before = await call('list_media', {});
  count++;
  assert.ok(before.ok);
  assert.equal(before.text, 'No unsaved staged media.');
  for (const path of ['.env', 'id_rsa', 'config/secret.pem', '.ssh/config', 'src/.env.local', '.git/config']) {
    for (const content of [undefined, 'replaced\n']) {
      const out = await call('stage_file', defined({ path, content }));
      count++;
      // Writing into .git is denied outright; the other secrets are asked, and the person declines.
      const message =
        path === '.git/config'
          ? 'stage_file on ".git/config" was refused by the rule "**/.git/**" (write denied). Do not retry this path; work with other files or ask the user to change workspaceTools.rules.'
          : declinedMessage('stage_file', path);
      expectFailure(out, 'E_SANDBOX_REFUSED', message, path);
    }
  }
  const staged = await call('stage_file', { path: 'notes.txt' });
  count++;
  assert.ok(staged.ok);
  const id = staged.result.media_id;
  const patched = await call('media_apply_patch', { media_id: id, patch: { find: 'line two', replace: 'line 2' } });
  count++;
  assert.ok(patched.ok);
  const listed = await call('list_media', {});
  count++;
  assert.ok(listed.ok);
  const media = listed.result.media;
  assert.deepEqual(
    media.map((m) => [m.path, m.added, m.removed]),
    [['notes.txt', 1, 1]],
  );
  console.log(`canary list_media/stage_file: ${count} cases`);
});

test('canary: the audit log holds every call, names only targets the model gave, and no content', () => {
  const entries = t.log.entries;
  assert.equal(entries.length, cases);
  const text = JSON.stringify(entries) + JSON.stringify(t.log.messages);
  for (const token of CANARY_TOKENS) assert.equal(text.includes(token), false, `audit log holds ${token}`);
  for (const entry of entries) {
    // artifact_* and media_apply_patch are audited under the path their artifact or media came from, which an open or stage named.
    for (const target of entry.target === '' ? [] : entry.target.split(', '))
      assert.ok(namedTargets.has(target), `the audit log names ${target}, which no call did`);
    assert.match(entry.outcome, /^(ok \d+ bytes|E_SANDBOX_[A-Z_]+)$/);
  }
  console.log(
    `canary audit log: ${entries.length} entries checked; ${declineSecrets.declined} calls declined by the person, ${ruleNamed} refusals named the rule they ran into`,
  );
});

/**
 * stage_file without content reads the file, so it is judged by the read rules too: otherwise a
 * read-denied file staged for writing reaches the model through media_apply_patch's "closest text" error,
 * media_apply_patch's success or failure, or save_media to another path that open_file then reads.
 */
test('attack: staging a read-denied file for writing, to read it back through media_apply_patch or save_media', async (tc) => {
  const s = session(tc, { rules: RULES });
  writeTree(s.root, { [`private/${PAYROLL}`]: SECRETS[`private/${PAYROLL}`]! });
  await assert.rejects(
    runTool(s.session, TOOLS.stage_file, { path: `private/${PAYROLL}` }),
    (e: unknown) =>
      e instanceof SandboxError &&
      e.code === 'E_SANDBOX_REFUSED' &&
      e.message ===
        `stage_file on "private/${PAYROLL}" was refused by the rule "private/**" (read denied). Do not retry this path; work with other files or ask the user to change workspaceTools.rules.`,
  );
  assert.deepEqual(s.session.media.all(), []);
  // Replacing its content without reading it stays a write, judged by the write rules only.
  await runTool(s.session, TOOLS.stage_file, { path: `private/${PAYROLL}`, content: 'replaced\n' });
  assert.equal(s.session.media.all().length, 1);
});

/**
 * Taint: the person allowed one read of a secret (staging it); the bytes must not then escape the
 * protection by being saved under an innocent name, where later calls would read them with no ask,
 * nor through the text of a failed patch.
 */
test('attack: a media staged from a secret is saved to an innocent path, and a failed patch quotes its lines', async (tc) => {
  const calls: GateCall[] = [];
  // The person allows staging and patching .env, and declines every protected save.
  const gate: Gate = async (call) => {
    calls.push(call);
    return { allow: !(call.secret && call.tool === 'save_media'), decidedBy: 'test' };
  };
  const s = session(tc, { overrides: { gate } });
  writeTree(s.root, { '.env': `TOKEN=${CANARY.env}\nOTHER=1\n` });
  const staged = await runTool(s.session, TOOLS.stage_file, { path: '.env' });
  const mediaId = staged.result.media_id;
  const failed = await runTool(s.session, TOOLS.media_apply_patch, {
    media_id: mediaId,
    patch: { find: 'TOKEN=CANARY_ENV_x', replace: 'TOKEN=redacted' },
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failed instanceof SandboxError && failed.code === 'E_SANDBOX_NOT_FOUND', String(failed));
  for (const token of CANARY_TOKENS)
    assert.ok(!failed.message.includes(token), `the patch error quoted the secret: ${failed.message}`);
  const unified = await runTool(s.session, TOOLS.media_apply_patch, {
    media_id: mediaId,
    patch: { unified: '@@ -1,1 +1,1 @@\n-TOKEN=CANARY_ENV_y\n+TOKEN=z\n' },
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(unified instanceof SandboxError, String(unified));
  for (const token of CANARY_TOKENS)
    assert.ok(!unified.message.includes(token), `the unified-diff error quoted the secret: ${unified.message}`);
  // A patch that applies makes a media that is just as protected.
  const patched = await runTool(s.session, TOOLS.media_apply_patch, {
    media_id: mediaId,
    patch: { find: 'OTHER=1', replace: 'OTHER=2' },
  });
  for (const id of [mediaId, patched.result.media_id]) {
    calls.length = 0;
    const saved = await runTool(s.session, TOOLS.save_media, { media_id: id, path: 'notes.txt' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(saved instanceof SandboxError && saved.code === 'E_SANDBOX_REFUSED', `${id}: ${String(saved)}`);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.secret, true, 'the save was not asked as a secret');
    assert.deepEqual(calls[0]!.taint, { from: '.env', rule: '.env' });
    assert.match(calls[0]!.summary, /notes\.txt.*"\.env"/);
  }
  assert.equal(readdirSync(s.root).includes('notes.txt'), false, 'the secret landed under an innocent name');
});

test('attack: secret files missing from the built-in list (.env-prod, terraform.tfstate, .git/modules/*/config, ...) open with no ask', async (tc) => {
  const names = [
    '.env-prod',
    '.env_local',
    '.flaskenv',
    'terraform.tfstate',
    'terraform.tfstate.backup',
    'putty.ppk',
    '.htpasswd',
    '.vault-token',
    '.s3cfg',
    '.boto',
    '.azure/accessTokens.json',
    '.config/gh/hosts.yml',
    '.cargo/credentials.toml',
    '.m2/settings.xml',
    'auth.json',
    '.yarnrc',
    '.dockercfg',
    'kubeconfig',
    'secrets.json',
    'secrets.toml',
    '.git/modules/lib/config',
  ];
  const s = session(tc);
  writeTree(s.root, Object.fromEntries(names.map((n) => [n, `TOKEN=${CANARY.env}\n`])));
  for (const name of names) {
    s.gate.calls.length = 0;
    await runTool(s.session, TOOLS.open_file, { path: name });
    assert.equal(s.gate.calls[0]?.secret, true, `${name} opened without the modal ask`);
  }
});
