import { TOOLS } from '../core/tools/index.ts';
import type { ToolName } from '../core/contract/names.ts';

/** MCP's hints about a tool, as a client shows them (some skip their own confirmation for read-only tools). */
export interface ToolAnnotations {
  readonly title: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/**
 * Whether a call can change what is on disk, from the tool's own declaration: every write to disk
 * passes the save guard (write roots, one save of a file at a time), so the tools given it
 * (save_media, undo_save, run_shell_command) are those that reach disk. Stage and patch only make
 * media in memory, and are not given it.
 */
const reachesDisk = (tool: { readonly needs: readonly string[] }): boolean => tool.needs.includes('saveGuard');

/** `network`: the server lets commands reach the hosts given with --allow-domain. */
export function toolAnnotations(name: ToolName, network = false): ToolAnnotations {
  const tool = TOOLS[name];
  const readOnly = tool.risk === 'read';
  return {
    title: tool.displayName,
    readOnlyHint: readOnly,
    destructiveHint: reachesDisk(tool),
    idempotentHint: readOnly,
    // Only the workspace folders; a command (risk exec) reaches the network only where hosts were allowed.
    openWorldHint: tool.risk === 'exec' && network,
  };
}
