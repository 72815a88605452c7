import { existsSync } from 'node:fs';
import * as nodePath from 'node:path';

export interface RipgrepLocation {
  readonly path: string;
  readonly source: 'package' | 'vscode' | 'PATH';
}

// @vscode/ripgrep 1.18 is ESM-only and its per-platform package holds the binary at bin/rg. Looking for
// that package's folder on disk (walking up node_modules the way Node would) keeps the lookup working
// inside a CommonJS bundle, where the ESM entry cannot be required.
function fromPackage(startDir: string): string | undefined {
  const relative = nodePath.join(
    'node_modules',
    '@vscode',
    `ripgrep-${process.platform}-${process.arch}`,
    'bin',
    process.platform === 'win32' ? 'rg.exe' : 'rg',
  );
  for (let dir = nodePath.resolve(startDir); ; dir = nodePath.dirname(dir)) {
    const candidate = nodePath.join(dir, relative);
    if (existsSync(candidate)) return candidate;
    if (nodePath.dirname(dir) === dir) return undefined;
  }
}

/** The `rg` that VS Code ships, under its appRoot (layouts differ across versions and builds). */
export function vscodeRipgrep(appRoot: string): string | undefined {
  const exe = process.platform === 'win32' ? 'rg.exe' : 'rg';
  const platform = `${process.platform}-${process.arch}`;
  const layouts = [
    // VS Code 1.13x ships one package holding every platform's binary.
    ['node_modules', '@vscode', 'ripgrep-universal', 'bin', platform],
    ['node_modules.asar.unpacked', '@vscode', 'ripgrep-universal', 'bin', platform],
    ['node_modules', '@vscode', 'ripgrep', 'bin'],
    ['node_modules.asar.unpacked', '@vscode', 'ripgrep', 'bin'],
    ['node_modules', 'vscode-ripgrep', 'bin'],
    ['node_modules.asar.unpacked', 'vscode-ripgrep', 'bin'],
    ['node_modules', `@vscode/ripgrep-${process.platform}-${process.arch}`, 'bin'],
  ];
  for (const layout of layouts) {
    const candidate = nodePath.join(appRoot, ...layout, exe);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function fromPath(): string | undefined {
  const exe = process.platform === 'win32' ? 'rg.exe' : 'rg';
  for (const dir of (process.env['PATH'] ?? '').split(nodePath.delimiter)) {
    if (!dir) continue;
    const candidate = nodePath.join(dir, exe);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Finds ripgrep: the bundled package, else VS Code's own copy, else PATH. */
export function locateRipgrep(
  options: { readonly startDir?: string; readonly vscodeAppRoot?: string } = {},
): RipgrepLocation | undefined {
  const packaged = fromPackage(options.startDir ?? (typeof __dirname === 'string' ? __dirname : process.cwd()));
  if (packaged) return { path: packaged, source: 'package' };
  const shipped = options.vscodeAppRoot ? vscodeRipgrep(options.vscodeAppRoot) : undefined;
  if (shipped) return { path: shipped, source: 'vscode' };
  const onPath = fromPath();
  return onPath ? { path: onPath, source: 'PATH' } : undefined;
}
