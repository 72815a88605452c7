import { STRICTNESS, type PolicyDecision, type Risk } from '../types.ts';
import { PROTECTED_FAMILIES } from './protected.ts';
import { parseRuleList } from './parse-rules.ts';
import { RuleList, joinRuleForm, ruleTest, type CompiledRule } from './rule-list.ts';
import type { Rule, SourcedRule } from './types.ts';
import type { LinkIndex } from '../links/link-index.ts';

export { ruleSchema, rulesSchema, type Rule, type SourcedRule } from './types.ts';
export type { PolicyDecision, RuleAction, RuleSource } from '../types.ts';

/**
 * Security: the paths that hold credentials. Reading them puts the secret into the transcript and the
 * provider's logs, so they are asked every time, and search/find skip them.
 */
export const SECRET_GLOBS: readonly string[] = [
  '*.env',
  '.env',
  '.env.*',
  '.env-*',
  '.env_*',
  '.envrc',
  '.flaskenv',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  '*.kdbx',
  '*.gpg',
  '*.asc',
  '*.ppk',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.htpasswd',
  '.vault-token',
  '.s3cfg',
  '.boto',
  '.dockercfg',
  'auth.json',
  'kubeconfig',
  '*.kubeconfig',
  '**/.git/config',
  '**/.git/modules/**/config',
  '**/.ssh/**',
  '**/.aws/**',
  '**/.azure/**',
  '**/.gnupg/**',
  '**/.docker/config.json',
  '**/.kube/config',
  '**/.config/gh/hosts.yml',
  '**/.cargo/credentials',
  '**/.cargo/credentials.toml',
  '**/.m2/settings.xml',
  '**/.m2/settings-security.xml',
  'credentials.json',
  'service-account*.json',
  'secrets.json',
  'secrets.toml',
  'secrets.y*ml',
  '*.tfvars',
  '*.tfstate',
  '*.tfstate.*',
];

const SECRET_REASON =
  "it holds credentials: what is read goes to the language model and its provider's logs, and cannot be taken back";

/**
 * Built-in rules, evaluated before the person's own rules (which therefore win). Every built-in rule
 * (and every ask or deny rule of the person's) matches case-insensitively, and also against the
 * path's absolute location: see `Policy.decide`.
 */
export const BUILT_IN_RULES: readonly SourcedRule[] = [
  ...SECRET_GLOBS.map((glob): SourcedRule => ({
    rule: { glob, read: 'ask', write: 'ask' },
    source: 'secret',
    reason: SECRET_REASON,
  })),
  ...PROTECTED_FAMILIES.flatMap(({ reason, globs }) =>
    globs.map((glob): SourcedRule => ({ rule: { glob, write: 'ask' }, source: 'protected', reason })),
  ),
  // Security: writing into .git can rewrite hooks, which run code on the next git command.
  { rule: { glob: '**/.git/**', write: 'deny' }, source: 'built-in', reason: 'git runs hooks from this folder' },
];

/** A workspace-scope rule without its `allow` actions (reported by `scopeRules`). */
export function tighteningOnly(rule: Rule): Rule {
  return {
    glob: rule.glob,
    ...(rule.read && rule.read !== 'allow' ? { read: rule.read } : {}),
    ...(rule.write && rule.write !== 'allow' ? { write: rule.write } : {}),
  };
}

/** The strictest of several decisions (deny, then ask, then no rule, then allow). */
export function strictest(decisions: readonly PolicyDecision[]): PolicyDecision {
  return decisions.reduce((a, b) => (STRICTNESS[b.action] > STRICTNESS[a.action] ? b : a), { action: 'allow' });
}

/** An absolute local folder path as rules see it: "/"-separated, no drive letter, no leading "/". */
function ruleForm(folder: string): string {
  return folder
    .replace(/\\/g, '/')
    .replace(/^[a-zA-Z]:/, '')
    .replace(/^\/+|\/+$/g, '');
}

export interface PolicyOptions {
  /** Leave out the built-in lists (tests of the person's rules alone). */
  readonly includeDefaults?: boolean;
  /**
   * Rules from workspace or folder settings. Security: they can only tighten: each decision is the
   * stricter of theirs and the built-in + user rules' decision, and their `allow` is never honoured.
   */
  readonly workspaceRules?: readonly Rule[];
  /** The workspace folders' absolute local paths (a folder nested in another is judged by the outer one's rules too). */
  readonly folders?: readonly string[];
  /**
   * Some rules value was invalid: every path asks unless a rule decides something stricter.
   * Security: a floor under the other rules, never a rule after them, so a deny stays a deny.
   */
  readonly askEverything?: boolean;
  /** Their real paths (symlinks resolved), in the same order, where known: folders are nested by these. */
  readonly realFolders?: readonly (string | undefined)[];
}

