import type { BatchPlan } from '../core/pipeline/batch-gate.ts';
import { askedEveryTime, type GateCall, type GateTarget } from '../core/gate.ts';
import type { HostRequest } from '../core/shell/port.ts';
import { describeProtectedGlobs } from '../core/policy/protected.ts';
import { markdownText, plainText } from '../core/text/escape.ts';

/*
 * What VS Code asks the person, as text: the modal dialog's message and detail (plain text), and
 * the chat confirmation (Markdown). Pure functions, no `vscode` import, so tests build them as the
 * extension does. Security: the model's text (summaries, paths, rules a repository wrote, hosts,
 * commands) reaches each medium only through that medium's escaping function (`plainText` for the
 * dialog, `markdownText` for the chat), applied here and nowhere else.
 */

function verb(call: GateCall): string {
  if (call.risk === 'read') return 'read';
  if (call.risk === 'exec') return 'run a command in';
  // Staging and patching change memory only; saving is what writes.
  return call.writesDisk ? 'write' : 'stage a change to';
}

/** One sentence for the person: why this path is asked every time (which rule, from where, and why it exists). Raw: each medium escapes it. */
export function whyAsked(target: GateTarget): string {
  const rule = `"${target.rule ?? ''}"`;
  switch (target.source) {
    case 'secret':
      return `"${target.display}" matches the built-in secret rule ${rule}: ${target.reason}.`;
    case 'protected':
      return `"${target.display}" is protected by the built-in rule ${rule}: ${target.reason}. Writing it is asked every time, even when the tool is auto-approved.`;
    case 'workspace':
      return `"${target.display}" matches the rule ${rule} in the workspace settings (workspaceTools.rules).`;
    default:
      return `"${target.display}" matches your rule ${rule} (workspaceTools.rules).`;
  }
}

/** The call's paths as the person reads them. */
export function targetList(call: GateCall): string {
  return call.targets.map((t) => (t.display === '.' ? 'the workspace' : t.display)).join(', ') || 'the workspace';
}

/** The modal dialog's question about a call: plain text, each line through `plainText`. */
export function describeCall(call: GateCall): { message: string; detail: string } {
  const targets =
    call.targets.map((t) => (t.display === '.' ? 'the workspace' : `"${t.display}"`)).join(', ') || 'the workspace';
  const asked = call.targets.find((t) => t.action === 'ask');
  const because = askedEveryTime(call);
  const message =
    because?.kind === 'taint'
      ? `Allow ${call.tool} to ${verb(call)} ${targets} with content staged from the protected file "${because.from}"?`
      : because?.kind === 'protected-writes'
        ? `Allow ${call.tool} to run a command that may WRITE PROTECTED FILES in ${targets}?`
        : because?.kind === 'links'
          ? `Allow ${call.tool} to ${verb(call)} "${because.target.display}", a file with ${because.links} names (hard links)?`
          : because?.kind === 'rule'
            ? `Allow ${call.tool} to ${verb(call)} the protected file "${because.target.display}"?`
            : `Allow ${call.tool} to ${verb(call)} ${targets}?`;
  const lines = [`${call.summary}.`, `Risk: ${call.risk}.`];
  if (call.origin === 'unprepared')
    lines.push('This call was not shown to you in the chat: its confirmation could not be prepared before it ran.');
  for (const t of call.targets)
    if ((t.links ?? 1) > 1)
      lines.push(
        `"${t.display}" has ${t.links} names (hard links): the same bytes may also be a protected file under another name.`,
      );
  if (call.taint)
    lines.push(
      call.writesDisk
        ? `"${call.taint.from}" matches the rule "${call.taint.rule}" (workspaceTools.rules): once saved to ${targets}, its content is no longer protected there.`
        : `"${call.taint.from}" matches the rule "${call.taint.rule}" (workspaceTools.rules): whether this call succeeds tells what its content holds.`,
    );
  if (asked) lines.push(whyAsked(asked));
  if (call.protectedWrites) {
    lines.push(
      `For this command only, what it writes to files matching these protected globs is applied when it ends instead of staged for your review (they configure tools, builds, CI and agents, or decide what gets installed): ${describeProtectedGlobs(call.protectedWrites)}.`,
    );
    lines.push(
      "Secrets stay unreadable; changes to .vscode and to every repository's hooks and config are still staged for review. Asked every time: no earlier answer covers it.",
    );
  }
  return { message: plainText(message), detail: lines.map(plainText).join('\n') };
}

/** The modal dialog's question about a host a command wants to reach: plain text, through `plainText`. */
export function describeHost(request: HostRequest): { message: string; detail: string } {
  const where = request.port === undefined ? `"${request.host}"` : `"${request.host}" (port ${request.port})`;
  const commands =
    request.commands.length <= 1
      ? `The command: ${request.commands[0] ?? '(ended)'}`
      : `Running now (one of them asks; the sandbox cannot tell which): ${request.commands.join(' | ')}`;
  return {
    message: plainText(`Allow a sandboxed command to connect to ${where}?`),
    detail: [
      `${commands}.`,
      `${request.host} is not in workspaceTools.shell.allowedDomains. "Allow Once" lets this connection through; "Allow for This Session" lets every command reach ${request.host} until the window closes or approvals are reset. Anything else refuses it, and the command's result says so.`,
    ]
      .map(plainText)
      .join('\n'),
  };
}

const RISK_NOTES: Readonly<Record<GateCall['risk'], string>> = {
  read: ' (the content goes to the language model)',
  write: ' (changes what is staged or on disk)',
  exec: ' (runs the whole command shown, inside the OS sandbox described above; its output goes to the language model)',
};

/**
 * The chat confirmation's Markdown for a call: its summary in bold, then a list (path, risk, why a
 * path is also asked in a dialog, what a batch leaves out). Only the bold, the list markers and the
 * risk's name and note (ours) are markup; every other text goes through `markdownText`.
 */
export function confirmationMarkdown(call: GateCall, batch: BatchPlan | undefined): string {
  const item = (text: string): string => `- ${markdownText(text)}\n`;
  const out = [
    `**${markdownText(call.summary)}**\n\n`,
    item(`Path: ${targetList(call)}`),
    `- Risk: **${call.risk}**${RISK_NOTES[call.risk]}\n`,
  ];
  const asked = call.targets.find((t) => t.action === 'ask');
  if (call.taint)
    out.push(
      item(
        `The content was staged from ${call.taint.from}, which the protected rule ${call.taint.rule} covers: you will also be asked in a dialog.`,
      ),
    );
  else if (asked) out.push(item(`${whyAsked(asked)} You will also be asked in a dialog.`));
  if (call.protectedWrites)
    out.push(
      item(
        `allow_protected_writes: the command may write protected files (${describeProtectedGlobs(call.protectedWrites)}). You will also be asked in a dialog, every time.`,
      ),
    );
  for (const t of batch?.asked ?? [])
    out.push(item(`Not covered here: ${whyAsked(t)} You will be asked about it alone in a dialog.`));
  for (const t of batch?.denied ?? [])
    out.push(item(`Not read: "${t.display}" is denied by the rule "${t.rule ?? ''}".`));
  return out.join('');
}
