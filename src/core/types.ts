/**
 * What a tool's call does, shared by every layer of the core: the policy judges paths by it, the
 * gate shows it, tools declare it. This module imports nothing, so anything may import it without
 * making an import circle. The rules' own words (action, source, decision) are here too: the gate
 * shows them and links compare them, both below the policy, which adds the rule schema.
 */
export type Risk = 'read' | 'write';

/**
 * What a tool does, as the gate shows it: a path risk, or `exec`: it runs a command inside the OS
 * sandbox, whose boundary is derived from the same rules (its cwd is judged as a read).
 */
export type ToolRisk = Risk | 'exec';

/** What a rule does with a matching path. */
export type RuleAction = 'allow' | 'ask' | 'deny';

/**
 * Where a rule comes from. `secret`, `protected` and `built-in` are this extension's own lists;
 * `user` rules come from the person's user (or machine/policy) settings and may loosen them;
 * `workspace` rules come from files inside the workspace, which an agent or a cloned repository
 * can write, so they may only tighten.
 */
export type RuleSource = 'secret' | 'protected' | 'built-in' | 'user' | 'workspace';

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
