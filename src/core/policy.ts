import * as z from 'zod';
import type { Risk } from './tool.ts';
import { PROTECTED_GROUPS } from './protected.ts';
import { anyOf, ruleRegex, type RuleRegex } from './policy/rule-glob.ts';

export type RuleAction = 'allow' | 'ask' | 'deny';

export const ruleSchema = z.strictObject({
  glob: z.string().min(1).describe('A glob over workspace-folder-relative paths, e.g. "**/*.pem" or "secrets/**". A glob without "/" matches the file name at any depth.'),
  read: z.enum(['allow', 'ask', 'deny']).optional().describe('What happens when a tool reads or searches a matching path.'),
  write: z.enum(['allow', 'ask', 'deny']).optional().describe('What happens when a tool stages or saves a matching path.'),
});
export type Rule = z.infer<typeof ruleSchema>;
export const rulesSchema = z.array(ruleSchema);

/**
 * Security: the paths that hold credentials. Reading them puts the secret into the transcript and the
 * provider's logs, so they are asked every time, and search/find skip them.
 */
export const SECRET_GLOBS: readonly string[] = [
  '*.env', '.env', '.env.*', '.env-*', '.env_*', '.envrc', '.flaskenv',
  '*.pem', '*.key', '*.p12', '*.pfx', '*.jks', '*.keystore', '*.kdbx', '*.gpg', '*.asc', '*.ppk',
  'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*',
  '.npmrc', '.yarnrc', '.yarnrc.yml', '.pypirc', '.netrc', '_netrc', '.pgpass', '.git-credentials',
  '.htpasswd', '.vault-token', '.s3cfg', '.boto', '.dockercfg', 'auth.json', 'kubeconfig', '*.kubeconfig',
  '**/.git/config', '**/.git/modules/**/config', '**/.ssh/**', '**/.aws/**', '**/.azure/**', '**/.gnupg/**',
  '**/.docker/config.json', '**/.kube/config', '**/.config/gh/hosts.yml', '**/.cargo/credentials', '**/.cargo/credentials.toml',
  '**/.m2/settings.xml', '**/.m2/settings-security.xml',
  'credentials.json', 'service-account*.json', 'secrets.json', 'secrets.toml', 'secrets.y*ml',
  '*.tfvars', '*.tfstate', '*.tfstate.*',
];

/**
 * Where a rule comes from. `secret`, `protected` and `built-in` are this extension's own lists;
 * `user` rules come from the person's user (or machine/policy) settings and may loosen them;
 * `workspace` rules come from files inside the workspace, which an agent or a cloned repository
 * can write, so they may only tighten.
 */
export type RuleSource = 'secret' | 'protected' | 'built-in' | 'user' | 'workspace';

export interface SourcedRule {
  readonly rule: Rule;
  readonly source: RuleSource;
  /** Why the rule exists, for the person (built-in rules). */
  readonly reason?: string;
}

const SECRET_REASON = 'it holds credentials: what is read goes to the language model and its provider\'s logs, and cannot be taken back';

/**
 * Built-in rules, evaluated before the person's own rules (which therefore win). Every built-in rule
 * (and every ask or deny rule of the person's) matches case-insensitively, and also against the
 * path's absolute location: see `Policy.decide`.
 */
export const BUILT_IN_RULES: readonly SourcedRule[] = [
  ...SECRET_GLOBS.map((glob): SourcedRule => ({ rule: { glob, read: 'ask', write: 'ask' }, source: 'secret', reason: SECRET_REASON })),
  ...PROTECTED_GROUPS.flatMap(({ reason, globs }) => globs.map((glob): SourcedRule => ({ rule: { glob, write: 'ask' }, source: 'protected', reason }))),
  // Security: writing into .git can rewrite hooks, which run code on the next git command.
  { rule: { glob: '**/.git/**', write: 'deny' }, source: 'built-in', reason: 'git runs hooks from this folder' },
];

export interface PolicyDecision {
  /** `default` means no rule matched: the host's ordinary confirmation applies. */
  readonly action: RuleAction | 'default';
  readonly rule?: string;
  readonly source?: RuleSource;
  readonly reason?: string;
}

const STRICTNESS: Record<PolicyDecision['action'], number> = { allow: 0, default: 1, ask: 2, deny: 3 };

