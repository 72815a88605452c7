import * as z from 'zod';
import { refused } from '../errors.ts';
import { isWithin, normalizeModelPath, type ModelPath, type WorkspaceRoot } from '../paths.ts';
import type { ScopedValue } from '../policy/rule-scopes.ts';

/**
 * Where save_media may write. `undefined`: anywhere inside the workspace folders (the default).
 * A list: only at or below one of these paths; an empty list allows no save at all.
 */
export type WriteRoots = readonly ModelPath[] | undefined;

export interface ParsedWriteRoots {
  readonly writeRoots: WriteRoots;
  /** Narrated problems with the setting, for the host to report. */
  readonly errors: readonly string[];
}

const settingSchema = z.array(z.string());

/**
 * Parses the `workspaceTools.writeRoots` setting: model-style paths ("src", or "folder/src" in a
 * multi-root workspace). `undefined` or `null` means the default (all workspace folders); `[]` allows
 * no save at all. Security: an invalid entry is dropped, never widened; if no entry survives, no
 * save is allowed.
 */
export function parseWriteRoots(
  raw: unknown,
  roots: readonly WorkspaceRoot[],
  setting = 'workspaceTools.writeRoots',
): ParsedWriteRoots {
  if (raw === undefined || raw === null) return { writeRoots: undefined, errors: [] };
  const parsed = settingSchema.safeParse(raw);
  if (!parsed.success)
    return {
      writeRoots: [],
      errors: [
        `${setting} must be a list of workspace paths such as ["src", "docs"]; no save is allowed until it is fixed.`,
      ],
    };
  const writeRoots: ModelPath[] = [];
  const errors: string[] = [];
  for (const entry of parsed.data) {
    try {
      writeRoots.push(normalizeModelPath(entry, roots));
    } catch (e) {
      errors.push(`${setting}: ${JSON.stringify(entry)} is ignored: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { writeRoots, errors };
}

/** True when `target` is at or below one of `writeRoots` (pure). */
export function isInWriteRoots(target: ModelPath, writeRoots: WriteRoots): boolean {
  if (writeRoots === undefined) return true;
  return writeRoots.some(
    (root) => root.root.name === target.root.name && (root.rel === '' || isWithin(root.rel, target.rel)),
  );
}

/** Refuses a save target outside the write roots with a narrated E_SANDBOX_REFUSED (pure). */
export function checkWriteRoots(target: ModelPath, writeRoots: WriteRoots): void {
  if (isInWriteRoots(target, writeRoots)) return;
  if (writeRoots === undefined || writeRoots.length === 0) {
    throw refused(
      `save_media may not write "${target.display}": no write root is configured (workspaceTools.writeRoots is empty or has no valid entry), so no file can be saved.`,
      `Tell the user what you wanted to save; they can fix the setting.`,
    );
  }
  const shown = writeRoots.map((r) => `"${r.display}"`).join(', ');
  throw refused(
    `save_media may not write "${target.display}": it is outside the write roots (${shown}).`,
    `Save under one of them, or ask the user to add this folder to workspaceTools.writeRoots.`,
  );
}

export interface ScopedWriteRoots extends ParsedWriteRoots {
  /** Workspace-scope entries (or whole values) that would widen the user's write roots, ignored. */
  readonly ignored: readonly string[];
}

/**
 * Combines the user's `workspaceTools.writeRoots` with workspace-scope values. Security: a
 * workspace file (which an agent or a cloned repository can write) may only narrow where saves go:
 * an entry outside the roots already in force is ignored and reported, and a workspace value of
 * `null` cannot lift the user's list.
 */
export function scopeWriteRoots(
  user: unknown,
  workspace: readonly ScopedValue[],
  roots: readonly WorkspaceRoot[],
): ScopedWriteRoots {
  const fromUser = parseWriteRoots(user, roots, 'workspaceTools.writeRoots in user settings');
  let current = fromUser.writeRoots;
  const errors = [...fromUser.errors];
  const ignored: string[] = [];
  for (const { value, where } of workspace) {
    if (value === undefined || value === null) continue;
    const setting = `workspaceTools.writeRoots in ${where}`;
    const parsed = parseWriteRoots(value, roots, setting);
    errors.push(...parsed.errors);
    const wanted = parsed.writeRoots ?? [];
    if (current === undefined) {
      current = wanted;
      continue;
    }
    const inForce = current;
    const kept = wanted.filter((entry) => isInWriteRoots(entry, inForce));
    const allowed = inForce.map((r) => `"${r.display}"`).join(', ') || 'none';
    for (const entry of wanted.filter((e) => !kept.includes(e))) {
      ignored.push(
        `${setting}: "${entry.display}" is outside the write roots already in force (${allowed}), so it is ignored: a workspace file can only narrow where saves go.`,
      );
    }
    // A value whose every entry would widen is ignored as a whole; an empty list narrows to no save at all.
    if (wanted.length === 0 || kept.length > 0) current = kept;
  }
  return { writeRoots: current, errors, ignored };
}
