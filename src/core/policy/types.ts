import * as z from 'zod';
import type { RuleSource } from '../types.ts';

export const ruleSchema = z.strictObject({
  glob: z
    .string()
    .min(1)
    .describe(
      'A glob over workspace-folder-relative paths, e.g. "**/*.pem" or "secrets/**". A glob without "/" matches the file name at any depth.',
    ),
  read: z
    .enum(['allow', 'ask', 'deny'])
    .optional()
    .describe('What happens when a tool reads or searches a matching path.'),
  write: z
    .enum(['allow', 'ask', 'deny'])
    .optional()
    .describe('What happens when a tool stages or saves a matching path.'),
});
export type Rule = z.infer<typeof ruleSchema>;
export const rulesSchema = z.array(ruleSchema);

export interface SourcedRule {
  readonly rule: Rule;
  readonly source: RuleSource;
  /** Why the rule exists, for the person (built-in rules). */
  readonly reason?: string;
}
