import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// Set by esbuild.mjs in the bundles: package name → the file it is bundled into, next to them.
declare const WT_LAZY_BUNDLES: Readonly<Record<string, string>> | undefined;

/** Packages too large to load at activation for what only some calls need, and where each comes from outside the bundles. */
const SOURCES = {
  'iconv-lite': 'iconv-lite',
  'markdown-it': 'markdown-it',
  re2js: 're2js',
  picomatch: 'picomatch',
  diff: 'diff',
  'image-size': 'image-size',
  'jsonc-parser': 'jsonc-parser',
} as const;
export type LazyPackage = keyof typeof SOURCES;

/** Worker threads' entry files, in the bundles a file of its own next to them. */
const WORKER_SOURCES = {
  'folder-worker': './fs/folder-worker.ts',
  'image-worker': './images/decode-worker.ts',
} as const;
export type WorkerFile = keyof typeof WORKER_SOURCES;

const loaded = new Map<LazyPackage, unknown>();

/**
 * A package loaded on first use: in the bundles, from a file of its own next to them (so activation
 * never pays for it); from node_modules (or its source file) otherwise. A bundle built from an ES module keeps its
 * export under `default`: the module itself is returned either way.
 */
export function lazyModule<T>(name: LazyPackage): T {
  if (loaded.has(name)) return loaded.get(name) as T;
  const file = typeof WT_LAZY_BUNDLES === 'object' ? WT_LAZY_BUNDLES[name] : undefined;
  const load = createRequire(file !== undefined ? __filename : import.meta.url);
  const exported = load(file ?? SOURCES[name]) as { default?: unknown };
  const module = (
    typeof exported === 'object' && exported !== null && 'default' in exported && exported.default !== undefined
      ? exported.default
      : exported
  ) as T;
  loaded.set(name, module);
  return module;
}

/** Where a worker thread's code is: its bundle next to the bundles, or its source file. */
export function workerFile(name: WorkerFile): string | URL {
  const file = typeof WT_LAZY_BUNDLES === 'object' ? WT_LAZY_BUNDLES[name] : undefined;
  return file !== undefined ? join(dirname(__filename), file) : new URL(WORKER_SOURCES[name], import.meta.url);
}
