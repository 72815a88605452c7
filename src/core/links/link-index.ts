import { STRICTNESS, type PolicyDecision } from '../types.ts';

/** A symbolic link found in a workspace folder. */
export interface FoundLink {
  /** The workspace folder's local path as the session names it (what `Policy.decide` is given). */
  readonly folder: string;
  /** The link's path relative to that folder ("/"-separated). */
  readonly rel: string;
  /** The link's own real location: the folder's real path and `rel` (the walk never enters a link, so its parents are real). */
  readonly at: string;
  /** Where it leads: real, absolute, "/"-separated. */
  readonly target: string;
}

/** Another name a path has through a link: `rel` in `folder`, through the link `link` (relative to that folder). */
export interface Alias {
  readonly rel: string;
  readonly folder: string;
  readonly link: string;
}

/** The most names one path is given through links (a link to an ancestor gives endless ones). */
const MAX_ALIASES = 32;

/** A path as the index compares it: "/"-separated, no trailing "/". */
export function slashed(path: string): string {
  const s = path.replace(/\\/g, '/');
  return s.length > 1 && s.endsWith('/') ? s.slice(0, -1) : s;
}

/**
 * The symbolic links of the workspace folders and where they lead, for judging a path by every name
 * it has. Security: VS Code and git follow links, so with `.vscode -> config` writing
 * "config/settings.json" is writing ".vscode/settings.json", and with `.env -> notes/env.txt`
 * "notes/env.txt" holds the secret. Each path is therefore also judged as the names the links give
 * it (see `Policy.withLinks`).
 */
export class LinkIndex {
  /** The links by the real path they lead to. */
  private readonly byTarget = new Map<string, FoundLink[]>();
  /** Each folder's real path, by the path the session names it with and by the real path itself. */
  private readonly reals = new Map<string, string>();
  /** The shortest target: shorter prefixes of a path need no lookup. */
  private shortest = Infinity;
  /** False when a folder had more entries than the walk reads: links deeper than that were not seen. */
  readonly complete: boolean;
  readonly links: readonly FoundLink[];

  constructor(folders: ReadonlyMap<string, string>, links: readonly FoundLink[], complete: boolean) {
    for (const [folder, real] of folders) {
      this.reals.set(slashed(folder), slashed(real));
      this.reals.set(slashed(real), slashed(real));
    }
    for (const link of links) {
      const known = this.byTarget.get(link.target);
      if (known) known.push(link);
      else this.byTarget.set(link.target, [link]);
      this.shortest = Math.min(this.shortest, link.target.length);
    }
    this.links = links;
    this.complete = complete;
  }

  /**
   * Whether `other` knows the same folders and the same links (in any order): a walk that found
   * nothing new keeps the earlier index, so what was judged with it (the shell's verdicts) stays valid.
   */
  sameAs(other: LinkIndex): boolean {
    if (other === this) return true;
    if (
      other.complete !== this.complete ||
      other.links.length !== this.links.length ||
      other.reals.size !== this.reals.size
    )
      return false;
    for (const [folder, real] of this.reals) if (other.reals.get(folder) !== real) return false;
    const key = (l: FoundLink): string => `${l.folder}\0${l.rel}\0${l.at}\0${l.target}`;
    const mine = new Set(this.links.map(key));
    return other.links.every((l) => mine.has(key(l)));
  }

  /** The real path of a workspace folder (given by its local or real path); the path itself when unknown. */
  realOf(folder: string): string {
    const key = slashed(folder);
    return this.reals.get(key) ?? key;
  }

  /**
   * The other names of `rel` in `folder`: each link that leads to it or to a folder above it gives
   * one, and so on through further links (each link once per chain), at most MAX_ALIASES.
   */
  aliasesOf(rel: string, folder: string): Alias[] {
    if (this.byTarget.size === 0) return [];
    const real = this.realOf(folder);
    const out: Alias[] = [];
    const queue: { readonly at: string; readonly used: readonly FoundLink[] }[] = [
      { at: rel === '' ? real : `${real}/${rel}`, used: [] },
    ];
    for (let next = queue.shift(); next !== undefined && out.length < MAX_ALIASES; next = queue.shift()) {
      const { at, used } = next;
      for (let end = at.length; end >= this.shortest && end > 0; end = at.lastIndexOf('/', end - 1)) {
        const links = this.byTarget.get(end === at.length ? at : at.slice(0, end));
        if (links === undefined) continue;
        const rest = at.slice(end);
        for (const link of links) {
          if (used.includes(link) || out.length >= MAX_ALIASES) continue;
          out.push({ rel: link.rel + rest, folder: link.folder, link: link.rel });
          queue.push({ at: link.at + rest, used: [...used, link] });
        }
      }
    }
    return out;
  }

  /**
   * `own`, the decision on `rel` in `folder`, made stricter by the decision on any other name links
   * give it (`decide` judges one name, without links). Only a protective decision (ask, deny) of
   * another name counts: an allow rule for another name loosens nothing.
   */
  strictest(
    own: PolicyDecision,
    rel: string,
    folder: string,
    decide: (rel: string, folder: string) => PolicyDecision,
  ): PolicyDecision {
    let chosen = own;
    for (const alias of this.aliasesOf(rel, folder)) {
      const decision = decide(alias.rel, alias.folder);
      if (
        (decision.action !== 'ask' && decision.action !== 'deny') ||
        STRICTNESS[decision.action] <= STRICTNESS[chosen.action]
      )
        continue;
      const through = `it is also "${alias.rel}", through the link "${alias.link}"`;
      chosen = {
        ...decision,
        reason: decision.reason ? `${through}, and ${decision.reason}` : through,
        alias: { path: alias.rel, link: alias.link },
      };
    }
    return chosen;
  }
}

export const NO_LINKS = new LinkIndex(new Map(), [], true);
