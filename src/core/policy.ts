import picomatch from 'picomatch';
import * as z from 'zod';
import type { Risk } from './tool.ts';
import { PROTECTED_GROUPS } from './protected.ts';

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
  '*.env', '.env', '.env.*', '.envrc',
  '*.pem', '*.key', '*.p12', '*.pfx', '*.jks', '*.keystore', '*.kdbx', '*.gpg', '*.asc',
  'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*',
  '.npmrc', '.yarnrc.yml', '.pypirc', '.netrc', '_netrc', '.pgpass', '.git-credentials',
  '**/.git/config', '**/.ssh/**', '**/.aws/**', '**/.gnupg/**', '**/.docker/config.json', '**/.kube/config',
  'credentials.json', 'service-account*.json', '*.tfvars', 'secrets.y*ml',
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

/** Built-in rules, evaluated before the person's own rules (which therefore win). */
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
  readonly regex: RegExp;
  readonly folderRegex: RegExp | undefined;
  readonly byName: boolean;
  readonly matches: (path: string) => boolean;
  /** A path this glob matches, to test whether two rules can overlap. */
  readonly example: string;
}

function compile({ rule, source, reason }: SourcedRule): CompiledRule {
  // Compiled once to a RegExp and tested directly: rules are checked for every search result.
  const regex = picomatch.makeRe(rule.glob, { dot: true });
  const byName = !rule.glob.includes('/');
  // "secrets/**" should also cover the folder "secrets" itself.
  const folderRegex = rule.glob.endsWith('/**') ? picomatch.makeRe(rule.glob.slice(0, -3), { dot: true }) : undefined;
  const example = rule.glob.replace(/\*\*\/?/g, '').replace(/[*?]/g, 'x').replace(/\[[^\]]*\]/g, 'x').replace(/\{([^,}]*)[^}]*\}/g, '$1') || 'x';
  return {
    rule,
    source,
    ...(reason ? { reason } : {}),
    regex,
    folderRegex,
    byName,
    example,
    matches: (p) => regex.test(byName ? p.slice(p.lastIndexOf('/') + 1) : p) || (folderRegex?.test(p) ?? false),
  };
}

export interface PolicyOptions {
  /** Leave out the built-in lists (tests of the person's rules alone). */
  readonly includeDefaults?: boolean;
  /**
   * Rules from workspace or folder settings. Security: they can only tighten: each decision is the
   * stricter of theirs and the built-in + user rules' decision, and their `allow` is never honoured.
   */
  readonly workspaceRules?: readonly Rule[];
}

/** A list of rules where the last match wins, compiled once: rules are checked for every search result. */
class RuleList {
  readonly compiled: readonly CompiledRule[];
  private readonly anyByName: RegExp | undefined;
  private readonly anyByPath: RegExp | undefined;

  constructor(rules: readonly SourcedRule[]) {
    this.compiled = rules.map(compile);
    // One alternation per kind of rule: most paths match no rule at all, and one test says so.
    const alternation = (res: RegExp[]): RegExp | undefined => (res.length ? new RegExp(res.map((r) => `(?:${r.source})`).join('|')) : undefined);
    this.anyByName = alternation(this.compiled.filter((c) => c.byName).map((c) => c.regex));
    this.anyByPath = alternation(this.compiled.flatMap((c) => [...(c.byName ? [] : [c.regex]), ...(c.folderRegex ? [c.folderRegex] : [])]));
  }

  decide(relPath: string, risk: Risk): PolicyDecision {
    let decision: PolicyDecision = { action: 'default' };
    if (!(this.anyByName?.test(relPath.slice(relPath.lastIndexOf('/') + 1)) ?? false) && !(this.anyByPath?.test(relPath) ?? false)) return decision;
    for (const { rule, matches, source, reason } of this.compiled) {
      const action = rule[risk];
      if (action !== undefined && matches(relPath)) decision = { action, rule: rule.glob, source, ...(reason ? { reason } : {}) };
    }
    return decision;
  }
}

/** deny / ask / allow rules over workspace-folder-relative paths, per risk; the last match wins. */
export class Policy {
  readonly userRules: readonly Rule[];
  readonly workspaceRules: readonly Rule[];
  private readonly main: RuleList;
  private readonly workspace: RuleList;

  constructor(userRules: readonly Rule[], options: PolicyOptions = {}) {
    this.userRules = userRules;
    this.workspaceRules = options.workspaceRules ?? [];
    const user = userRules.map((rule): SourcedRule => ({ rule, source: 'user' }));
    this.main = new RuleList(options.includeDefaults === false ? user : [...BUILT_IN_RULES, ...user]);
    this.workspace = new RuleList(this.workspaceRules.map((rule): SourcedRule => ({ rule: tighteningOnly(rule), source: 'workspace' })));
  }

  private get compiled(): readonly CompiledRule[] { return [...this.main.compiled, ...this.workspace.compiled]; }

  /** `relPath` is relative to its workspace folder, with "/" separators; "" is the folder itself. */
  decide(relPath: string, risk: Risk): PolicyDecision {
    if (relPath === '') return { action: 'default' };
    const main = this.main.decide(relPath, risk);
    const workspace = this.workspace.decide(relPath, risk);
    return STRICTNESS[workspace.action] > STRICTNESS[main.action] && workspace.action !== 'default' ? workspace : main;
  }

  /** True when `relPath` or any of its parent folders is denied or asked (search must not enter it). */
  hidesFromSearch(relPath: string, risk: Risk): boolean {
    const parts = relPath.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const action = this.decide(parts.slice(0, i).join('/'), risk).action;
      if (action === 'deny' || action === 'ask') return true;
    }
    return false;
  }

  /**
   * Globs that ripgrep must exclude so it never opens them: every deny/ask rule for `risk` that no
   * later allow rule could overlap. Results are always filtered with `hidesFromSearch` as well, so an
   * overlap judged wrongly here can only cost an exclusion, never leak a path.
   */
  searchExclusions(risk: Risk): string[] {
    const out: string[] = [];
    const compiled = this.compiled;
    compiled.forEach(({ rule }, i) => {
      const action = rule[risk];
      if (action !== 'deny' && action !== 'ask') return;
      const relaxedLater = compiled.slice(i + 1).some((later) =>
        later.rule[risk] === 'allow' && (later.matches(compiled[i]!.example) || compiled[i]!.matches(later.example)));
      if (!relaxedLater) out.push(rule.glob);
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
    try { picomatch.makeRe(r.glob); return []; } catch { return [`Invalid glob "${r.glob}" in workspaceTools.rules${at}.`]; }
  });
  return { rules: parsed.data, errors };
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
