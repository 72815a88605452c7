// Types of scripts/package.mjs for the TypeScript tests that import it.
export declare const repoRoot: string;
export declare const TARGETS: readonly ('linux-x64' | 'linux-arm64' | 'darwin-x64' | 'darwin-arm64' | 'win32-x64')[];
export type Target = (typeof TARGETS)[number];
export declare const UNIVERSAL: 'universal';
export interface NativeModule {
  readonly name: string;
  readonly files: readonly string[];
  readonly native: Readonly<Record<Target, readonly string[]>>;
}
export declare const NATIVE_MODULES: readonly NativeModule[];
export interface PackagePlan {
  readonly target: Target | 'universal';
  /** node_modules files (globs, relative to the root) the package carries. */
  readonly include: readonly string[];
  /** Modules of NATIVE_MODULES left out because they are not installed. */
  readonly skipped: readonly string[];
}
export declare function vsixName(target: Target | 'universal'): string;
export declare function planPackage(target: string, root?: string): PackagePlan;
export declare function listPackage(
  target: string,
  options?: { root?: string },
): Promise<PackagePlan & { files: string[] }>;
export declare function buildPackage(
  target: string,
  options?: { root?: string; outDir?: string },
): Promise<PackagePlan & { vsix: string; bytes: number }>;
export declare function buildProduction(root?: string): Promise<string>;
