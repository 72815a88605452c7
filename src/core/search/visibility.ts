import type { SearchPolicy } from './port.ts';

/** Folder answers remembered at most; the cache starts over beyond it. */
const MAX_FOLDERS = 4096;

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
  // A file's matching lines arrive together, and a folder's files mostly do: the last answers are kept.
  private lastPath: string | undefined;
  private lastAnswer = false;
  private lastFolder: string | undefined;
  private lastFolderAnswer = false;

  constructor(policy: SearchPolicy, base?: string) {
    this.policy = policy;
    this.base = base;
  }

  /** True when `relPath` (folder-relative, "/"-separated), any folder above it, or the workspace folder itself is denied or asked. */
  hides(relPath: string): boolean {
    if (relPath === this.lastPath) return this.lastAnswer;
    this.rootHidden ??= this.base !== undefined && this.protects('');
    // Most results: no rule can reach the path or a folder above it, and the quick tests say so.
    if (!this.rootHidden && relPath !== '' && this.policy.clearOfRules(relPath, 'read', this.base)) {
      this.lastPath = relPath;
      this.lastAnswer = false;
      return false;
    }
    const slash = relPath.lastIndexOf('/');
    let answer = this.rootHidden;
    if (!answer && relPath !== '') {
      if (slash > 0) {
        // Compared in place: most results are in the last result's folder, and slicing each costs an allocation.
        if (slash !== this.lastFolder?.length || !relPath.startsWith(this.lastFolder)) {
          this.lastFolder = relPath.slice(0, slash);
          this.lastFolderAnswer = this.hidesFolder(this.lastFolder);
        }
        answer = this.lastFolderAnswer;
      }
      answer ||= this.protects(relPath);
    }
    this.lastPath = relPath;
    this.lastAnswer = answer;
    return answer;
  }

  private hidesFolder(folder: string): boolean {
    const known = this.folders.get(folder);
    if (known !== undefined) return known;
    const slash = folder.lastIndexOf('/');
    const hidden = (slash > 0 && this.hidesFolder(folder.slice(0, slash))) || this.protects(folder);
    // Bounded: a walk of a huge tree must not keep every folder it saw (results come folder by folder anyway).
    if (this.folders.size >= MAX_FOLDERS) this.folders.clear();
    this.folders.set(folder, hidden);
    return hidden;
  }

  private protects(relPath: string): boolean {
    const action = this.policy.decide(relPath, 'read', this.base).action;
    return action === 'deny' || action === 'ask';
  }
}
