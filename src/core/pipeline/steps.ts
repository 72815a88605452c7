import * as nodePath from 'node:path';
import { SandboxError, cancelled, refused } from '../errors.ts';
import type { HostVocabulary } from '../vocabulary.ts';
import type { GateCall, GateTarget, ReadProtection } from '../gate.ts';
import {
  resolveOnDisk,
  type GatedPath,
  type ModelPath,
  type ResolvedPath,
  type ResolveOptions,
  type WorkspaceRoot,
} from '../paths.ts';
import { strictest, type Policy, type PolicyDecision } from '../policy/policy.ts';
import type { Gate, WorkspaceFs } from '../ports.ts';
import { gitNameIn, gitNamesFor, type GitName } from '../git/named.ts';
import type { PageBudget } from '../paging/budget.ts';
import type { ProgressReporter } from '../results/progress.ts';
import { readsAt, type BatchEntry, type CallContext, type CallTargets } from '../contract/tool.ts';
import type { Risk, ToolRisk } from '../types.ts';
import type { Environment } from './session-options.ts';

/** A target a rule denies, with the rule and the risk it denies: known from the one decision, never asked again. */
export interface Denial {
  readonly display: string;
  readonly rule: string | undefined;
  readonly risk: Risk;
  /** Set when the target itself is not denied but the bytes the call works on came from `display`, which is. */
  readonly taintOf?: string;
  /** The denied name, when it is another name of the target that a link gives it. */
  readonly alias?: { readonly path: string; readonly link: string };
}

export interface Judgement {
  readonly targets: readonly GateTarget[];
  /** The first denied target, when one is. */
  readonly denial: Denial | undefined;
  /** Each target's denial, in the order of `targets` (for a batch, whose targets are judged alone). */
  readonly denials: readonly (Denial | undefined)[];
}

/** The risks the policy judges a call's targets by: the tool's own, and `read` when a write also reads. */
export function risksOf(risk: ToolRisk, targets: CallTargets): readonly Risk[] {
  // A command runs in its cwd: the folder is judged as a read (the kernel enforces the rest).
  if (risk === 'exec') return ['read'];
  const reads = targets.paths.some((_, i) => readsAt(targets, i) !== 'none');
  return reads && risk === 'write' ? ['write', 'read'] : [risk];
}

/** The policy's verdict on each target, by the strictest of its risks, each verdict keeping the risk that gave it. */
export function judge(policy: Policy, targets: CallTargets, risks: readonly Risk[]): Judgement {
  const denials: (Denial | undefined)[] = [];
  const gateTargets = targets.paths.map((p, i): GateTarget => {
    const judged: { readonly risk: Risk; readonly decision: PolicyDecision }[] = [];
    const use = readsAt(targets, i);
    // A batch's path written with given bytes is not read, though others of the call are.
    const pathRisks = use === 'none' && risks.includes('write') ? risks.filter((r) => r !== 'read') : risks;
    for (const risk of pathRisks) {
      const decision = policy.decide(p.rel, risk, p.root.localPath);
      // Staging a file's current bytes changes nothing yet: the protected list asks when its content is changed (a patch too).
      if (!(use === 'keep' && decision.source === 'protected')) judged.push({ risk, decision });
    }
    const decisions = judged.map((j) => j.decision);
    const chosen = strictest(decisions);
    const { action, rule, source, reason } = chosen;
    denials.push(
      action === 'deny'
        ? {
            display: p.display,
            rule,
            risk: judged[decisions.indexOf(chosen)]!.risk,
            ...(chosen.alias ? { alias: chosen.alias } : {}),
          }
        : undefined,
    );
    return {
      display: p.display,
      action,
      ...(rule ? { rule } : {}),
      ...(source ? { source } : {}),
      ...(reason ? { reason } : {}),
    };
  });
  return { targets: gateTargets, denial: denials.find((d) => d !== undefined), denials };
}

/** The refusal of a call whose target a rule denies. */
export function deniedBy(toolName: string, denial: Denial, words: HostVocabulary): SandboxError {
  if (denial.taintOf !== undefined)
    return refused(
      `${toolName} on "${denial.taintOf}" was refused: its content came from "${denial.display}", which the rule "${denial.rule}" denies reading, so no call may reveal it.`,
      `Do not retry with this media or one derived from it; stage the file with new content instead, or ask the user to change ${words.rules}.`,
    );
  const through = denial.alias ? `, as it is also "${denial.alias.path}" through the link "${denial.alias.link}"` : '';
  return refused(
    `${toolName} on "${denial.display}" was refused by the rule "${denial.rule}" (${denial.risk} denied)${through}.`,
    `Do not retry this path; work with other files or ask the user to change ${words.rules}.`,
  );
}

/**
 * Security: the gate is asked with the links known before the call (walking them touches the disk,
 * which only an approved call may). Judged again with the links walked since, a target that a link
 * makes denied is refused, and one it makes asked is asked again, as a secret, saying which link.
 */