/** A workspace-scope rule without its `allow` actions (reported by `scopeRules`). */
export function tighteningOnly(rule: Rule): Rule {
  return { glob: rule.glob, ...(rule.read && rule.read !== 'allow' ? { read: rule.read } : {}), ...(rule.write && rule.write !== 'allow' ? { write: rule.write } : {}) };
}

/** The strictest of several decisions (deny, then ask, then no rule, then allow). */
export function strictest(decisions: readonly PolicyDecision[]): PolicyDecision {
  return decisions.reduce((a, b) => (STRICTNESS[b.action] > STRICTNESS[a.action] ? b : a), { action: 'allow' });
}

interface CompiledRule extends SourcedRule {
  /** One of this extension's own lists: reviewed globs, matched as protective rules whatever their action. */
  readonly builtIn: boolean;
  readonly byName: boolean;
  readonly regex: RuleRegex;
  /** "secrets/**" also covers the folder "secrets" itself. */
  readonly folderRegex: RuleRegex | undefined;
  /** A path this glob matches, to test whether two rules can overlap. */
  readonly example: string;
  /** Case-sensitive and case-insensitive tests, compiled when first needed. */
  readonly tests: Partial<Record<'cs' | 'ci', (path: string) => boolean>>;
}

const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

function compile({ rule, source, reason }: SourcedRule): CompiledRule {
  const builtIn = source === 'secret' || source === 'protected' || source === 'built-in';
  const folderGlob = rule.glob.endsWith('/**') ? rule.glob.slice(0, -3) : undefined;
  return {
    rule,
    source,
    ...(reason ? { reason } : {}),
    builtIn,
    byName: !rule.glob.includes('/'),
    regex: ruleRegex(rule.glob, builtIn),
    folderRegex: folderGlob ? ruleRegex(folderGlob, builtIn) : undefined,
    example: rule.glob.replace(/\*\*\/?/g, '').replace(/[*?]/g, 'x').replace(/\[[^\]]*\]/g, 'x').replace(/\{([^,}]*)[^}]*\}/g, '$1') || 'x',
    tests: {},
  };
}

function ruleTest(c: CompiledRule, ignoreCase: boolean): (path: string) => boolean {
  const key = ignoreCase ? 'ci' : 'cs';
  const known = c.tests[key];
  if (known) return known;
  const glob = anyOf([c.regex], ignoreCase);
  const folder = c.folderRegex ? anyOf([c.folderRegex], ignoreCase) : undefined;
  const test = c.byName ? (p: string) => glob(nameOf(p)) || (folder?.(p) ?? false) : (p: string) => glob(p) || (folder?.(p) ?? false);
  c.tests[key] = test;
  return test;
}

/**
 * Security: a rule that protects (built-in, or a person's ask/deny) matches whatever the case: on
 * the case-insensitive disks of macOS and Windows ".ENV" is ".env" and ".GIT/hooks" is ".git/hooks",
 * and on any disk "Server.PEM" holds a key. A person's allow rule stays exact, so it relaxes only
 * what it names.
 */
function protective(c: CompiledRule, action: RuleAction): boolean {
  return c.builtIn || action !== 'allow';
}

/** An absolute local folder path as rules see it: "/"-separated, no drive letter, no leading "/". */
function ruleForm(folder: string): string {
  return folder.replace(/\\/g, '/').replace(/^[a-zA-Z]:/, '').replace(/^\/+|\/+$/g, '');
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
}

/** File names (and folder paths) whose answers a rule list remembers at most (it starts over beyond). */
const NAMES_REMEMBERED = 8192;

/** A list of rules where the last match wins, compiled once: rules are checked for every search result. */
class RuleList {
  readonly compiled: readonly CompiledRule[];
  // Quick tests that a rule might match (case-insensitive, so a superset): most paths match no rule, and these say so.
  private readonly anyByNameTest: (name: string) => boolean;
  /** `anyByNameTest`'s answers: names repeat across a tree (index.ts, package.json), and the test is pure. */
  private readonly names = new Map<string, boolean>();
  /** Path rules "**\/X/..." need a segment X: those segments, lower-cased. */
  private readonly anywhereSegments: ReadonlySet<string>;
  /** The other path rules, in one test. */
  private readonly anyOtherPath: (path: string) => boolean;
  /** `folderHit`'s answers: a search asks about the same few workspace folders for every result. */
  private readonly folderHits = new Map<string, boolean>();
  /** `hasAnywhereSegment`'s answers for a path's folder part: a tree's files share their folders. */
  private readonly folderSegments = new Map<string, boolean>();

