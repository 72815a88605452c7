import * as z from 'zod';

export type RuleAction = 'allow' | 'ask' | 'deny';

export const ruleSchema = z.strictObject({
  glob: z.string().min(1).describe('A glob over workspace-folder-relative paths, e.g. "**/*.pem" or "secrets/**". A glob without "/" matches the file name at any depth.'),
  read: z.enum(['allow', 'ask', 'deny']).optional().describe('What happens when a tool reads or searches a matching path.'),
  write: z.enum(['allow', 'ask', 'deny']).optional().describe('What happens when a tool stages or saves a matching path.'),
});
export type Rule = z.infer<typeof ruleSchema>;
export const rulesSchema = z.array(ruleSchema);

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

export interface PolicyDecision {
  /** `default` means no rule matched: the host's ordinary confirmation applies. */
  readonly action: RuleAction | 'default';
  readonly rule?: string;
  readonly source?: RuleSource;
  readonly reason?: string;
  /** The decision is another name's, which a link gives this path (see `LinkIndex`). */
  readonly alias?: { readonly path: string; readonly link: string };
}

/** No rule matched (shared: most decisions are this one). */
export const NO_RULE: PolicyDecision = Object.freeze({ action: 'default' });

export const STRICTNESS: Record<PolicyDecision['action'], number> = { allow: 0, default: 1, ask: 2, deny: 3 };
