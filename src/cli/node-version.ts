/** The oldest Node major the CLI and the MCP server run on: package.json's engines, and their sandbox library's. */
export const OLDEST_NODE_MAJOR = 22;

/**
 * Why this Node cannot run the CLI, or undefined when it can. Checked at start: under Node 20 the
 * CLI started and then failed a call at a time (Node 20.0 has no AbortSignal.any, and the shell's
 * sandbox library declares Node 22.12 or later), which is worse than not starting.
 */
export function unsupportedNode(version: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= OLDEST_NODE_MAJOR) return undefined;
  return `needs Node ${OLDEST_NODE_MAJOR} or later, and this is Node ${version.replace(/^v/, '')}. Run it with a newer node (\`node --version\` says which one is on PATH).`;
}
