import { anyOf, ruleRegex } from './rule-glob.ts';
import { ruleSchema, type Rule } from './types.ts';

/**
 * Parses one `workspaceTools.rules` value; `where` names its scope in the errors ("in
 * .vscode/settings.json"), and `name` what the person calls the list (the CLI's policy file).
 */
export function parseRuleList(
  raw: unknown,
  where?: string,
  name = 'workspaceTools.rules',
): { rules: Rule[]; errors: string[] } {
  const at = where ? ` in ${where}` : '';
  const list = raw ?? [];
  if (!Array.isArray(list)) {
    return {
      rules: [],
      errors: [`${name}${at}: expected a list of rules, got ${list === null ? 'null' : typeof list}.`],
    };
  }
  // Each rule on its own: Security: one broken entry must not take its valid neighbours (a deny among them) down with it.
  const rules: Rule[] = [];
  const errors: string[] = [];
  list.forEach((entry: unknown, index) => {
    const parsed = ruleSchema.safeParse(entry);
    if (!parsed.success) {
      errors.push(
        ...parsed.error.issues.map(
          (i) => `${name}${[index, ...i.path].map((p) => `[${JSON.stringify(p)}]`).join('')}${at}: ${i.message}`,
        ),
      );
      return;
    }
    const problem = ruleGlobProblem(parsed.data.glob);
    if (problem === undefined) rules.push(parsed.data);
    else errors.push(`Invalid glob ${JSON.stringify(parsed.data.glob)} in ${name}${at}: ${problem}.`);
  });
  return { rules, errors };
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