/** Folder paths whose rule form a policy remembers at most. */
const FOLDER_FORMS_REMEMBERED = 256;

/** deny / ask / allow rules over workspace-folder-relative paths, per risk; the last match wins. */
export class Policy {
  readonly userRules: readonly Rule[];
  readonly workspaceRules: readonly Rule[];
  private readonly options: PolicyOptions;
  private readonly main: RuleList;
  private readonly workspace: RuleList;
  /** The workspace folders' real paths (rule form), so a folder nested in another is judged by the outer one's rules too. */
  private readonly folders: readonly string[];
  /** The folders as given (rule form), for `within`. */
  private readonly given: readonly string[];
  /** A folder's real path (rule form) by the form it is given in, where they differ. */
  private readonly realForms = new Map<string, string>();
  private readonly forms = new Map<string, string>();
  /** The workspace's links, when this is a view that judges every name a path has (see `withLinks`). */
  private links: LinkIndex | undefined;

  constructor(userRules: readonly Rule[], options: PolicyOptions = {}) {
    this.userRules = userRules;
    this.workspaceRules = options.workspaceRules ?? [];
    this.options = options;
    const user = userRules.map((rule): SourcedRule => ({ rule, source: 'user' }));
    this.main = new RuleList(options.includeDefaults === false ? user : [...BUILT_IN_RULES, ...user]);
    // The floor comes first in the tightening list: any later ask or deny rule there still decides.
    const floor: SourcedRule[] = options.askEverything
      ? [{ rule: { glob: '**', read: 'ask', write: 'ask' }, source: 'built-in', reason: INVALID_RULES_REASON }]
      : [];
    this.workspace = new RuleList([
      ...floor,
      ...this.workspaceRules.map((rule): SourcedRule => ({ rule: tighteningOnly(rule), source: 'workspace' })),
    ]);
    this.given = (options.folders ?? []).map(ruleForm);
    // Security: folders are nested by their real paths: an outer folder opened through a link
    // (on macOS /tmp and /var are links) still holds the folders inside its real location.
    this.folders = this.given.map((form, i) => {
      const real = options.realFolders?.[i];
      if (real === undefined || ruleForm(real) === form) return form;
      this.realForms.set(form, ruleForm(real));
      return ruleForm(real);
    });
  }

  /** `ruleForm(folder)`, remembered: every decision of a search names the same few folders. */
  private formOf(folder: string): string {
    let form = this.forms.get(folder);
    if (form === undefined) {
      form = ruleForm(folder);
      if (this.forms.size >= FOLDER_FORMS_REMEMBERED) this.forms.clear();
      this.forms.set(folder, form);
    }
    return form;
  }

  private get compiled(): readonly CompiledRule[] {
    return [...this.main.compiled, ...this.workspace.compiled];
  }

  /**
   * The same rules, knowing the workspace folders' local paths and, where known, their real paths
   * (for folders nested in one another).
   */
  within(folders: readonly (string | undefined)[], realFolders: readonly (string | undefined)[] = []): Policy {
    const known = folders.flatMap((f, i) => (f === undefined ? [] : [{ folder: f, real: realFolders[i] }]));
    const reals = known.map((k) => k.real);
    if (
      this.links === undefined &&
      known.length === this.given.length &&
      known.every((k, i) => ruleForm(k.folder) === this.given[i] && ruleForm(k.real ?? k.folder) === this.folders[i])
    )
      return this;
    return new Policy(this.userRules, { ...this.options, folders: known.map((k) => k.folder), realFolders: reals });
  }

  /**
   * A view of the same rules that also judges each path by the other names the workspace's links
   * give it, the strictest decision winning (see `LinkIndex`). Shares the compiled rules.
   */
  withLinks(links: LinkIndex): Policy {
    if (links === this.links) return this;
    const view = Object.create(this) as Policy;
    view.links = links.links.length === 0 ? undefined : links;
    return view;
  }

  /**
   * `relPath` is relative to its workspace folder, with "/" separators; "" is the folder itself.
   * `folder`, the folder's absolute local path when it has one: Security: protective rules also match
   * the absolute path (a folder opened at "~/.aws" is inside "**\/.aws/**"), and a folder inside
   * another workspace folder is judged by the outer folder's rules as well.
   */
  decide(relPath: string, risk: Risk, folder?: string): PolicyDecision {
    if (folder === undefined) return this.decideIn(relPath, risk);
    const own = this.decidePlaced(relPath, risk, folder);
    return this.links === undefined
      ? own
      : this.links.strictest(own, relPath, folder, (rel, at) => this.decidePlaced(rel, risk, at));
  }

