import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { callLayerFolder, makeLayer } from '../../src/core/shell/layer.ts';
import { testDir } from './harness.ts';

/*
 * Where a command's layer is made: on the workspace folder's filesystem, so that a new folder the
 * command makes lands by one rename. The call's temp folder serves when it shares that filesystem;
 * where it does not (a tmpfs /tmp), the workspace's state folder does.
 */

/**
 * A call's folder on a tmpfs (Linux's /dev/shm) and a workspace folder in the temp folder, on
 * another filesystem; or why this machine has no two to test with.
 */
function twoFilesystems(
  t: Parameters<typeof testDir>[0],
): { readonly dir: string; readonly call: string; readonly workspace: string } | { readonly skip: string } {
  const shm = '/dev/shm';
  if (!existsSync(shm)) return { skip: 'no /dev/shm on this machine' };
  if (statSync(shm).dev === statSync(tmpdir()).dev) return { skip: `${shm} and ${tmpdir()} are one filesystem here` };
  const dir = testDir(t, 'wt-layer-place-').path;
  const call = mkdtempSync(nodePath.join(shm, 'wt-layer-call-'));
  t.after(() => spawnSync('rm', ['-rf', call]));
  const workspace = nodePath.join(dir, 'ws');
  mkdirSync(workspace);
  return { dir, call, workspace };
}

test("a layer is made in the call's folder when that shares the workspace folder's filesystem; the state folder is not asked", async (t) => {
  const dir = testDir(t, 'wt-layer-place-').path;
  const [call, workspace] = ['call', 'ws'].map((name) => nodePath.join(dir, name));
  mkdirSync(call!);
  mkdirSync(workspace!);
  let asked = 0;
  const layer = await makeLayer(call!, [workspace!], () => {
    asked++;
    return Promise.resolve(nodePath.join(dir, 'state'));
  });
  assert.equal(layer.folders.length, 1);
  assert.ok(layer.folders[0]!.upper.startsWith(`${call}/`), layer.folders[0]!.upper);
  assert.equal(asked, 0);
});

test("where the call's folder is on another filesystem (a tmpfs temp folder), the layer is made in the state folder on the workspace's", async (t) => {
  const place = twoFilesystems(t);
  if ('skip' in place) return t.skip(place.skip);
  const { dir, call, workspace } = place;
  const state = nodePath.join(dir, 'state');
  mkdirSync(state);
  const layer = await makeLayer(call, [workspace], () => Promise.resolve(state));
  const { upper, work } = layer.folders[0]!;
  assert.ok(upper.startsWith(`${state}/`) && work.startsWith(`${state}/`), upper);
  assert.equal(statSync(upper).dev, statSync(workspace).dev);

  // A state folder on yet another filesystem than the workspace's is no better: the call's folder serves.
  const away = await makeLayer(call, [workspace], () => Promise.resolve(call));
  assert.ok(away.folders[0]!.upper.startsWith(`${call}/`), away.folders[0]!.upper);
});

test("a call's layer folder in the state folder is private, and what this host's processes that have ended left there is removed", async (t) => {
  const root = nodePath.join(testDir(t, 'wt-layer-root-').path, 'layers');
  const ended = spawnSync('true').pid;
  assert.ok(ended !== undefined && ended > 0);
  const owner = { host: 'box.example', pid: process.pid };
  const left = nodePath.join(root, `box.example-${ended}-a1B2c3`);
  // overlayfs leaves its scratch folder mode 000; a host killed mid-copy may leave files in it.
  mkdirSync(nodePath.join(left, 'layers', '0', 'work', 'work'), { recursive: true });
  writeFileSync(nodePath.join(left, 'layers', '0', 'work', 'work', 'copy'), 'x');
  chmodSync(nodePath.join(left, 'layers', '0', 'work', 'work'), 0o000);
  const running = nodePath.join(root, `box.example-${process.ppid}-d4E5f6`);
  mkdirSync(running, { recursive: true });
  const otherHost = nodePath.join(root, `other.example-${ended}-g7H8i9`);
  mkdirSync(otherHost);
  const notOurs = nodePath.join(root, `box.example-${ended}-notes`);
  mkdirSync(notOurs);

  const mine = await callLayerFolder(root, owner);
  assert.match(nodePath.basename(mine), new RegExp(`^box\\.example-${process.pid}-[A-Za-z0-9]{6}$`));
  assert.equal(statSync(mine).mode & 0o777, 0o700);
  assert.equal(
    existsSync(left),
    false,
    'a process of this host that ended: its layers are gone, scratch folder and all',
  );
  assert.equal(existsSync(running), true, 'a process still running keeps its layers');
  assert.equal(existsSync(otherHost), true, "another host's process (a shared home) is not judged from here");
  assert.equal(existsSync(notOurs), true, 'a name that is not a layer folder is left alone');
});

test('the state folder is not used for a layer when it lies inside a folder the command writes, or has a character overlayfs cannot take', async (t) => {
  const place = twoFilesystems(t);
  if ('skip' in place) return t.skip(place.skip);
  const { dir, call, workspace } = place;
  const inside = nodePath.join(workspace, '.state');
  const comma = nodePath.join(dir, 'st,ate');
  mkdirSync(inside, { recursive: true });
  mkdirSync(comma);
  for (const state of [inside, comma]) {
    const layer = await makeLayer(call, [workspace], () => Promise.resolve(state));
    assert.ok(layer.folders[0]!.upper.startsWith(`${call}/`), `${state}: ${layer.folders[0]!.upper}`);
  }
});
