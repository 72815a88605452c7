import { Policy, tighteningOnly, type Rule } from './policy.ts';
import { parseRuleList } from './parse-rules.ts';

/** One setting value from a scope an agent can write (workspace or folder settings), and where it lives. */
export interface ScopedValue {
  readonly value: unknown;
  /** For the person: "workspace settings (.vscode/settings.json)". */
  readonly where: string;
}

/** `workspaceTools.rules` as each scope sets it. */
export interface RuleScopes {
  /** User settings (or machine/policy): trusted to loosen the built-in lists. */
  readonly user: unknown;
  /** Workspace and folder settings: files inside the workspace, which the agent or a cloned repository can write. */
  readonly workspace: readonly ScopedValue[];
}

export interface ScopedRules {
  readonly policy: Policy;
  /** Invalid values: while any is present every path that no stricter rule covers asks. */
  readonly errors: readonly string[];
  /** Parts of workspace-scope values that would loosen the gate and were ignored. */
  readonly ignored: readonly string[];
  /** The workspace-scope rules in force (their ask/deny parts), for the gate status. */
  readonly workspaceRules: readonly (Rule & { readonly where: string })[];
}

/**
 * Builds the policy from every scope's `workspaceTools.rules`. Security: workspace and folder
 * settings may add `ask` and `deny` but never loosen: their `allow` parts are ignored and reported,
 * and their rules only ever make a decision stricter (see Policy). An invalid value anywhere never
 * loosens: its valid neighbours stay, and every path no stricter rule covers asks until it is fixed.
 */
export function scopeRules(scopes: RuleScopes): ScopedRules {
  const user = parseRuleList(scopes.user, 'user settings');
  const errors = [...user.errors];
  const ignored: string[] = [];
  const workspaceRules: (Rule & { where: string })[] = [];
  for (const { value, where } of scopes.workspace) {
    const parsed = parseRuleList(value, where);
    errors.push(...parsed.errors);
    for (const rule of parsed.rules) {
      const loosening = (['read', 'write'] as const).filter((risk) => rule[risk] === 'allow');
      if (loosening.length) {
        ignored.push(
          `workspaceTools.rules in ${where}: the rule ${JSON.stringify(rule)} would allow ${loosening.join(' and ')} without asking. Only your user settings can loosen the gate (a workspace file can be written by an agent or shipped by a repository), so ${loosening.map((r) => `its "${r}": "allow"`).join(' and ')} is ignored.`,
        );
      }
      const kept = tighteningOnly(rule);
      if (kept.read || kept.write) workspaceRules.push({ ...kept, where });
    }
  }
  const policy = new Policy(user.rules, {
    workspaceRules: workspaceRules.map(({ where: _where, ...rule }) => rule),
    askEverything: errors.length > 0,
  });
  return { policy, errors, ignored, workspaceRules };
}