export async function confirmRejudged(
  gate: Gate,
  toolName: string,
  asked: GateCall,
  again: Judgement,
  signal: AbortSignal,
  words: HostVocabulary,
): Promise<void> {
  if (again.denial !== undefined) throw deniedBy(toolName, again.denial, words);
  const raised = again.targets.find((t, i) => t.action === 'ask' && asked.targets[i]?.action !== 'ask');
  if (raised === undefined) return;
  if (signal.aborted) throw cancelled();
  const verdict = await gate({ ...asked, targets: again.targets, secret: true }, signal);
  if (!verdict.allow)
    throw refused(
      `The user declined ${toolName} on "${raised.display}" (the rule "${raised.rule}": ${raised.reason ?? 'asked every time'}).`,
      `Do not retry it under another name; ask the user what they want instead.`,
    );
}

/** Security: the one place a model path becomes a gated one: the paths of a call the gate approved. */
function approved(paths: readonly ModelPath[]): readonly GatedPath[] {
  return paths as readonly GatedPath[];
}

export interface ApprovedCall {
  readonly toolName: string;
  readonly call: GateCall;
  readonly risks: readonly Risk[];
  readonly paths: readonly ModelPath[];
  /** A batch: the entries (by index into `paths`) refused alone, with why; the others are approved. */
  readonly refusals?: ReadonlyMap<number, SandboxError>;
}

interface PipelinePorts {
  readonly fs: WorkspaceFs;
  readonly gate: Gate;
  readonly policy: () => Policy;
  /** The workspace folders now. */
  readonly roots: () => readonly WorkspaceRoot[];
  /** The person's home and environment, where git's own configuration is found. */
  readonly environment: Environment;
}

/**
 * Security: a path remembered from an earlier call (a media's, a save's) names the workspace folder
 * it was made in; once that folder is removed from the workspace, renamed or moved, writing there
 * writes outside the workspace, under a name that reads like a folder of the remaining ones.
 */
export function checkOpenFolder(path: ModelPath, roots: readonly WorkspaceRoot[], toolName: string): void {
  if (roots.some((r) => r.name === path.root.name && r.address === path.root.address)) return;
  throw refused(
    `${toolName} on "${path.display}" was refused: it belongs to the workspace folder "${path.root.name}" (${path.root.localPath ?? path.root.address}), which is no longer open in this workspace (it was removed, renamed or moved), so it is outside the workspace now.`,
    `Tell the user; to change the file, ask them to open its folder again, then stage it anew.`,
  );
}

/** The context of one approved call: its gated targets, and the translate step that only accepts them. */
export function callContext(
  ports: PipelinePorts,
  approvedCall: ApprovedCall,
  signal: AbortSignal,
  page: PageBudget,
  progress?: ProgressReporter,
): CallContext {
  const refusals = approvedCall.refusals;
  const targets = approved(approvedCall.paths.filter((_, i) => !refusals?.has(i)));
  const gated = new Set<ModelPath>(targets);
  const linksConfirmed = new Set<string>();
  /** What git configurations name, by folder, read once a call (a change set of many files in one folder reads them once). */
  const gitNames = new Map<string, Promise<GitName[]>>();
  return {
    targets,
    ...(refusals
      ? {
          batch: approvedCall.paths.map((path, i): BatchEntry => {
            const refusal = refusals.get(i);
            return refusal ? { refusal } : { path: approved([path])[0]! };
          }),
        }
      : {}),
    signal,
    page,
    ...(progress ? { progress } : {}),
    resolve: async (path: GatedPath, options: ResolveOptions = {}): Promise<ResolvedPath> => {
      // Security: a tool may only open what the gate was asked about (the type says so; this holds it when a cast lies).
      if (!gated.has(path))
        throw new SandboxError(
          'E_SANDBOX_REFUSED',
          `"${path.display}" was not part of the approved call.`,
          `Call the tool again naming that path.`,
        );
      if (signal.aborted) throw cancelled();
      checkOpenFolder(path, ports.roots(), approvedCall.toolName);
      const resolved = await resolveOnDisk(path, ports.fs, options);
      const moved =
        resolved.realRel !== resolved.rel ||
        (resolved.realRoot !== undefined && resolved.realRoot !== resolved.root.localPath);
      if (moved) for (const risk of approvedCall.risks) checkRealTarget(ports.policy(), risk, resolved);
      await confirmLinks(ports.gate, approvedCall, resolved, linksConfirmed, signal);
      if (options.forWrite === true)
        await confirmGitNamed(ports.gate, approvedCall, resolved, ports.environment, gitNames, signal);
      return resolved;
    },
    readProtection: (resolved) => readProtection(ports.policy(), resolved),
    ...(approvedCall.call.risk === 'exec'
      ? {
          approveChangeSet: (paths: readonly ModelPath[]): readonly GatedPath[] => {
            for (const path of paths) gated.add(path);
            return approved(paths);
          },
        }
      : {}),
  };
}

/**
 * Security: a file with several names (hard links) can be a protected file under an innocent name,
 * and no rule sees the other names. So the person is asked again, told how many names it has
 * (the first question named only this one), before it is read or written.
 */
