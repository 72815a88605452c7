import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import { userEditOf, type UserEdit } from '../media/types.ts';

export const listMediaSchema = () => z.strictObject({});

export interface ListedMedia {
  readonly media_id: string;
  readonly path: string;
  /** Line counts against disk; omitted for a media holding protected content. */
  readonly added?: number;
  readonly removed?: number;
  /** The protected path its content came from: its counts and edits are not shown. */
  readonly protected_from?: string;
  readonly is_new: boolean;
  readonly age_s: number;
  readonly parent_id?: string;
  /** Why saving it would conflict, when it would. */
  readonly stale?: string;
  /** The user's edit in the editor within this media's line of edits. */
  readonly user_edit?: UserEdit;
}

export interface ListMediaResult {
  readonly media: readonly ListedMedia[];
}

function age(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}min`;
  return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}min`;
}

export function renderListMedia(r: ListMediaResult): string {
  if (r.media.length === 0) return 'No unsaved staged media.';
  const lines = [`${r.media.length} unsaved staged media (the latest version of each; none of this is on disk):`];
  for (const m of r.media) {
    const notes = [`${age(m.age_s)} old`];
    if (m.parent_id) notes.push(`from ${m.parent_id}`);
    if (m.user_edit)
      notes.push(`edited by the user: +${m.user_edit.added} −${m.user_edit.removed} against ${m.user_edit.against}`);
    if (m.stale) notes.push(`STALE: ${m.stale}`);
    const counts =
      m.protected_from === undefined
        ? `+${m.added ?? 0} −${m.removed ?? 0}`
        : `content from the protected "${m.protected_from}" (changes not shown)`;
    lines.push(`${m.media_id} "${m.path}"${m.is_new ? ' (new file)' : ''} ${counts}, ${notes.join(', ')}`);
  }
  lines.push('Call save_media for each change you want to keep; earlier versions keep their ids.');
  return lines.join('\n');
}

export const listMedia = defineTool({
  name: 'list_media',
  displayName: 'List Staged Files',
  userDescription: 'List staged files that have not been saved.',
  description:
    'Lists the staged media not yet saved: path, +/- against disk, age, parent id, and whether the user edited them. Anything listed here has NOT changed on disk; call save_media for each change you want to keep.',
  risk: 'read',
  requires: [],
  needs: ['media', 'clock'],
  icon: 'checklist',
  schema: listMediaSchema,
  targets: () => ({ paths: [], summary: 'list staged files' }),
  run: async (_input, ctx): Promise<ListMediaResult> => {
    const store = ctx.media;
    const now = ctx.clock.now();
    const media = store.heads().map((m): ListedMedia => {
      // Security: line counts against a protected file tell what it holds, a line at a time.
      const counts = m.taint ? { protected_from: m.taint.from } : store.changes(m.id);
      const person = m.taint ? undefined : store.personChange(m.id);
      const stale =
        m.stale === undefined
          ? undefined
          : m.stale.kind === 'saved'
            ? `${m.stale.by} was saved to this file since; stage it again to edit further`
            : 'the file changed on disk since it was staged; stage it again';
      return {
        media_id: m.id,
        path: m.path.display,
        ...counts,
        is_new: m.isNew,
        age_s: Math.max(0, Math.floor((now - m.createdAt) / 1000)),
        ...(m.parentId ? { parent_id: m.parentId } : {}),
        ...(stale ? { stale } : {}),
        ...userEditOf(person),
      };
    });
    return { media };
  },
  render: renderListMedia,
});
