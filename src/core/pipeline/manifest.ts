import * as z from 'zod';
import type { SchemaDeclaration, Tool } from '../contract/tool.ts';
import { TOOLS } from '../tools/index.ts';
import { TOOL_NAMES } from '../contract/names.ts';

/** The bundled ripgrep backend's declaration: the manifest describes what ships. */
export const BUNDLED_DECLARATION: SchemaDeclaration = { supportsFollow: false };

export type JsonSchema = { [key: string]: unknown };

export interface LanguageModelToolEntry {
  readonly name: string;
  readonly displayName: string;
  readonly toolReferenceName: string;
  readonly canBeReferencedInPrompt: true;
  readonly userDescription: string;
  readonly modelDescription: string;
  readonly icon: string;
  readonly tags: readonly string[];
  readonly when?: string;
  readonly inputSchema: JsonSchema;
}

export function toolJsonSchema(tool: Tool, declaration: SchemaDeclaration = BUNDLED_DECLARATION): JsonSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema(declaration), {
    io: 'input',
    unrepresentable: 'throw',
  }) as JsonSchema;
  return schema;
}

/** `contributes.languageModelTools`, generated from the zod schemas (the one source of truth). */
export function languageModelToolEntries(): LanguageModelToolEntry[] {
  return TOOL_NAMES.map((name) => {
    const tool = TOOLS[name];
    return {
      name: tool.name,
      displayName: tool.displayName,
      toolReferenceName: tool.name,
      canBeReferencedInPrompt: true,
      userDescription: tool.userDescription,
      modelDescription: tool.description,
      icon: `$(${tool.icon})`,
      tags: ['workspace-tools', tool.risk],
      // Write and exec tools only exist in trusted workspaces (the extension also leaves them unregistered).
      ...(tool.risk !== 'read' ? { when: 'isWorkspaceTrusted' } : {}),
      inputSchema: toolJsonSchema(tool),
    };
  });
}

/** The tools of the contributed "Workspace Tools" agent: every tool of ours, by its full reference name. */
export function agentToolReferences(extensionId: string): string[] {
  return TOOL_NAMES.map((name) => `${extensionId.toLowerCase()}/${TOOLS[name].name}`);
}