async function confirmLinks(
  gate: Gate,
  approvedCall: ApprovedCall,
  resolved: ResolvedPath,
  confirmed: Set<string>,
  signal: AbortSignal,
): Promise<void> {
  const links = resolved.checked?.type === 'file' ? (resolved.checked.nlink ?? 1) : 1;
  if (links <= 1 || confirmed.has(resolved.display)) return;
  // Asked like a protected file: every time, never remembered, never approved by a rule alone.
  await askAgain(
    gate,
    approvedCall,
    resolved,
    (t) => (t ? { ...t, links } : { display: resolved.display, action: 'default', links }),
    `The user declined ${approvedCall.toolName} on "${resolved.display}", a file with ${links} names (hard links): another of its names may be protected.`,
    signal,
  );
  confirmed.add(resolved.display);
}

/**
 * Security: a file that a git configuration names — a file it includes, a filter's or an fsmonitor's
 * script, a hook under `core.hooksPath` — is read or run by git, VS Code's git too, on its next
 * status, with no command from the person; no rule knows its name. A write to it is asked like a
 * protected file's: every time, in a modal, saying what names it.
 */
async function confirmGitNamed(
  gate: Gate,
  approvedCall: ApprovedCall,
  resolved: ResolvedPath,
  environment: Environment,
  gitNames: Map<string, Promise<GitName[]>>,
  signal: AbortSignal,
): Promise<void> {
  const local = resolved.realRoot ?? resolved.root.localPath;
  if (local === undefined) return;
  const abs = nodePath.join(local, ...resolved.realRel.split('/'));
  const dir = nodePath.dirname(abs);
  let names = gitNames.get(dir);
  if (names === undefined) gitNames.set(dir, (names = gitNamesFor(dir, environment.home, environment.env())));
  const named = gitNameIn(abs, await names);
  if (named === undefined) return;
  // A named file written in this call (an included configuration) can name others: read them again after it.
  gitNames.clear();
  const first = approvedCall.call;
  if (first.targets.some((t) => t.display === resolved.display && t.action === 'ask' && t.source === 'protected'))
    return;
  const asked: GateTarget = {
    display: resolved.display,
    action: 'ask',
    rule: `git config ${named.key}`,
    source: 'protected',
    reason: named.why,
  };
  await askAgain(
    gate,
    approvedCall,
    resolved,
    () => asked,
    `The user declined ${approvedCall.toolName} on "${resolved.display}": it is ${named.why}.`,
    signal,
  );
}

/**
 * Asks the gate again about one resolved path of an approved call, as a secret (a modal, never
 * remembered): `asked` makes its target from the one the first question had, if any.
 */
async function askAgain(
  gate: Gate,
  approvedCall: ApprovedCall,
  resolved: ResolvedPath,
  asked: (first: GateTarget | undefined) => GateTarget,
  declined: string,
  signal: AbortSignal,
): Promise<void> {
  const first = approvedCall.call;
  const targets = first.targets.some((t) => t.display === resolved.display)
    ? first.targets.map((t) => (t.display === resolved.display ? asked(t) : t))
    : [...first.targets, asked(undefined)];
  if (signal.aborted) throw cancelled();
  const verdict = await gate({ ...first, targets, secret: true }, signal);
  // A host that refuses on its own (the CLI) says why; a person's decline is told with the names.
  if (!verdict.allow && verdict.reason && verdict.decidedBy !== 'person')
    throw refused(verdict.reason.what, verdict.reason.next);
  if (!verdict.allow)
    throw refused(declined, `Do not retry it under another name; ask the user what they want instead.`);
}

/** The rule protecting a resolved path from reading (ask or deny), by its name or by where it leads; undefined when none does. */
function readProtection(policy: Policy, resolved: ResolvedPath): ReadProtection | undefined {
  const decision = strictest([
    policy.decide(resolved.rel, 'read', resolved.root.localPath),
    policy.decide(resolved.realRel, 'read', resolved.realRoot ?? resolved.root.localPath),
  ]);
  return decision.action === 'ask' || decision.action === 'deny'
    ? { rule: decision.rule ?? '', action: decision.action }
    : undefined;
}

/** Security: a link inside the workspace must not launder a denied or secret path. */
function checkRealTarget(policy: Policy, risk: Risk, resolved: ResolvedPath): void {
  const lexical = policy.decide(resolved.rel, risk, resolved.root.localPath).action;
  const real = policy.decide(resolved.realRel, risk, resolved.realRoot ?? resolved.root.localPath);
  if (real.action === 'deny' || (real.action === 'ask' && lexical !== 'ask')) {
    if (resolved.realRel === resolved.rel) {
      throw refused(
        `"${resolved.display}" is really "${[resolved.realRoot, resolved.realRel].filter(Boolean).join('/')}" (the workspace folder "${resolved.root.name}" is a link), which the rule "${real.rule}" protects (${real.action} for ${risk}).`,
        `Ask the user to open the real folder instead.`,
      );
    }
    throw refused(
      `"${resolved.display}" is a link to a path that the rule "${real.rule}" protects (${real.action} for ${risk}).`,
      `Use the real path so the user is asked about it.`,
    );
  }
}
