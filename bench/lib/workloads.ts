/**
 * Deterministic workloads, generated into a cache folder and reused while their recipe is unchanged.
 *
 * Folder: $BENCH_DIR, else <os tmpdir>/workspace-tools-bench. Each workload is one folder with a
 * stamp file beside it (`<name>.stamp.json`) written only after generation finished; a run reuses a
 * folder whose stamp names the same recipe (GEN_VERSION and parameters), else regenerates it.
 * Every byte comes from a seeded PRNG, so two machines get identical trees.
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';

/** Bump when any generator changes its output: cached workloads are then regenerated. */
export const GEN_VERSION = 1;

export function benchDir(): string {
  return nodePath.resolve(process.env['BENCH_DIR'] ?? nodePath.join(tmpdir(), 'workspace-tools-bench'));
}

/** mulberry32: small, fast, and the same sequence everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'alpha',
  'bravo',
  'cache',
  'delta',
  'event',
  'frame',
  'graph',
  'handle',
  'index',
  'join',
  'kernel',
  'layer',
  'model',
  'node',
  'order',
  'parse',
  'query',
  'route',
  'stream',
  'token',
  'user',
  'value',
  'widget',
  'xform',
  'yield',
  'zone',
  'buffer',
  'client',
  'driver',
  'engine',
  'filter',
  'gateway',
  'header',
  'import',
  'ledger',
  'mapper',
  'network',
  'option',
  'packet',
  'record',
  'schema',
  'target',
  'update',
  'vector',
  'worker',
];

interface Stamp {
  readonly version: number;
  readonly params: unknown;
  readonly info: Record<string, number | string>;
}

/** Reuses `dir` when its stamp matches `params`, else regenerates it; returns what the generator reported. */
async function cached(
  name: string,
  params: unknown,
  log: (m: string) => void,
  generate: (dir: string) => Promise<Record<string, number | string>>,
): Promise<{ dir: string; info: Record<string, number | string>; generatedMs: number | null }> {
  const base = benchDir();
  const dir = nodePath.join(base, name);
  const stampFile = nodePath.join(base, `${name}.stamp.json`);
  const want = JSON.stringify({ version: GEN_VERSION, params });
  if (existsSync(stampFile) && existsSync(dir)) {
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as Stamp;
    if (JSON.stringify({ version: stamp.version, params: stamp.params }) === want)
      return { dir, info: stamp.info, generatedMs: null };
  }
  rmSync(stampFile, { force: true });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`generating ${name} in ${dir} ...`);
  const started = performance.now();
  const info = await generate(dir);
  const generatedMs = performance.now() - started;
  writeFileSync(stampFile, JSON.stringify({ version: GEN_VERSION, params, info } satisfies Stamp, null, 2));
  log(`generated ${name} in ${(generatedMs / 1000).toFixed(1)} s`);
  return { dir, info, generatedMs };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

// ---------------------------------------------------------------------------------------------
// The 20,000-file source tree: packages/pkgPP/src/modMM/fileFF.{ts,js,py,md,json}, 20 × 25 × 40.

export const SOURCE = {
  packages: 20,
  modules: 25,
  files: 40,
  /** Where NEEDLE is defined, and on which line. */
  definition: { path: 'packages/pkg13/src/mod17/file23.ts', line: 120 },
  /** Files that import and use NEEDLE (each: the import on line 3, a use further down). */
  references: [
    'packages/pkg02/src/mod05/file10.ts',
    'packages/pkg07/src/mod11/file31.ts',
    'packages/pkg13/src/mod17/file02.ts',
    'packages/pkg18/src/mod20/file04.ts',
  ],
  /** Ignored (`.ignore` lists vendor/) and hidden (`.env`) copies of the needle that neither side may report. */
  decoys: ['vendor/lib/needle.ts', '.env'],
} as const;

export interface SourceTree {
  readonly dir: string;
  readonly files: number;
  readonly bytes: number;
  readonly todoLines: number;
  readonly needleLines: number;
}

