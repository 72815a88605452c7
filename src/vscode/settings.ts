import * as vscode from 'vscode';
import { scopeShellSettings, type ShellSettings } from '../core/shell/settings.ts';
import * as z from 'zod';
import type { Policy } from '../core/policy/policy.ts';
import { scopeRules, type ScopedRules, type ScopedValue } from '../core/policy/rule-scopes.ts';
import type { SessionLimits } from '../core/pipeline/session.ts';

export const SECTION = 'workspaceTools';
const MiB = 1024 * 1024;

const numberSetting = (fallback: number, min: number, max: number) =>
  z.number().int().min(min).max(max).catch(fallback);

const settingsSchema = z.object({
  artifactDiskBudgetMB: numberSetting(4096, 16, 1024 * 1024),
  mediaMemoryBudgetMB: numberSetting(256, 1, 16 * 1024),
  nonStreamingMaxMB: numberSetting(64, 1, 4096),
  undoDiskBudgetMB: numberSetting(256, 0, 1024 * 1024),
});

/** A security setting as each scope sets it: the user's value may loosen, workspace-scope values may only tighten. */
export interface ScopedSetting {
  readonly user: unknown;
  readonly workspace: readonly ScopedValue[];
}

export interface Settings {
  readonly policy: Policy;
  /** The rules in force, by scope (for the gate status), with what was ignored. */
  readonly rules: ScopedRules;
  /** Problems with the person's rules; non-empty means the policy asks for everything. */
  readonly ruleErrors: readonly string[];
  /** workspaceTools.writeRoots by scope; combined against the current folders on every save. */
  readonly writeRoots: ScopedSetting;
  readonly openDiffOnStage: boolean;
  /** Workspace-scope values of review settings that would loosen the review, ignored. */
  readonly reviewIgnored: readonly string[];
  readonly limits: SessionLimits;
  /** workspaceTools.shell.*: the hosts commands reach (user scope; workspace scope only narrows) and the timeout cap. */
  readonly shell: ShellSettings;
}

/** Where a workspace-scope value lives, for the person: the .code-workspace file or the folder's settings file. */
function workspaceSettingsFile(): string {
  const file = vscode.workspace.workspaceFile;
  if (file && file.scheme !== 'untitled')
    return `workspace settings (${file.scheme === 'file' ? file.fsPath : file.toString()})`;
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder
    ? `workspace settings (${vscode.workspace.asRelativePath(vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'), false)})`
    : 'workspace settings';
}

/**
 * Security: the merged value of a setting lets `.vscode/settings.json` (which an agent can write
 * and a cloned repository ships) override the user. Read each scope on its own instead.
 */
export function readScoped(key: string): ScopedSetting {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<unknown>(key);
  const workspace: ScopedValue[] = [];
  if (inspected?.workspaceValue !== undefined)
    workspace.push({ value: inspected.workspaceValue, where: workspaceSettingsFile() });
  // Folder settings only differ from the workspace's in a multi-root workspace.
  if (vscode.workspace.workspaceFile) {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const value = vscode.workspace.getConfiguration(SECTION, folder.uri).inspect<unknown>(key)?.workspaceFolderValue;
      if (value !== undefined)
        workspace.push({
          value,
          where: `folder settings (${vscode.workspace.asRelativePath(vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'), true)})`,
        });
    }
  }
  return { user: inspected?.globalValue, workspace };
}

/**
 * Security: the staged diff opening on every stage or patch is the person's review, so only the user
 * may switch it off; a workspace (or folder) value may only switch it on. Not a boolean: the default.
 */
export function scopeOpenDiffOnStage(scoped: ScopedSetting): {
  readonly on: boolean;
  readonly ignored: readonly string[];
} {
  const ignored: string[] = [];
  let on = typeof scoped.user === 'boolean' ? scoped.user : true;
  for (const { value, where } of scoped.workspace) {
    if (value === true) on = true;
    else if (value === false)
      ignored.push(
        `workspaceTools.review.openDiffOnStage in ${where} is false: only your user settings can stop staged diffs from opening (a workspace file can be written by an agent or shipped by a repository), so it is ignored.`,
      );
  }
  return { on, ignored };
}

/** Reads every workspaceTools.* setting into typed values; an invalid value falls back to the safe default. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const rules = scopeRules(readScoped('rules'));
  const openDiffOnStage = scopeOpenDiffOnStage(readScoped('review.openDiffOnStage'));
  // Parsed when a call first needs them, not at activation: zod's first parse costs milliseconds cold (issue 27).
  let limits: SessionLimits | undefined;
  return {
    policy: rules.policy,
    rules,
    ruleErrors: rules.errors,
    writeRoots: readScoped('writeRoots'),
    shell: scopeShellSettings(
      readScoped('shell.allowedDomains'),
      readScoped('shell.maxTimeoutMs'),
      readScoped('shell.review'),
      readScoped('shell.readFolders'),
    ),
    openDiffOnStage: openDiffOnStage.on,
    reviewIgnored: openDiffOnStage.ignored,
    get limits(): SessionLimits {
      return (limits ??= readLimits(config));
    },
  };
}

/** The size limits from `config` (read when the settings were); an invalid value falls back to its default. */
function readLimits(config: vscode.WorkspaceConfiguration): SessionLimits {
  const raw = settingsSchema.parse({
    artifactDiskBudgetMB: config.get<unknown>('artifacts.diskBudgetMB', 4096),
    mediaMemoryBudgetMB: config.get<unknown>('media.memoryBudgetMB', 256),
    nonStreamingMaxMB: config.get<unknown>('nonStreamingMaxMB', 64),
    undoDiskBudgetMB: config.get<unknown>('undo.diskBudgetMB', 256),
  });
  return {
    artifactBudgetBytes: raw.artifactDiskBudgetMB * MiB,
    mediaBudgetBytes: raw.mediaMemoryBudgetMB * MiB,
    nonStreamingMaxBytes: raw.nonStreamingMaxMB * MiB,
    undoBudgetBytes: raw.undoDiskBudgetMB * MiB,
  };
}
