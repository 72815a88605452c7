import type { ScopedValue } from '../rule-scopes.ts';
import { DEFAULT_MAX_TIMEOUT_MS } from './port.ts';

export interface ShellSettings {
  /** Hosts commands may reach; empty: the network is off. */
  readonly allowedDomains: readonly string[];
  readonly maxTimeoutMs: number;
  /** Narrated problems and ignored workspace values, for the host to report. */
  readonly problems: readonly string[];
}

const isHostList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string' && v.trim() !== '');

/**
 * `workspaceTools.shell.*` by scope. Security: the hosts a command may reach are the user's to set;
 * a workspace value (which an agent or a cloned repository can write) may only narrow them, and
 * may not raise the timeout cap.
 */
export function scopeShellSettings(allowed: { readonly user: unknown; readonly workspace: readonly ScopedValue[] }, maxTimeout: { readonly user: unknown; readonly workspace: readonly ScopedValue[] }): ShellSettings {
  const problems: string[] = [];
  let domains: string[] = [];
  if (allowed.user !== undefined && allowed.user !== null) {
    if (isHostList(allowed.user)) domains = [...allowed.user];
    else problems.push('workspaceTools.shell.allowedDomains in user settings must be a list of host names such as ["registry.npmjs.org"]; commands get no network until it is fixed.');
  }
  for (const { value, where } of allowed.workspace) {
    if (value === undefined || value === null) continue;
    if (!isHostList(value)) { problems.push(`workspaceTools.shell.allowedDomains in ${where} is not a list of host names, so it is ignored.`); continue; }
    const widening = value.filter((host) => !domains.includes(host));
    if (widening.length > 0) problems.push(`workspaceTools.shell.allowedDomains in ${where} names ${widening.map((h) => `"${h}"`).join(', ')}, which your user settings do not allow: a workspace file can only narrow the hosts commands reach, so they are ignored.`);
    domains = domains.filter((host) => value.includes(host));
  }
  let maxTimeoutMs = DEFAULT_MAX_TIMEOUT_MS;
  if (typeof maxTimeout.user === 'number' && Number.isInteger(maxTimeout.user) && maxTimeout.user >= 1_000) maxTimeoutMs = maxTimeout.user;
  else if (maxTimeout.user !== undefined && maxTimeout.user !== null) problems.push(`workspaceTools.shell.maxTimeoutMs in user settings must be a whole number of milliseconds (at least 1000); ${DEFAULT_MAX_TIMEOUT_MS} is used.`);
  for (const { value, where } of maxTimeout.workspace) {
    if (typeof value === 'number' && value >= 1_000 && value <= maxTimeoutMs) maxTimeoutMs = Math.floor(value);
    else if (value !== undefined && value !== null) problems.push(`workspaceTools.shell.maxTimeoutMs in ${where} is ignored: a workspace file can only lower the cap (now ${maxTimeoutMs} ms).`);
  }
  return { allowedDomains: domains, maxTimeoutMs, problems };
}
