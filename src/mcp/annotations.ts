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

// Writes that reach the disk. Stage and patch only make media in memory. Listed by name on purpose:
// a new tool does not compile until someone decides what it is.
const REACHES_DISK: Readonly<Record<ToolName, boolean>> = {
  open_file: false, open_json_file: false, open_markdown_file: false,
  artifact_read: false, artifact_grep: false, artifact_query: false,
  list_directory: false, search_files: false, find_files: false,
  stage_file: false, media_apply_patch: false, list_media: false,
  list_problems: false, find_symbols: false,
  run_shell_command: true,
  save_media: true, undo_save: true,
};

/** `network`: the server lets commands reach the hosts given with --allow-domain. */
export function toolAnnotations(name: ToolName, network = false): ToolAnnotations {
  const tool = TOOLS[name];
  const readOnly = tool.risk === 'read';
  return {
    title: tool.displayName,
    readOnlyHint: readOnly,
    destructiveHint: REACHES_DISK[name],
    idempotentHint: readOnly,
    // Only the workspace folders; a command reaches the network only where hosts were allowed.
    openWorldHint: name === 'run_shell_command' && network,
  };
}