  constructor(rules: readonly SourcedRule[]) {
    this.compiled = rules.map(compile);
    this.anyByNameTest = anyOf(this.compiled.filter((c) => c.byName).map((c) => c.regex), true);
    const segments = new Set<string>();
    const others: RuleRegex[] = [];
    for (const c of this.compiled) {
      if (c.byName) continue;
      // Only for the host's RegExp, whose case-insensitive match never pairs a non-ASCII character with an ASCII one.
      const anywhere = c.regex.backtrackSafe ? /^\*\*\/([\x20-\x7e]+?)(?:\/|$)/.exec(c.rule.glob) : null;
      if (anywhere && !/[*?[\]{}()!\\]/.test(anywhere[1]!)) segments.add(anywhere[1]!.toLowerCase());
      else others.push(c.regex, ...(c.folderRegex ? [c.folderRegex] : []));
    }
    this.anywhereSegments = segments;
    this.anyOtherPath = anyOf(others, true);
  }

  private anyByName(name: string): boolean {
    let known = this.names.get(name);
    if (known === undefined) {
      known = this.anyByNameTest(name);
      if (this.names.size >= NAMES_REMEMBERED) this.names.clear();
      this.names.set(name, known);
    }
    return known;
  }

  private anyByPath(path: string): boolean {
    return this.hasAnywhereSegment(path) || this.anyOtherPath(path);
  }

  private hasAnywhereSegment(path: string): boolean {
    if (this.anywhereSegments.size === 0) return false;
    const slash = path.lastIndexOf('/');
    if (slash === -1) return this.anywhereSegments.has(path.toLowerCase());
    const folder = path.slice(0, slash);
    let known = this.folderSegments.get(folder);
    if (known === undefined) {
      known = folder.toLowerCase().split('/').some((segment) => this.anywhereSegments.has(segment));
      if (this.folderSegments.size >= NAMES_REMEMBERED) this.folderSegments.clear();
      this.folderSegments.set(folder, known);
    }
    return known || this.anywhereSegments.has(path.slice(slash + 1).toLowerCase());
  }

  /** Whether a workspace folder's own path (local, not yet in rule form) holds one of this list's "anywhere" segments. */
  folderHit(folder: string): boolean {
    let known = this.folderHits.get(folder);
    if (known === undefined) {
      known = this.hasAnywhereSegment(ruleForm(folder));
      this.folderHits.set(folder, known);
    }
    return known;
  }

  /** `absolute`: the same path from the filesystem root (rule form), when known; `baseHit`: its folder part holds an "anywhere" segment. */
  decide(relPath: string, risk: Risk, absolute?: string, baseHit = false): PolicyDecision {
    let decision: PolicyDecision = { action: 'default' };
    const relMatters = relPath !== '' && (this.anyByName(nameOf(relPath)) || this.anyByPath(relPath));
    // The absolute path ends with the relative one: it has the same name, and only its folder part adds segments.
    const absMatters = absolute !== undefined && absolute !== '' && (relMatters || baseHit || (relPath === '' && this.anyByName(nameOf(absolute))) || this.anyOtherPath(absolute));
    if (!relMatters && !absMatters) return decision;
    for (const c of this.compiled) {
      const action = c.rule[risk];
      if (action === undefined) continue;
      const strict = protective(c, action);
      const test = ruleTest(c, strict);
      if ((relMatters && test(relPath)) || (strict && absMatters && test(absolute!))) decision = { action, rule: c.rule.glob, source: c.source, ...(c.reason ? { reason: c.reason } : {}) };
    }
    return decision;
  }
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
  /** The workspace folders (rule form), so a folder nested in another is judged by the outer one's rules too. */
  private readonly folders: readonly string[];
  private readonly forms = new Map<string, string>();

