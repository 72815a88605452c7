import picomatch from 'picomatch';
import * as z from 'zod';
import type { Risk } from './tool.ts';

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

/** Built-in rules, evaluated before the person's own rules (which therefore win). */
export const DEFAULT_RULES: readonly Rule[] = [
  ...SECRET_GLOBS.map((glob): Rule => ({ glob, read: 'ask', write: 'ask' })),
  // Security: writing into .git can rewrite hooks, which run code on the next git command.
  { glob: '**/.git/**', write: 'deny' },
];

export interface PolicyDecision {
  /** `default` means no rule matched: the host's ordinary confirmation applies. */
  readonly action: RuleAction | 'default';
  readonly rule?: string;
}

const STRICTNESS: Record<PolicyDecision['action'], number> = { allow: 0, default: 1, ask: 2, deny: 3 };

/** The strictest of several decisions (deny, then ask, then no rule, then allow). */
export function strictest(decisions: readonly PolicyDecision[]): PolicyDecision {
  return decisions.reduce((a, b) => (STRICTNESS[b.action] > STRICTNESS[a.action] ? b : a), { action: 'allow' });
}

interface CompiledRule {
  readonly rule: Rule;
  readonly regex: RegExp;
  readonly folderRegex: RegExp | undefined;
  readonly byName: boolean;
  readonly matches: (path: string) => boolean;
  /** A path this glob matches, to test whether two rules can overlap. */
  readonly example: string;
}

function compile(rule: Rule): CompiledRule {
  // Compiled once to a RegExp and tested directly: rules are checked for every search result.
  const regex = picomatch.makeRe(rule.glob, { dot: true });
  const byName = !rule.glob.includes('/');
  // "secrets/**" should also cover the folder "secrets" itself.
  const folderRegex = rule.glob.endsWith('/**') ? picomatch.makeRe(rule.glob.slice(0, -3), { dot: true }) : undefined;
  const example = rule.glob.replace(/\*\*\/?/g, '').replace(/[*?]/g, 'x').replace(/\[[^\]]*\]/g, 'x').replace(/\{([^,}]*)[^}]*\}/g, '$1') || 'x';
  return {
    rule,
    regex,
    folderRegex,
    byName,
    example,
    matches: (p) => regex.test(byName ? p.slice(p.lastIndexOf('/') + 1) : p) || (folderRegex?.test(p) ?? false),
  };
}

/** deny / ask / allow rules over workspace-folder-relative paths, per risk; the last match wins. */
export class Policy {
  private readonly compiled: readonly CompiledRule[];
  readonly userRules: readonly Rule[];

  constructor(userRules: readonly Rule[], options: { includeDefaults?: boolean } = {}) {
    this.userRules = userRules;
    const all = options.includeDefaults === false ? userRules : [...DEFAULT_RULES, ...userRules];
    this.compiled = all.map(compile);
    // One alternation per kind of rule: most paths match no rule at all, and one test says so.
    const alternation = (res: RegExp[]): RegExp | undefined => (res.length ? new RegExp(res.map((r) => `(?:${r.source})`).join('|')) : undefined);
    this.anyByName = alternation(this.compiled.filter((c) => c.byName).map((c) => c.regex));
    this.anyByPath = alternation(this.compiled.flatMap((c) => [...(c.byName ? [] : [c.regex]), ...(c.folderRegex ? [c.folderRegex] : [])]));
  }

  private readonly anyByName: RegExp | undefined;
  private readonly anyByPath: RegExp | undefined;

  /** `relPath` is relative to its workspace folder, with "/" separators; "" is the folder itself. */
  decide(relPath: string, risk: Risk): PolicyDecision {
    let decision: PolicyDecision = { action: 'default' };
    if (relPath === '') return decision;
    if (!(this.anyByName?.test(relPath.slice(relPath.lastIndexOf('/') + 1)) ?? false) && !(this.anyByPath?.test(relPath) ?? false)) return decision;
    for (const { rule, matches } of this.compiled) {
      const action = rule[risk];
      if (action !== undefined && matches(relPath)) decision = { action, rule: rule.glob };
    }
    return decision;
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
    this.compiled.forEach(({ rule }, i) => {
      const action = rule[risk];
      if (action !== 'deny' && action !== 'ask') return;
      const relaxedLater = this.compiled.slice(i + 1).some((later) =>
        later.rule[risk] === 'allow' && (later.matches(this.compiled[i]!.example) || this.compiled[i]!.matches(later.example)));
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

/**
 * Parses the person's rules. Security: an invalid rule never turns into "allow": the whole policy
 * falls back to asking for every path, and the error is reported.
 */
export function parseRules(raw: unknown): ParsedRules {
  const parsed = rulesSchema.safeParse(raw ?? []);
  if (parsed.success) {
    const bad = parsed.data.filter((r) => { try { picomatch.makeRe(r.glob); return false; } catch { return true; } });
    if (bad.length === 0) return { policy: new Policy(parsed.data), errors: [] };
    return { policy: askEverything(), errors: bad.map((r) => `Invalid glob "${r.glob}" in workspaceTools.rules.`) };
  }
  const errors = parsed.error.issues.map((i) => `workspaceTools.rules${i.path.map((p) => `[${JSON.stringify(p)}]`).join('')}: ${i.message}`);
  return { policy: askEverything(), errors };
}

function askEverything(): Policy {
  return new Policy([{ glob: '**', read: 'ask', write: 'ask' }]);
}