function sourceFile(
  rand: () => number,
  ext: string,
  lines: number,
  inject: Map<number, string>,
): { text: string; todos: number } {
  const out: string[] = [];
  let todos = 0;
  const w = (): string => WORDS[Math.floor(rand() * WORDS.length)]!;
  for (let i = 1; i <= lines; i++) {
    const injected = inject.get(i);
    if (injected !== undefined) {
      out.push(injected);
      continue;
    }
    const r = rand();
    if (r < 0.002) {
      todos++;
      out.push(
        ext === 'py'
          ? `# TODO: ${w()} the ${w()} before ${w()}`
          : ext === 'md'
            ? `- TODO ${w()} ${w()}`
            : `// TODO: ${w()} the ${w()} before ${w()}`,
      );
      continue;
    }
    switch (ext) {
      case 'py':
        out.push(
          r < 0.2
            ? `def ${w()}_${w()}(${w()}, ${w()}):`
            : `    ${w()}_${Math.floor(rand() * 1000)} = ${w()}.${w()}(${Math.floor(rand() * 100)})`,
        );
        break;
      case 'md':
        out.push(r < 0.1 ? `## ${w()} ${w()}` : `The ${w()} ${w()} keeps the ${w()} ${w()} in ${w()} order.`);
        break;
      case 'json':
        out.push(`  "${w()}_${i}": { "${w()}": ${Math.floor(rand() * 10000)}, "${w()}": "${w()}" },`);
        break;
      default:
        out.push(
          r < 0.15
            ? `export function ${w()}${w().toUpperCase()}(${w()}: number): number {`
            : r < 0.3
              ? `  const ${w()}${i} = ${w()}.${w()}(${Math.floor(rand() * 1000)});`
              : r < 0.4
                ? '}'
                : `  if (${w()}.${w()} > ${Math.floor(rand() * 100)}) return ${w()}(${w()}, ${Math.floor(rand() * 10)});`,
        );
    }
  }
  if (ext === 'json') return { text: `{\n${out.join('\n')}\n  "end": true\n}\n`, todos };
  return { text: out.join('\n') + '\n', todos };
}

/** File extensions of the generated source trees, one per file in turn: six in ten are TypeScript. */
const SOURCE_EXTS = ['ts', 'ts', 'ts', 'ts', 'ts', 'ts', 'js', 'py', 'md', 'json'] as const;

export async function sourceTree(log: (m: string) => void): Promise<SourceTree> {
  const params = { ...SOURCE, seed: 20000 };
  const { dir, info } = await cached('source-20k', params, log, async (dir) => {
    const rand = prng(params.seed);
    let files = 0,
      bytes = 0,
      todoLines = 0,
      needleLines = 0;
    for (let p = 0; p < SOURCE.packages; p++) {
      for (let m = 0; m < SOURCE.modules; m++) {
        const folder = nodePath.join(dir, 'packages', `pkg${pad(p)}`, 'src', `mod${pad(m)}`);
        mkdirSync(folder, { recursive: true });
        for (let f = 0; f < SOURCE.files; f++) {
          const ext = SOURCE_EXTS[f % SOURCE_EXTS.length]!;
          const rel = `packages/pkg${pad(p)}/src/mod${pad(m)}/file${pad(f)}.${ext}`;
          const inject = new Map<number, string>();
          let lines = 40 + Math.floor(rand() * 200);
          if (rel === SOURCE.definition.path) {
            lines = 200;
            inject.set(SOURCE.definition.line - 1, '/** The value every reference compares against. */');
            inject.set(SOURCE.definition.line, `export const NEEDLE = 'needle-7f3a';`);
            needleLines++;
          }
          const refIndex = (SOURCE.references as readonly string[]).indexOf(rel);
          if (refIndex >= 0) {
            lines = Math.max(lines, 60);
            inject.set(3, `import { NEEDLE } from '../../../pkg13/src/mod17/file23.ts';`);
            inject.set(30 + refIndex * 5, `  if (key === NEEDLE) return true;`);
            needleLines += 2;
          }
          const { text, todos } = sourceFile(rand, ext, lines, inject);
          writeFileSync(nodePath.join(folder, `file${pad(f)}.${ext}`), text);
          files++;
          bytes += Buffer.byteLength(text);
          todoLines += todos;
        }
      }
    }
    // Decoys: a vendored copy that .ignore hides, and a secret that is hidden (and ask-protected).
    writeFileSync(nodePath.join(dir, '.ignore'), 'vendor/\n');
    mkdirSync(nodePath.join(dir, 'vendor', 'lib'), { recursive: true });
    writeFileSync(
      nodePath.join(dir, 'vendor', 'lib', 'needle.ts'),
      `export const NEEDLE = 'vendored';\n// TODO: vendored\n`,
    );
    writeFileSync(nodePath.join(dir, '.env'), 'NEEDLE=canary-secret\n');
    return { files, bytes, todoLines, needleLines };
  });
  return {
    dir,
    files: Number(info['files']),
    bytes: Number(info['bytes']),
    todoLines: Number(info['todoLines']),
    needleLines: Number(info['needleLines']),
  };
}