  constructor(userRules: readonly Rule[], options: PolicyOptions = {}) {
    this.userRules = userRules;
    this.workspaceRules = options.workspaceRules ?? [];
    this.options = options;
    const user = userRules.map((rule): SourcedRule => ({ rule, source: 'user' }));
    this.main = new RuleList(options.includeDefaults === false ? user : [...BUILT_IN_RULES, ...user]);
    this.workspace = new RuleList(this.workspaceRules.map((rule): SourcedRule => ({ rule: tighteningOnly(rule), source: 'workspace' })));
    this.folders = (options.folders ?? []).map(ruleForm);
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

  private get compiled(): readonly CompiledRule[] { return [...this.main.compiled, ...this.workspace.compiled]; }

  /** The same rules, knowing the workspace folders' local paths (for folders nested in one another). */
  within(folders: readonly (string | undefined)[]): Policy {
    const known = folders.filter((f): f is string => f !== undefined);
    if (known.length === this.folders.length && known.every((f, i) => ruleForm(f) === this.folders[i])) return this;
    return new Policy(this.userRules, { ...this.options, folders: known });
  }

  /**
   * `relPath` is relative to its workspace folder, with "/" separators; "" is the folder itself.
   * `folder`, the folder's absolute local path when it has one: Security: protective rules also match
   * the absolute path (a folder opened at "~/.aws" is inside "**\/.aws/**"), and a folder inside
   * another workspace folder is judged by the outer folder's rules as well.
   */
  decide(relPath: string, risk: Risk, folder?: string): PolicyDecision {
    if (folder === undefined) return this.decideIn(relPath, risk, undefined, undefined);
    const base = this.formOf(folder);
    const absolute = relPath === '' ? base : base === '' ? relPath : `${base}/${relPath}`;
    let decision = this.decideIn(relPath, risk, folder, absolute);
    for (const outer of this.folders) {
      // Only the folders this one lies inside.
      if (outer === base || !(outer === '' || base.startsWith(`${outer}/`))) continue;
      const fromOuter = this.decideIn(outer === '' ? absolute : absolute.slice(outer.length + 1), risk, folder, absolute);
      if ((fromOuter.action === 'deny' || fromOuter.action === 'ask') && STRICTNESS[fromOuter.action] > STRICTNESS[decision.action]) decision = fromOuter;
    }
    return decision;
  }

  /** The decision of both lists for a path relative to one folder (`absolute`: the path's absolute form, given with `folder`). */
  private decideIn(relPath: string, risk: Risk, folder: string | undefined, absolute: string | undefined): PolicyDecision {
    const judge = (list: RuleList): PolicyDecision =>
      folder === undefined || absolute === undefined ? list.decide(relPath, risk) : list.decide(relPath, risk, absolute, list.folderHit(folder));
    const main = judge(this.main);
    const workspace = judge(this.workspace);
    return STRICTNESS[workspace.action] > STRICTNESS[main.action] && workspace.action !== 'default' ? workspace : main;
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
      const relaxedLater = compiled.slice(i + 1).some((later) =>
        later.rule[risk] === 'allow' && (ruleTest(later, true)(c.example) || ruleTest(c, true)(later.example)));
      if (!relaxedLater) out.push(c.rule.glob);
    });
    return out;
  }
}

export interface ParsedRules {
  readonly policy: Policy;
  /** Narrated problems; when non-empty the policy asks for everything. */
  readonly errors: readonly string[];
}

/** Parses one `workspaceTools.rules` value; `where` names its scope in the errors ("in .vscode/settings.json"). */
export function parseRuleList(raw: unknown, where?: string): { rules: Rule[]; errors: string[] } {
  const at = where ? ` in ${where}` : '';
  const parsed = rulesSchema.safeParse(raw ?? []);
  if (!parsed.success) {
    return { rules: [], errors: parsed.error.issues.map((i) => `workspaceTools.rules${i.path.map((p) => `[${JSON.stringify(p)}]`).join('')}${at}: ${i.message}`) };
  }
  const errors = parsed.data.flatMap((r) => {
    const problem = ruleGlobProblem(r.glob);
    return problem === undefined ? [] : [`Invalid glob ${JSON.stringify(r.glob)} in workspaceTools.rules${at}: ${problem}.`];
  });
  return { rules: parsed.data, errors };
}

/** Why a person's rule glob cannot be used, or undefined. */
function ruleGlobProblem(glob: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(glob)) return 'it contains a NUL or control character';
  try {
    anyOf([ruleRegex(glob, false)], true);
    if (glob.endsWith('/**') && glob.length > 3) anyOf([ruleRegex(glob.slice(0, -3), false)], true);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Parses the person's rules. Security: an invalid rule never turns into "allow": the whole policy
 * falls back to asking for every path, and the error is reported.
 */
export function parseRules(raw: unknown): ParsedRules {
  const { rules, errors } = parseRuleList(raw);
  return { policy: errors.length ? askEverything() : new Policy(rules), errors };
}

export function askEverything(): Policy {
  return new Policy([{ glob: '**', read: 'ask', write: 'ask' }]);
}
