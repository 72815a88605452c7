import { placeOf, type ModelPath, type RootPlace, type WorkspaceRoot } from './paths.ts';

/** A file a host reports by its address, as a workspace path: the root it is under and its path there. */
export type HostFile = RootPlace;

/** The workspace path of a file the host reports, by the deepest root whose address holds it (placeOf); undefined outside every root. */
export const modelPathOf = (address: string, roots: readonly WorkspaceRoot[]): HostFile | undefined =>
  placeOf(address, roots, (root) => root.address);

/** How the model names the file: its path, under its root's name when there are several roots. */
export const displayOf = (file: HostFile, roots: readonly WorkspaceRoot[]): string =>
  roots.length > 1 ? [file.root.name, file.rel].filter(Boolean).join('/') : file.rel || '.';

/** Whether the file is the scope or under it. */
export const within = (file: HostFile, scope: ModelPath): boolean =>
  file.root.address === scope.root.address &&
  (scope.rel === '' || file.rel === scope.rel || file.rel.startsWith(`${scope.rel}/`));
