/**
 * What a tool's call does, shared by every layer of the core: the policy judges paths by it, the
 * gate shows it, tools declare it. This module imports nothing, so anything may import it without
 * making an import circle (the rules' own words, action and source, are in policy/types.ts, which
 * imports only zod).
 */
export type Risk = 'read' | 'write';

/**
 * What a tool does, as the gate shows it: a path risk, or `exec`: it runs a command inside the OS
 * sandbox, whose boundary is derived from the same rules (its cwd is judged as a read).
 */
export type ToolRisk = Risk | 'exec';