  /** `decide` for one name of a path (its links aside). */
  private decidePlaced(relPath: string, risk: Risk, folder: string): PolicyDecision {
    const base = this.formOf(folder);
    let decision = this.decideIn(relPath, risk, base);
    const real = this.realForms.get(base) ?? base;
    for (const outer of this.folders) {
      if (!holds(outer, real)) continue;
      const absolute = joinRuleForm(real, relPath);
      const fromOuter = this.decideIn(outer === '' ? absolute : absolute.slice(outer.length + 1), risk, base, relPath);
      if (
        (fromOuter.action === 'deny' || fromOuter.action === 'ask') &&
        STRICTNESS[fromOuter.action] > STRICTNESS[decision.action]
      )
        decision = fromOuter;
    }
    return decision;
  }

  /** The decision of both lists for a path relative to one folder; `base` and `absRel` as in `RuleList.decide`. */
  private decideIn(relPath: string, risk: Risk, base?: string, absRel = relPath): PolicyDecision {
    const main = this.main.decide(relPath, risk, base, absRel);
    const workspace = this.workspace.decide(relPath, risk, base, absRel);
    return STRICTNESS[workspace.action] > STRICTNESS[main.action] && workspace.action !== 'default' ? workspace : main;
  }

  /**
   * True only when no rule applies to `relPath` (not "") nor to any folder above it, as `decide`
   * would judge each with `folder`, so none is denied or asked; false means: ask `decide`. Quick tests
   * alone, for the many results of a search: a view with links, or a folder inside another workspace
   * folder (judged by the outer one's rules too), always asks.
   */
  clearOfRules(relPath: string, risk: Risk, folder?: string): boolean {
    if (this.links !== undefined) return false;
    const base = folder === undefined ? undefined : this.formOf(folder);
    if (base !== undefined && this.nested(base)) return false;
    return this.main.clearOfRules(relPath, risk, base) && this.workspace.clearOfRules(relPath, risk, base);
  }

  private lastNestedBase: string | undefined;
  private lastNested = false;

  /** Whether the folder `base` (rule form) lies inside another workspace folder (see `decidePlaced`), remembered for the last folder. */
  private nested(base: string): boolean {
    if (base !== this.lastNestedBase) {
      const real = this.realForms.get(base) ?? base;
      this.lastNested = this.folders.some((outer) => holds(outer, real));
      this.lastNestedBase = base;
    }
    return this.lastNested;
  }

  /** True when `relPath`, any of its parent folders (or, given `folder`, the folder itself) is denied or asked: search must not enter it. */
  hidesFromSearch(relPath: string, risk: Risk, folder?: string): boolean {
    const hides = (rel: string): boolean => {
      const action = this.decide(rel, risk, folder).action;
      return action === 'deny' || action === 'ask';
    };
    if (folder !== undefined && hides('')) return true;
    const parts = relPath.split('/');
    for (let i = 1; i <= parts.length; i++) if (hides(parts.slice(0, i).join('/'))) return true;
    return false;
  }

  /**
   * Globs that ripgrep must exclude so it never opens them: every deny/ask rule for `risk` that no
   * later allow rule could overlap (all protective, so matched in any case). Results are always
   * filtered with `hidesFromSearch` as well, so an overlap judged wrongly here can only cost an
   * exclusion, never leak a path.
   */
  searchExclusions(risk: Risk): string[] {
    const out: string[] = [];
    const compiled = this.compiled;
    compiled.forEach((c, i) => {
      const action = c.rule[risk];
      if (action !== 'deny' && action !== 'ask') return;
      const relaxedLater = compiled
        .slice(i + 1)
        .some(
          (later) =>
            later.rule[risk] === 'allow' && (ruleTest(later, true)(c.example) || ruleTest(c, true)(later.example)),
        );
      if (!relaxedLater) out.push(c.rule.glob);
    });
    return out;
  }
}

/** Whether the workspace folder `outer` holds the other folder `real` (both real paths in rule form; "" is the file system's root). */
function holds(outer: string, real: string): boolean {
  return outer !== real && (outer === '' || real.startsWith(`${outer}/`));
}

export interface ParsedRules {
  readonly policy: Policy;
  /** Narrated problems; while any is present every path no stricter rule covers asks. */
  readonly errors: readonly string[];
}

/** Why every path asks while a rules value is invalid (shown with the decision). */
export const INVALID_RULES_REASON = 'a workspaceTools.rules value is invalid, so every path asks until it is fixed';

/**
 * Parses the person's rules. Security: an invalid rule never loosens anything: its valid
 * neighbours stay in force, and every path that no stricter rule covers asks until it is fixed
 * (a deny stays a deny), and the error is reported.
 */
export function parseRules(raw: unknown, name?: string): ParsedRules {
  const { rules, errors } = parseRuleList(raw, undefined, name);
  return { policy: new Policy(rules, { askEverything: errors.length > 0 }), errors };
}
