import type { SearchPolicy } from './port.ts';

/**
 * `Policy.hidesFromSearch(path, 'read')` for the many paths of one search, with each folder's
 * answer remembered: a result costs one rule evaluation for its own name instead of one per
 * ancestor. Same answers as `hidesFromSearch` (a test holds them equal).
 */
export class SearchVisibility {
  private readonly policy: SearchPolicy;
  /** The workspace folder's absolute local path, when it has one (see `Policy.decide`). */
  private readonly base: string | undefined;
  private readonly folders = new Map<string, boolean>();
  private rootHidden: boolean | undefined;
  // A file's matching lines arrive together: its answer is kept for the next line.
  private lastPath: string | undefined;
  private lastAnswer = false;

  constructor(policy: SearchPolicy, base?: string) {
    this.policy = policy;
    this.base = base;
  }

  /** True when `relPath` (folder-relative, "/"-separated), any folder above it, or the workspace folder itself is denied or asked. */
  hides(relPath: string): boolean {
    if (relPath === this.lastPath) return this.lastAnswer;
    this.rootHidden ??= this.base !== undefined && this.protects('');
    const slash = relPath.lastIndexOf('/');
    const answer = this.rootHidden || (relPath !== '' && ((slash > 0 && this.hidesFolder(relPath.slice(0, slash))) || this.protects(relPath)));
    this.lastPath = relPath;
    this.lastAnswer = answer;
    return answer;
  }

  private hidesFolder(folder: string): boolean {
    const known = this.folders.get(folder);
    if (known !== undefined) return known;
    const slash = folder.lastIndexOf('/');
    const hidden = (slash > 0 && this.hidesFolder(folder.slice(0, slash))) || this.protects(folder);
    this.folders.set(folder, hidden);
    return hidden;
  }

  private protects(relPath: string): boolean {
    const action = this.policy.decide(relPath, 'read', this.base).action;
    return action === 'deny' || action === 'ask';
  }
}
