import * as vscode from 'vscode';
import type { DiskWrite } from '../../core/contract/tool.ts';
import type { GateCall } from '../../core/gate.ts';
import type { StagedMedia } from '../../core/media/types.ts';
import type { Host } from '../host.ts';
import { fileUri } from '../uri.ts';
import { whyAsked } from '../gate.ts';
import { emptyBaseUri } from './uris.ts';
import { openStagedDiff } from './review.ts';
import type { StagedFileSystemProvider } from './provider.ts';

/*
 * A reviewed change set is one look and one click. VS Code 1.139's confirmation of an extension's
 * tool offers "Allow in this Session" as its main button (which would stop the review of every later
 * save) and "Allow Once" only in its dropdown; the API lets an extension set a title and a message,
 * nothing about the buttons. So in a chat, save_media is prepared without VS Code's confirmation and
 * asks itself, before it runs: the set opens as one multi-file diff, and VS Code's own in-chat
 * confirmation with buttons the caller names (the internal tool Copilot Chat uses for its own
 * questions) offers "Save" as its main button. Where that tool is not there, a modal dialog with
 * "Save" as its default button asks the same.
 */

/** VS Code's in-chat confirmation whose buttons the caller names; the first is its main (approving) button. */
export const CHAT_CONFIRMATION_TOOL = 'vscode_get_confirmation_with_options';

export const SAVE_LABEL = 'Save';
export const SKIP_LABEL = 'Skip';

/** What the person is asked about a save: the call as the gate judged it, and what it writes. */
export interface SaveReview {
  readonly call: GateCall;
  readonly writes: readonly DiskWrite[];
  /** The chat the call runs in (VS Code's opaque token), when it runs in one. */
  readonly toolInvocationToken: vscode.ChatParticipantToolToken | undefined;
  readonly token: vscode.CancellationToken;
}

/** The staged media a save writes, in its order. */
function mediaOf(host: Pick<Host, 'session'>, writes: readonly DiskWrite[]): StagedMedia[] {
  return writes.flatMap((w) => {
    const media = host.session.media.find(w.mediaId);
    return media ? [media] : [];
  });
}

/** One look: the set as one multi-file diff (VS Code's changes editor), a single file as its diff. */
export async function showChangeSet(
  host: Host,
  provider: StagedFileSystemProvider,
  writes: readonly DiskWrite[],
): Promise<void> {
  const media = mediaOf(host, writes);
  if (media.length === 0) return;
  if (media.length === 1) {
    await openStagedDiff(host, provider, media[0]!, { preserveFocus: true, preview: true });
    return;
  }
  // The disk side of a write or a delete is the bytes it was staged against (the save refuses if the
  // disk differs), named like its staged side so the changes editor shows a change, not a rename.
  const resources = media.map((m) => {
    const from = m.change.kind === 'move' ? m.change.from : undefined;
    const disk = from ? fileUri(from.root, from.rel, host.local) : emptyBaseUri(m);
    return [fileUri(m.path.root, m.path.rel, host.local), disk, provider.uriOf(m)] as const;
  });
  // VS Code adds the count: `Save set: disk ↔ staged m2, m4 (2 files)`.
  await vscode.commands.executeCommand(
    'vscode.changes',
    `Save set: disk ↔ staged ${media.map((m) => m.id).join(', ')}`,
    resources,
  );
}

/** The question, short enough to read without scrolling for a set of five: one line a file. */
export function reviewText(
  host: Pick<Host, 'session'>,
  review: Pick<SaveReview, 'call' | 'writes'>,
): { title: string; lines: string[] } {
  const media = mediaOf(host, review.writes);
  const title = media.length === 1 ? `Save ${media[0]!.path.display}?` : `Save ${media.length} files as one set?`;
  const lines = review.writes.map((w) => {
    const what = w.kind === 'delete' ? 'delete ' : w.kind === 'move' ? `move ${w.from?.display ?? '?'} → ` : '';
    return `${what}${w.path.display}  +${w.added} −${w.removed} (${w.mediaId})`;
  });
  const asked = review.call.targets.filter((t) => t.action === 'ask');
  for (const t of asked) lines.push(`${whyAsked(t)} You will also be asked in a dialog.`);
  return { title, lines };
}

/** The message as Markdown, one line a file (the set is open beside it), every name the model chose written as text. */
function reviewMarkdown(lines: readonly string[]): string {
  const md = new vscode.MarkdownString();
  for (const line of lines) {
    md.appendMarkdown('- ');
    md.appendText(line);
    md.appendMarkdown('\n');
  }
  return md.value;
}

/**
 * Asks the person whether to save, after opening the set: in the chat (VS Code's confirmation with
 * "Save" as its main button) or, where that cannot be shown, in a modal dialog with "Save" as its
 * default button. True when they chose Save.
 */
export async function askToSave(host: Host, provider: StagedFileSystemProvider, review: SaveReview): Promise<boolean> {
  // The person's own choice to approve every tool without asking (VS Code would not have asked either).
  if (vscode.workspace.getConfiguration('chat.tools.global').get<unknown>('autoApprove') === true) return true;
  await showChangeSet(host, provider, review.writes).catch((e: unknown) =>
    host.log.warn(`Could not open the change set: ${String(e)}`),
  );
  const { title, lines } = reviewText(host, review);
  if (review.toolInvocationToken !== undefined) {
    try {
      const input = { title, message: reviewMarkdown(lines), buttons: [SAVE_LABEL, SKIP_LABEL] };
      const result = await vscode.lm.invokeTool(
        CHAT_CONFIRMATION_TOOL,
        { input, toolInvocationToken: review.toolInvocationToken },
        review.token,
      );
      const answer = result.content
        .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ''))
        .join('');
      return answer === SAVE_LABEL;
    } catch (e) {
      if (review.token.isCancellationRequested) throw e;
      host.log.warn(
        `VS Code's in-chat confirmation (${CHAT_CONFIRMATION_TOOL}) is not available (${String(e)}): asking in a dialog.`,
      );
    }
  }
  const answer = await vscode.window.showInformationMessage(
    title,
    { modal: true, detail: lines.join('\n') },
    SAVE_LABEL,
  );
  return answer === SAVE_LABEL;
}
