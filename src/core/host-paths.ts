import type { ModelPath, WorkspaceRoot } from './paths.ts';

/** A file a host reports by its address, as a workspace path: the root it is under and its path there. */
export interface HostFile {
  readonly root: WorkspaceRoot;
  readonly rel: string;
}

/** The workspace path of a file the host reports, by the longest root address it is under; undefined outside every root. */
export function modelPathOf(address: string, roots: readonly WorkspaceRoot[]): HostFile | undefined {
  let best: HostFile | undefined;
  for (const root of roots) {
    const base = root.address.replace(/[\\/]+$/, '');
    if (address !== base && !address.startsWith(`${base}/`) && !address.startsWith(`${base}\\`)) continue;
    if (best && best.root.address.length >= root.address.length) continue;
    best = { root, rel: address.slice(base.length + 1).split(/[\\/]/).filter(Boolean).join('/') };
  }
  return best;
}

/** How the model names the file: its path, under its root's name when there are several roots. */
export const displayOf = (file: HostFile, roots: readonly WorkspaceRoot[]): string => (roots.length > 1 ? [file.root.name, file.rel].filter(Boolean).join('/') : file.rel || '.');

/** Whether the file is the scope or under it. */
export const within = (file: HostFile, scope: ModelPath): boolean =>
  file.root.address === scope.root.address && (scope.rel === '' || file.rel === scope.rel || file.rel.startsWith(`${scope.rel}/`));
