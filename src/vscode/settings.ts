import * as vscode from 'vscode';
import * as z from 'zod';
import { parseRules, type Policy } from '../core/policy.ts';
import type { SessionLimits } from '../core/session.ts';

export const SECTION = 'workspaceTools';
const MiB = 1024 * 1024;

const numberSetting = (fallback: number, min: number, max: number) => z.number().int().min(min).max(max).catch(fallback);

const settingsSchema = z.object({
  openDiffOnStage: z.boolean().catch(true),
  artifactDiskBudgetMB: numberSetting(4096, 16, 1024 * 1024),
  mediaMemoryBudgetMB: numberSetting(256, 1, 16 * 1024),
  nonStreamingMaxMB: numberSetting(64, 1, 4096),
});

export interface Settings {
  readonly policy: Policy;
  /** Problems with the person's rules; non-empty means the policy asks for everything. */
  readonly ruleErrors: readonly string[];
  /** The raw workspaceTools.writeRoots value; parsed against the current folders on every save. */
  readonly writeRoots: unknown;
  readonly openDiffOnStage: boolean;
  readonly limits: SessionLimits;
}

/** Reads every workspaceTools.* setting into typed values; an invalid value falls back to the safe default. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const rules = parseRules(config.get<unknown>('rules', []));
  const raw = settingsSchema.parse({
    openDiffOnStage: config.get<unknown>('review.openDiffOnStage', true),
    artifactDiskBudgetMB: config.get<unknown>('artifacts.diskBudgetMB', 4096),
    mediaMemoryBudgetMB: config.get<unknown>('media.memoryBudgetMB', 256),
    nonStreamingMaxMB: config.get<unknown>('nonStreamingMaxMB', 64),
  });
  return {
    policy: rules.policy,
    ruleErrors: rules.errors,
    // Security: parsed by parseWriteRoots, which narrows (never widens) on an invalid value.
    writeRoots: config.get<unknown>('writeRoots', null),
    openDiffOnStage: raw.openDiffOnStage,
    limits: {
      artifactBudgetBytes: raw.artifactDiskBudgetMB * MiB,
      mediaBudgetBytes: raw.mediaMemoryBudgetMB * MiB,
      nonStreamingMaxBytes: raw.nonStreamingMaxMB * MiB,
    },
  };
}
