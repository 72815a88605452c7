import { coreHost } from './lib/hosts.ts';
import { EDIT, editFile } from './lib/workloads.ts';
const edit = editFile();
const host = await coreHost(edit.dir);
for (let i = 0; i < 30; i++) {
  edit.restore();
  const t0 = performance.now();
  let id = ((await host.invoke('stage_file', { path: edit.rel })).result as { media_id: string }).media_id;
  const t1 = performance.now();
  id = ((await host.invoke('media_apply_patch', { media_id: id, patch: { find: EDIT.find, replace: EDIT.replace } })).result as { media_id: string }).media_id;
  const t2 = performance.now();
  await host.invoke('save_media', { media_id: id });
  const t3 = performance.now();
  if (i % 5 === 0) console.log(`stage ${(t1 - t0).toFixed(1)} patch ${(t2 - t1).toFixed(1)} save ${(t3 - t2).toFixed(1)}`);
}
await host.dispose();
