/**
 * stage_file + media_apply_patch + save_media on a 10 MB source file (core), with the MCP server's
 * edit_file of the same change as the peer figure.
 */
import { readFileSync } from 'node:fs';
import type { BenchContext } from '../lib/context.ts';
import { coreHost } from '../lib/hosts.ts';
import { mcpAvailable, startMcp } from '../lib/mcp.ts';
import { result } from '../lib/report.ts';
import { compare, measure, median, round, time, type Side } from '../lib/stats.ts';
import { EDIT, type EditFile } from '../lib/workloads.ts';

export async function mediaCases(ctx: BenchContext, edit: EditFile): Promise<void> {
  const host = await coreHost(edit.dir);
  const mcp = mcpAvailable() ? await startMcp(edit.dir) : undefined;
  const steps = { stage: [] as number[], patch: [] as number[], save: [] as number[] };
  const expected = Buffer.from(edit.pristine.toString('utf8').replace(EDIT.find, EDIT.replace));
  const checkDisk = (who: string): void => {
    if (!readFileSync(edit.file).equals(expected))
      throw new Error(`${who}: the file on disk is not the patched content`);
  };
  try {
    const ours: Side<void> = {
      label: 'stage_file + media_apply_patch + save_media (core)',
      before: () => edit.restore(),
      run: async () => {
        let mediaId = '';
        steps.stage.push(
          await time(async () => {
            mediaId = ((await host.invoke('stage_file', { path: edit.rel })).result as { media_id: string }).media_id;
          }),
        );
        steps.patch.push(
          await time(async () => {
            mediaId = (
              (
                await host.invoke('media_apply_patch', {
                  media_id: mediaId,
                  patch: { find: EDIT.find, replace: EDIT.replace },
                })
              ).result as { media_id: string }
            ).media_id;
          }),
        );
        steps.save.push(await time(() => host.invoke('save_media', { media_id: mediaId })));
      },
      check: () => checkDisk('save_media'),
    };
    const title = `stage_file + media_apply_patch + save_media, ${(edit.pristine.length / 1e6).toFixed(0)} MB file`;
    ctx.log(title);
    const runs = ctx.runs(11);
    const breakdown = (): Record<string, number> =>
      Object.fromEntries(Object.entries(steps).map(([k, v]) => [`${k}MedianMs`, round(median(v.slice(-runs)))]));
    if (mcp) {
      const [oursSample, peer] = await compare(
        ours,
        {
          label: `MCP edit_file (server-filesystem ${mcp.version})`,
          before: () => edit.restore(),
          run: () => mcp.call('edit_file', { path: edit.file, edits: [{ oldText: EDIT.find, newText: EDIT.replace }] }),
          check: (out) => {
            if (out.isError) throw new Error(`MCP edit_file failed: ${out.text.slice(0, 300)}`);
            checkDisk('MCP edit_file');
          },
        },
        runs,
      );
      ctx.add(
        result({
          id: 'media.edit',
          title,
          goal: { kind: 'max', value: 150 },
          ours: oursSample,
          peer,
          details: breakdown(),
        }),
      );
    } else {
      const oursSample = await measure(ours, runs);
      ctx.add(
        result({ id: 'media.edit', title, goal: { kind: 'max', value: 150 }, ours: oursSample, details: breakdown() }),
      );
    }
  } finally {
    edit.restore();
    await mcp?.close();
    await host.dispose();
  }
}
