/**
 * What a tool's call does, shared by every layer of the core: the policy judges paths by it, the
 * gate shows it, tools declare it. This module imports nothing, so anything may import it without
 * making an import circle (the rules' own words, action and source, are in policy/types.ts, which
 * imports only zod).
 */
export type Risk = 'read' | 'write';