// ---------------------------------------------------------------------------------------------
// The scale monorepos: pkgPPP/src/modMM/fileFF.{ts,js,py,md,json}. 300,000 files of 40-239 lines
// (300 × 25 × 40, ~1.8 GB); 1,000,000 files of 5-24 lines (1,000 × 25 × 40, 640 MB of text, ~5 GB
// on disk with a block a file), a TODO line added to every 8th file so a search has many hits.

export const SCALE = { packages: 300, modules: 25, files: 40 } as const;
export const SCALE_1M = { packages: 1000, modules: 25, files: 40, minLines: 5, spreadLines: 20, todoEvery: 8 } as const;

export interface ScaleTree {
  readonly dir: string;
  readonly files: number;
  readonly folders: number;
  readonly bytes: number;
  readonly todoLines: number;
}

interface MonorepoRecipe {
  readonly packages: number;
  readonly modules: number;
  readonly files: number;
  readonly minLines: number;
  readonly spreadLines: number;
  readonly todoEvery?: number;
}

async function monorepo(
  name: string,
  params: unknown,
  recipe: MonorepoRecipe,
  seed: number,
  log: (m: string) => void,
): Promise<ScaleTree> {
  const { dir, info } = await cached(name, params, log, async (dir) => {
    const rand = prng(seed);
    let files = 0,
      folders = 0,
      bytes = 0,
      todoLines = 0;
    const every = Math.max(1, Math.round(recipe.packages / 6));
    for (let p = 0; p < recipe.packages; p++) {
      folders += 2;
      for (let m = 0; m < recipe.modules; m++) {
        const folder = nodePath.join(dir, `pkg${pad(p, 3)}`, 'src', `mod${pad(m)}`);
        mkdirSync(folder, { recursive: true });
        folders++;
        for (let f = 0; f < recipe.files; f++) {
          const ext = SOURCE_EXTS[f % SOURCE_EXTS.length]!;
          const inject = new Map<number, string>();
          if (recipe.todoEvery !== undefined && files % recipe.todoEvery === 0) {
            inject.set(1, ext === 'py' || ext === 'md' ? `# TODO: file ${files}` : `// TODO: file ${files}`);
            todoLines++;
          }
          const { text, todos } = sourceFile(
            rand,
            ext,
            recipe.minLines + Math.floor(rand() * recipe.spreadLines),
            inject,
          );
          writeFileSync(nodePath.join(folder, `file${pad(f)}.${ext}`), text);
          files++;
          bytes += Buffer.byteLength(text);
          todoLines += todos;
        }
      }
      if (p % every === every - 1) log(`  ${name}: ${files} files`);
    }
    return { files, folders, bytes, todoLines };
  });
  return {
    dir,
    files: Number(info['files']),
    folders: Number(info['folders']),
    bytes: Number(info['bytes']),
    todoLines: Number(info['todoLines']),
  };
}

/** The 300,000-file monorepo of issue 17, kept between runs. */
export function scaleTree(log: (m: string) => void): Promise<ScaleTree> {
  return monorepo('scale-300k', { ...SCALE, seed: 300000 }, { ...SCALE, minLines: 40, spreadLines: 200 }, 300000, log);
}

