import type { ScopedValue } from '../policy/rule-scopes.ts';
import { DEFAULT_MAX_TIMEOUT_MS } from './port.ts';
import type { ShellReview } from './judge.ts';

type Scoped = { readonly user: unknown; readonly workspace: readonly ScopedValue[] };

export interface ShellSettings {
  /** Hosts commands may reach; empty: the network is off. */
  readonly allowedDomains: readonly string[];
  readonly maxTimeoutMs: number;
  /** `all`: every change a command makes is staged for review; `protected`: only protected ones. */
  readonly review: ShellReview;
  /** Folders commands may read besides the workspace and the detected toolchains (absolute). */
  readonly readFolders: readonly string[];
  /** Narrated problems and ignored workspace values, for the host to report. */
  readonly problems: readonly string[];
}

const isHostList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string' && v.trim() !== '');

/**
 * `workspaceTools.shell.*` by scope. Security: the hosts a command may reach are the user's to set;
 * a workspace value (which an agent or a cloned repository can write) may only narrow them, and
 * may not raise the timeout cap.
 */
export function scopeShellSettings(
  allowed: Scoped,
  maxTimeout: Scoped,
  reviewSetting: Scoped = { user: undefined, workspace: [] },
  readSetting: Scoped = { user: undefined, workspace: [] },
): ShellSettings {
  const problems: string[] = [];
  let domains: string[] = [];
  if (allowed.user !== undefined && allowed.user !== null) {
    if (isHostList(allowed.user)) domains = [...allowed.user];
    else
      problems.push(
        'workspaceTools.shell.allowedDomains in user settings must be a list of host names such as ["registry.npmjs.org"]; commands get no network until it is fixed.',
      );
  }
  for (const { value, where } of allowed.workspace) {
    if (value === undefined || value === null) continue;
    if (!isHostList(value)) {
      problems.push(`workspaceTools.shell.allowedDomains in ${where} is not a list of host names, so it is ignored.`);
      continue;
    }
    const widening = value.filter((host) => !domains.includes(host));
    if (widening.length > 0)
      problems.push(
        `workspaceTools.shell.allowedDomains in ${where} names ${widening.map((h) => `"${h}"`).join(', ')}, which your user settings do not allow: a workspace file can only narrow the hosts commands reach, so they are ignored.`,
      );
    domains = domains.filter((host) => value.includes(host));
  }
  let maxTimeoutMs = DEFAULT_MAX_TIMEOUT_MS;
  if (typeof maxTimeout.user === 'number' && Number.isInteger(maxTimeout.user) && maxTimeout.user >= 1_000)
    maxTimeoutMs = maxTimeout.user;
  else if (maxTimeout.user !== undefined && maxTimeout.user !== null)
    problems.push(
      `workspaceTools.shell.maxTimeoutMs in user settings must be a whole number of milliseconds (at least 1000); ${DEFAULT_MAX_TIMEOUT_MS} is used.`,
    );
  for (const { value, where } of maxTimeout.workspace) {
    if (typeof value === 'number' && value >= 1_000 && value <= maxTimeoutMs) maxTimeoutMs = Math.floor(value);
    else if (value !== undefined && value !== null)
      problems.push(
        `workspaceTools.shell.maxTimeoutMs in ${where} is ignored: a workspace file can only lower the cap (now ${maxTimeoutMs} ms).`,
      );
  }
  // A workspace may ask for more review ("all"), never for less.
  let review: ShellReview = 'protected';
  if (reviewSetting.user === 'all' || reviewSetting.user === 'protected') review = reviewSetting.user;
  else if (reviewSetting.user !== undefined && reviewSetting.user !== null)
    problems.push('workspaceTools.shell.review in user settings must be "protected" or "all"; "protected" is used.');
  for (const { value, where } of reviewSetting.workspace) {
    if (value === 'all') review = 'all';
    else if (value !== undefined && value !== null && value !== review)
      problems.push(
        `workspaceTools.shell.review in ${where} is ignored: a workspace file can only ask for more review ("all").`,
      );
  }
  // Security: what commands may read is the person's to widen: a workspace value is ignored.
  const readFolders: string[] = [];
  if (Array.isArray(readSetting.user))
    for (const f of readSetting.user)
      if (typeof f === 'string' && f.startsWith('/')) readFolders.push(f);
      else if (readSetting.user !== undefined && readSetting.user !== null)
        problems.push('workspaceTools.shell.readFolders in user settings must be a list of absolute folders.');
  for (const { value, where } of readSetting.workspace)
    if (value !== undefined && value !== null)
      problems.push(
        `workspaceTools.shell.readFolders in ${where} is ignored: only your user settings can let commands read more.`,
      );
  return { allowedDomains: domains, maxTimeoutMs, review, readFolders, problems };
}
