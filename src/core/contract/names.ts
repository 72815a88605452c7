/** Every model-facing tool name, in manifest order. */
export const TOOL_NAMES = [
  'open_file',
  'open_json_file',
  'open_markdown_file',
  'artifact_read',
  'artifact_grep',
  'artifact_query',
  'list_directory',
  'search_files',
  'find_files',
  'stage_file',
  'media_apply_patch',
  'save_media',
  'undo_save',
  'list_media',
  'list_problems',
  'find_symbols',
  'run_shell_command',
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];