/** The 1,000,000-file monorepo of issue 27: generated when missing, removed by `removeWorkload` after its group ran (it is ~5 GB on disk). */
export function millionTree(log: (m: string) => void): Promise<ScaleTree> {
  return monorepo(MILLION, { ...SCALE_1M, seed: 1000000 }, SCALE_1M, 1000000, log);
}

export const MILLION = 'scale-1m';

/** Removes a generated workload and its stamp (the stamp first, so a half-removed folder is never reused). */
export function removeWorkload(name: string): void {
  rmSync(nodePath.join(benchDir(), `${name}.stamp.json`), { force: true });
  rmSync(nodePath.join(benchDir(), name), { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// The 100,000-file names tree: dNN/dNN/dNN/<word>_<n>.<ext>, 20 × 20 × 25 folders × 10 files (empty).

export const NAMES = { top: 20, mid: 20, leaf: 25, perFolder: 10, needles: 5 } as const;

export interface NamesTree {
  readonly dir: string;
  readonly files: number;
  readonly tsFiles: number;
  readonly needleFiles: number;
}

export async function namesTree(log: (m: string) => void): Promise<NamesTree> {
  const params = { ...NAMES, seed: 100000 };
  const { dir, info } = await cached('names-100k', params, log, async (dir) => {
    const rand = prng(params.seed);
    const exts = ['ts', 'ts', 'js', 'json', 'md', 'py', 'go', 'rs', 'txt', 'css'];
    const total = NAMES.top * NAMES.mid * NAMES.leaf * NAMES.perFolder;
    // The needle names replace files spread evenly through the tree.
    const needleAt = new Set(
      Array.from({ length: NAMES.needles }, (_, k) => Math.floor(((k + 0.5) * total) / NAMES.needles)),
    );
    let files = 0,
      tsFiles = 0,
      needleFiles = 0;
    for (let a = 0; a < NAMES.top; a++) {
      for (let b = 0; b < NAMES.mid; b++) {
        for (let c = 0; c < NAMES.leaf; c++) {
          const folder = nodePath.join(dir, `d${pad(a)}`, `d${pad(b)}`, `d${pad(c)}`);
          mkdirSync(folder, { recursive: true });
          for (let f = 0; f < NAMES.perFolder; f++) {
            let name: string;
            if (needleAt.has(files)) {
              name = `config_needle_${needleFiles}.yaml`;
              needleFiles++;
            } else {
              const ext = exts[Math.floor(rand() * exts.length)]!;
              if (ext === 'ts') tsFiles++;
              name = `${WORDS[Math.floor(rand() * WORDS.length)]}_${files}.${ext}`;
            }
            writeFileSync(nodePath.join(folder, name), '');
            files++;
          }
        }
      }
    }
    return { files, tsFiles, needleFiles };
  });
  return {
    dir,
    files: Number(info['files']),
    tsFiles: Number(info['tsFiles']),
    needleFiles: Number(info['needleFiles']),
  };
}

// ---------------------------------------------------------------------------------------------
// The 1 GiB log: access-log lines, and one needle line at the very end.

export const LOG = { bytes: 1024 ** 3, needle: 'NEEDLE_AT_END', name: 'big.log' } as const;

export interface BigLog {
  readonly dir: string;
  readonly file: string;
  readonly rel: string;
  readonly bytes: number;
  readonly lines: number;
  readonly everyMatchPattern: string;
  readonly everyMatchCount: number;
}

export async function bigLog(log: (m: string) => void, gib = 1): Promise<BigLog> {
  const target = Math.round(LOG.bytes * gib);
  const params = { bytes: target, needle: LOG.needle, format: 1 };
  const everyMatchPattern = 'status=500 took=99ms';
  const { dir, info } = await cached(`log-${gib}g`, params, log, async (dir) => {
    const out = createWriteStream(nodePath.join(dir, LOG.name));
    const flush = async (s: string): Promise<void> => {
      if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
    };
    let written = 0,
      n = 0,
      everyMatchCount = 0,
      pending = '';
    // ASCII only, so a string's length is its size in bytes.
    const needleLine = `${LOG.needle} request failed path=/api/v1/items/0 status=500 took=0ms\n`;
    for (;;) {
      const k = n + 1;
      const status = k % 101 === 0 ? 500 : 200;
      const line = `${k} INFO request handled path=/api/v1/items/${k % 997} status=${status} took=${k % 100}ms\n`;
      if (written + pending.length + line.length + String(k + 1).length + 7 + needleLine.length > target) break;
      n = k;
      if (status === 500 && k % 100 === 99) everyMatchCount++;
      pending += line;
      if (pending.length >= 1 << 20) {
        written += pending.length;
        await flush(pending);
        pending = '';
      }
    }
    n++;
    pending += `${n} ERROR ${needleLine}`;
    written += pending.length;
    await flush(pending);
    await new Promise<void>((r, j) => {
      out.once('error', j);
      out.end(r);
    });
    return { bytes: written, lines: n, everyMatchCount };
  });
  return {
    dir,
    file: nodePath.join(dir, LOG.name),
    rel: LOG.name,
    bytes: Number(info['bytes']),
    lines: Number(info['lines']),
    everyMatchPattern,
    everyMatchCount: Number(info['everyMatchCount']),
  };
}

// ---------------------------------------------------------------------------------------------
// 100,000 lines with a match every 101 lines: with 50 lines of context a grep shows nearly all of
// them (issue 26). Written before each run of its group; 2.2 MB.

export const CONTEXT_FILE = { rel: 'context.txt', lines: 100_000, every: 101, pattern: 'needle', context: 50 } as const;

export interface ContextFile {
  readonly dir: string;
  readonly file: string;
  readonly rel: string;
  readonly matches: number;
  readonly shownLines: number;
}

export function contextFile(): ContextFile {
  const dir = nodePath.join(benchDir(), 'context-100k');
  mkdirSync(dir, { recursive: true });
  const { lines, every, context } = CONTEXT_FILE;
  let text = '';
  let matches = 0;
  let last = 0;
  for (let i = 1; i <= lines; i++) {
    const hit = i % every === 51;
    if (hit) {
      matches++;
      last = i;
    }
    text += hit ? `${CONTEXT_FILE.pattern} at line ${i}\n` : `line ${i} lorem ipsum dolor\n`;
  }
  const file = nodePath.join(dir, CONTEXT_FILE.rel);
  writeFileSync(file, text);
  // The groups touch: every line from 1 to the last match's context.
  return { dir, file, rel: CONTEXT_FILE.rel, matches, shownLines: Math.min(lines, last + context) };
}

// ---------------------------------------------------------------------------------------------
// The 10 MB source file, regenerated in memory (it is rewritten before every edit run).

export const EDIT = {
  rel: 'src/big.ts',
  bytes: 10 * 1000 * 1000,
  find: 'export const PATCH_TARGET = 1;',
  replace: 'export const PATCH_TARGET = 2;',
} as const;

export interface EditFile {
  readonly dir: string;
  readonly file: string;
  readonly rel: string;
  readonly pristine: Buffer;
  readonly lines: number;
  restore(): void;
}

export function editFile(): EditFile {
  const dir = nodePath.join(benchDir(), 'edit-10m');
  mkdirSync(nodePath.join(dir, 'src'), { recursive: true });
  const rand = prng(10);
  const parts: string[] = [];
  let bytes = 0;
  let lines = 0;
  let placed = false;
  while (bytes < EDIT.bytes) {
    const { text } = sourceFile(rand, 'ts', 200, new Map());
    parts.push(text);
    bytes += Buffer.byteLength(text);
    lines += 200;
    if (!placed && bytes >= EDIT.bytes / 2) {
      parts.push(`${EDIT.find}\n`);
      bytes += EDIT.find.length + 1;
      lines++;
      placed = true;
    }
  }
  const pristine = Buffer.from(parts.join(''));
  const file = nodePath.join(dir, EDIT.rel);
  const restore = (): void => writeFileSync(file, pristine);
  restore();
  return { dir, file, rel: EDIT.rel, pristine, lines, restore };
}
