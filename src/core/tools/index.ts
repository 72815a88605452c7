import type { ResultOf, Tool } from '../contract/tool.ts';
import type { ToolName } from '../contract/names.ts';
import { openFile } from './open_file.ts';
import { openJsonFile } from './open_json_file.ts';
import { openMarkdownFile } from './open_markdown_file.ts';
import { artifactRead } from './artifact_read.ts';
import { artifactGrep } from './artifact_grep.ts';
import { artifactQuery } from './artifact_query.ts';
import { listDirectory } from './list_directory.ts';
import { searchFiles } from './search_files.ts';
import { findFiles } from './find_files.ts';
import { stageFile } from './stage_file.ts';
import { applyPatch } from './media_apply_patch.ts';
import { saveMedia } from './save_media.ts';
import { listMedia } from './list_media.ts';
import { undoSaveTool } from './undo_save.ts';
import { listProblems } from './list_problems.ts';
import { findSymbols } from './find_symbols.ts';
import { runShellCommand } from './run_shell_command.ts';

const DEFINED = {
  open_file: openFile,
  open_json_file: openJsonFile,
  open_markdown_file: openMarkdownFile,
  artifact_read: artifactRead,
  artifact_grep: artifactGrep,
  artifact_query: artifactQuery,
  list_directory: listDirectory,
  search_files: searchFiles,
  find_files: findFiles,
  stage_file: stageFile,
  media_apply_patch: applyPatch,
  save_media: saveMedia,
  undo_save: undoSaveTool,
  list_media: listMedia,
  list_problems: listProblems,
  find_symbols: findSymbols,
  run_shell_command: runShellCommand,
} satisfies Record<ToolName, Tool>;

/** What each tool returns, by name. */
export type ToolResults = { readonly [N in ToolName]: ResultOf<(typeof DEFINED)[N]> };
export type ToolResult<N extends ToolName> = ToolResults[N];

/**
 * Every tool, by name: the compiler catches a name without a tool (or a tool without a name), and
 * `TOOLS[name]` keeps that tool's result type, so `session.invoke(TOOLS.open_file, …)` needs no cast.
 */
export const TOOLS: { readonly [N in ToolName]: Tool<ToolResults[N]> } = DEFINED;
