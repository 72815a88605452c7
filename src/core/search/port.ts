/**
 * The search backend (issue 5 fills in the queries and frames). `supportsFollow` is the backend's
 * declaration that following symlinks has passed a containment audit; schemas are built from it.
 */
export interface SandboxSearch {
  readonly supportsFollow: boolean;
}
