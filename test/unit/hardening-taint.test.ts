import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { execFileSync } from 'node:child_process';
import * as nodePath from 'node:path';
import { SandboxError } from '../../src/core/errors.ts';
import type { GateCall } from '../../src/core/gate.ts';
import type { Gate } from '../../src/core/ports.ts';
import type { ConfirmRequest, Decider, Answer } from '../../src/vscode/gate.ts';
import { session, testDir, type TestSession } from './harness.ts';
import { FaultyFs } from './media-fixtures.ts';

/*
 * Issue 26 items 4 and 6, and undo's removal of a created file (item 10): every call that can reveal
 * content staged from a protected path is judged by that path's read rule, the modal cannot be
 * skipped by an allow rule or a remembered answer, and an undo removes exactly the file it created.
 */

// The VS Code gate, under a stand-in `vscode` module (it only needs one for its modal decider, which these tests replace).
registerHooks({
  resolve: (specifier, context, next) =>
    specifier === 'vscode'
      ? { url: 'data:text/javascript,export const window = {};', shortCircuit: true }
      : next(specifier, context),
});
const { VscodeGate } = await import('../../src/vscode/gate.ts');

const refused = (e: unknown): e is SandboxError => e instanceof SandboxError && e.code === 'E_SANDBOX_REFUSED';

/** A person who approves calls whose modal `approve` accepts and declines the rest, recording every modal. */
function person(approve: (call: GateCall) => boolean): Gate & { modals: GateCall[] } {
  const modals: GateCall[] = [];
  const gate = async (call: GateCall) => {
    // `secret` is what makes a host ask in a modal every time, whatever it auto-approves.
    if (!call.secret) return { allow: true, decidedBy: 'test' as const };
    modals.push(call);
    return { allow: approve(call), decidedBy: 'person' as const };
  };
  return Object.assign(gate, { modals });
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The oracle: a find that applies says the text is there. Recovers what follows `prefix` one
 * character at a time; a refused patch says nothing. Returns what it recovered and how many patches it made.
 */
async function oracle(
  s: TestSession,
  mediaId: string,
  prefix: string,
  length: number,
): Promise<{ recovered: string; patches: number }> {
  let recovered = '';
  let patches = 0;
  for (let i = 0; i < length; i++) {
    let found: string | undefined;
    for (const c of ALPHABET) {
      patches++;
      const applied = await s
        .invoke('media_apply_patch', { media_id: mediaId, patch: { find: `${prefix}${recovered}${c}`, replace: 'x' } })
        .then(
          () => true,
          (e: unknown) => {
            assert.ok(e instanceof SandboxError, `an unnarrated error: ${String(e)}`);
            return false;
          },
        );
      if (applied) {
        found = c;
        break;
      }
    }
    if (found === undefined) break;
    recovered += found;
  }
  return { recovered, patches };
}

test('attack: a patch is a yes/no oracle on content staged from a read-ask path (one stage and 115 patches, only the stage asked)', async (tc) => {
  // The person allows the one stage they are asked about, and declines every later modal.
  const gate = person((call) => call.tool === 'stage_file');
  const s = session(tc, { rules: [{ glob: 'config/creds.ini', read: 'ask' }], overrides: { gate } });
  mkdirSync(nodePath.join(s.root, 'config'));
  writeFileSync(nodePath.join(s.root, 'config/creds.ini'), 'user=admin\npassword=hunter2\n');
  const staged = await s.invoke('stage_file', { path: 'config/creds.ini' });
  assert.equal(gate.modals.length, 1);
  const { recovered, patches } = await oracle(s, staged.result.media_id!, 'password=', 7);
  assert.equal(
    recovered,
    '',
    `the patches recovered "${recovered}" with ${gate.modals.length} modal(s) for ${patches} patches`,
  );
  assert.equal(gate.modals.length, 1 + patches, 'a patch of protected content ran without asking');
  const patch = gate.modals[1]!;
  assert.deepEqual(
    [patch.tool, patch.taint],
    ['media_apply_patch', { from: 'config/creds.ini', rule: 'config/creds.ini' }],
  );
  assert.match(patch.summary, /"config\/creds\.ini"/);
});

test("a person's edit of a staged secret keeps its taint: patching the edit asks every time, as for the stage", async (tc) => {
  const gate = person((call) => call.tool === 'stage_file');
  const s = session(tc, { rules: [{ glob: 'config/creds.ini', read: 'ask' }], overrides: { gate } });
  mkdirSync(nodePath.join(s.root, 'config'));
  writeFileSync(nodePath.join(s.root, 'config/creds.ini'), 'user=admin\npassword=hunter2\n');
  const staged = await s.invoke('stage_file', { path: 'config/creds.ini' });
  const edit = s.session.media.stagePersonEdit(staged.result.media_id!, Buffer.from('user=root\npassword=hunter2\n'));
  assert.deepEqual(edit.taint, { from: 'config/creds.ini', rule: 'config/creds.ini', action: 'ask' });
  const { recovered, patches } = await oracle(s, edit.id, 'password=', 3);
  assert.equal(
    recovered,
    '',
    `the patches recovered "${recovered}" with ${gate.modals.length} modal(s) for ${patches} patches`,
  );
  assert.equal(gate.modals.length, 1 + patches, "a patch of the person's edit of protected content ran without asking");
});

test('attack: a read deny bypassed through the undo store: the previous bytes undo_save stages are patched as an oracle', async (tc) => {
  const gate = person(() => true);
  const s = session(tc, { rules: [{ glob: 'vault/**', read: 'deny' }], overrides: { gate } });
  mkdirSync(nodePath.join(s.root, 'vault'));
  const file = nodePath.join(s.root, 'vault/token.txt');
  writeFileSync(file, 'token=s3cr3t\n');
  // Writing is allowed: replace the content twice, then undo the first save, whose previous bytes are the secret.
  const first = await s.invoke('stage_file', { path: 'vault/token.txt', content: 'a\n' });
  const s1 = await s.invoke('save_media', { media_id: first.result.media_id });
  const second = await s.invoke('stage_file', { path: 'vault/token.txt', content: 'b\n' });
  await s.invoke('save_media', { media_id: second.result.media_id });
  const undo = await s.invoke('undo_save', { save_id: s1.result.save_id });
  assert.equal(undo.result.action, 'staged');
  const asked = gate.modals.length;
  const { recovered, patches } = await oracle(s, undo.result.media_id!, 'token=', 6);
  assert.equal(recovered, '', `${patches} patches recovered "${recovered}", which the rule "vault/**" denies reading`);
  assert.equal(gate.modals.length, asked, 'a denied read was put to the person instead of refused');
  const e = await s
    .invoke('media_apply_patch', { media_id: undo.result.media_id!, patch: { find: 'token=', replace: 'x' } })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  assert.ok(refused(e), String(e));
  assert.equal(
    e.message,
    `media_apply_patch on "vault/token.txt" was refused: its content came from "vault/token.txt", which the rule "vault/**" denies reading, so no call may reveal it. Do not retry with this media or one derived from it; stage the file with new content instead, or ask the user to change workspaceTools.rules.`,
  );
  // Nor can the bytes be saved where they could be read; written back to their own file, they are asked about.
  const elsewhere = await s.invoke('save_media', { media_id: undo.result.media_id!, path: 'copy.txt' }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(refused(elsewhere), String(elsewhere));
  assert.equal(existsSync(nodePath.join(s.root, 'copy.txt')), false);
  const listed = await s.invoke('list_media', {});
  assert.doesNotMatch(
    listed.text,
    /\+\d+ −\d+.*vault|vault.*\+\d+ −\d+/,
    'list_media gave line counts against the denied file',
  );
  await s.invoke('save_media', { media_id: undo.result.media_id! });
  assert.equal(gate.modals.at(-1)?.tool, 'save_media');
  assert.equal(readFileSync(file, 'utf8'), 'token=s3cr3t\n');
});

/** A scripted person at VS Code's modal dialog: `answer` decides, every request is recorded. */
function scripted(answer: (request: ConfirmRequest) => Answer): Decider & { requests: ConfirmRequest[] } {
  const requests: ConfirmRequest[] = [];
  return {
    requests,
    confirm: async (request) => {
      requests.push(request);
      return answer(request);
    },
  };
}

test('attack: a media staged from .env saves to an innocent path an allow rule covers, with no modal (the gate approved the allow rule before the taint)', async (tc) => {
  const decider = scripted((r) =>
    r.call.tool === 'stage_file' && r.call.targets.every((t) => t.links === undefined) ? 'allow-once' : 'decline',
  );
  const gate = new VscodeGate({ decider: () => decider, trusted: () => true }).gate;
  const s = session(tc, { rules: [{ glob: 'scratch/**', write: 'allow' }], overrides: { gate } });
  writeFileSync(nodePath.join(s.root, '.env'), 'API_KEY=k-123\n');
  const staged = await s.invoke('stage_file', { path: '.env' }, { origin: 'chat' });
  const saved = await s
    .invoke('save_media', { media_id: staged.result.media_id, path: 'scratch/x.txt' }, { origin: 'chat' })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.deepEqual(
    decider.requests.map((r) => r.call.tool),
    ['stage_file', 'save_media'],
    'the save of the secret was not put to the person',
  );
  assert.ok(refused(saved), String(saved));
  assert.equal(existsSync(nodePath.join(s.root, 'scratch/x.txt')), false, 'the secret landed under an innocent name');
  // A file with several names is not approved by an allow rule either.
  mkdirSync(nodePath.join(s.root, 'scratch'));
  writeFileSync(nodePath.join(s.root, 'scratch/a.txt'), 'a\n');
  linkSync(nodePath.join(s.root, 'scratch/a.txt'), nodePath.join(s.root, 'scratch/b.txt'));
  await assert.rejects(s.invoke('stage_file', { path: 'scratch/a.txt', content: 'z\n' }, { origin: 'chat' }), refused);
  assert.deepEqual(
    decider.requests.at(-1)?.call.targets.map((t) => t.links),
    [2],
  );
});

test('attack: "Allow for This Session" silences the hard-link question on a write to a hard link of .vscode/settings.json', async (tc) => {
  // The person trusts each tool for the session when first asked, and would decline a write to the alias.
  const decider = scripted((r) =>
    r.call.targets.some((t) => t.display === 'alias.json') ? 'decline' : 'allow-session',
  );
  const gate = new VscodeGate({ decider: () => decider, trusted: () => true }).gate;
  const s = session(tc, { overrides: { gate } });
  mkdirSync(nodePath.join(s.root, '.vscode'));
  const settings = nodePath.join(s.root, '.vscode/settings.json');
  writeFileSync(settings, '{}\n');
  linkSync(settings, nodePath.join(s.root, 'alias.json'));
  // A harmless file with two names first: its link questions are answered "Allow for This Session".
  writeFileSync(nodePath.join(s.root, 'notes.txt'), 'n\n');
  linkSync(nodePath.join(s.root, 'notes.txt'), nodePath.join(s.root, 'notes-copy.txt'));
  const notes = await s.invoke('stage_file', { path: 'notes.txt', content: 'm\n' }, { origin: 'chat' });
  await s.invoke('save_media', { media_id: notes.result.media_id }, { origin: 'chat' });
  const asked = decider.requests.length;
  const write = await (async () => {
    const staged = await s.invoke(
      'stage_file',
      { path: 'alias.json', content: '{"task.allowAutomaticTasks": "on"}\n' },
      { origin: 'chat' },
    );
    return s.invoke('save_media', { media_id: staged.result.media_id }, { origin: 'chat' });
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(decider.requests.length > asked, 'the hard link to .vscode/settings.json was written with no modal');
  assert.match(decider.requests[asked]!.detail, /"alias\.json" has 2 names \(hard links\)/);
  assert.ok(refused(write), String(write));
  assert.equal(readFileSync(settings, 'utf8'), '{}\n');
  assert.ok(
    decider.requests.every((r) => !r.rememberable),
    'a file with several names offered "Allow for This Session"',
  );
});

test("attack: save what the repository's git configuration runs or reads (a clean filter's script, a file it includes, a hook in its core.hooksPath) for VS Code's git to run on its next status — the stage and the save ask in a modal every time, never remembered; declined, nothing is written", async (tc) => {
  // The person trusts each tool for the session; asked about what git runs, they let it be staged and decline the save.
  const decider = scripted((r) =>
    !r.call.targets.some((t) => t.rule?.startsWith('git config ') === true)
      ? 'allow-session'
      : r.call.tool === 'stage_file'
        ? 'allow-once'
        : 'decline',
  );
  const gate = new VscodeGate({ decider: () => decider, trusted: () => true }).gate;
  const s = session(tc, { overrides: { gate } });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-C', s.root, ...args]);
  };
  git('init', '-q');
  git('config', 'filter.x.clean', './tools/clean.sh');
  git('config', 'include.path', '../team.gitconfig');
  git('config', 'core.hooksPath', 'team-hooks');
  mkdirSync(nodePath.join(s.root, 'tools'));
  mkdirSync(nodePath.join(s.root, 'team-hooks'));
  writeFileSync(nodePath.join(s.root, 'tools/clean.sh'), 'cat\n');
  const planted = '#!/bin/sh\ntouch pwned\n';
  for (const [path, key] of [
    ['tools/clean.sh', 'filter.x.clean'],
    ['team.gitconfig', 'include.path'],
    ['team-hooks/post-index-change', 'core.hooksPath'],
  ] as const) {
    const before = decider.requests.length;
    const staged = await s.invoke('stage_file', { path, content: planted }, { origin: 'chat' });
    const saved = await s.invoke('save_media', { media_id: staged.result.media_id }, { origin: 'chat' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(refused(saved), `${path}: ${String(saved)}`);
    const asked = decider.requests.slice(before);
    assert.deepEqual(
      asked.map((r) => r.call.tool),
      ['stage_file', 'save_media'],
      `${path}: not asked in a modal at each step`,
    );
    for (const request of asked) {
      assert.equal(request.call.targets[0]?.rule, `git config ${key}`);
      assert.match(request.detail, /git — VS Code's git too, outside the sandbox —/);
      assert.equal(request.rememberable, false, `${path}: the modal offered "Allow for This Session"`);
    }
    assert.match((saved as SandboxError).message, new RegExp(`declined save_media on "${path.replace(/\./g, '\\.')}"`));
  }
  assert.equal(readFileSync(nodePath.join(s.root, 'tools/clean.sh'), 'utf8'), 'cat\n');
  assert.equal(existsSync(nodePath.join(s.root, 'team.gitconfig')), false);
  assert.equal(existsSync(nodePath.join(s.root, 'team-hooks/post-index-change')), false);
  // A file git does not run is saved on the session's answer, no modal.
  const before = decider.requests.length;
  const notes = await s.invoke('stage_file', { path: 'tools/notes.txt', content: 'n\n' }, { origin: 'chat' });
  await s.invoke('save_media', { media_id: notes.result.media_id }, { origin: 'chat' });
  assert.equal(decider.requests.length, before);
});

test('attack: one save_media set writes a configuration git includes, naming a program, and that program: the program is asked about too (what git configurations name is read again after a named file is written in the call)', async (tc) => {
  // The person allows everything; the test counts the modals that name what git runs.
  const decider = scripted(() => 'allow-once');
  const gate = new VscodeGate({ decider: () => decider, trusted: () => true }).gate;
  const s = session(tc, { overrides: { gate } });
  execFileSync('git', ['-C', s.root, 'init', '-q']);
  execFileSync('git', ['-C', s.root, 'config', 'include.path', '../team.gitconfig']);
  const config = await s.invoke(
    'stage_file',
    { path: 'team.gitconfig', content: '[core]\n\tfsmonitor = ./tools/mon.sh\n' },
    { origin: 'chat' },
  );
  const program = await s.invoke('stage_file', { path: 'tools/mon.sh', content: 'touch pwned\n' }, { origin: 'chat' });
  const before = decider.requests.length;
  await s.invoke('save_media', { media_ids: [config.result.media_id, program.result.media_id] }, { origin: 'chat' });
  const named = decider.requests
    .slice(before)
    .flatMap((r) => r.call.targets.filter((t) => t.rule?.startsWith('git config ') === true))
    .map((t) => `${t.display}: ${t.rule}`);
  assert.ok(named.includes('team.gitconfig: git config include.path'), named.join('\n'));
  assert.ok(
    named.includes('tools/mon.sh: git config core.fsmonitor'),
    `the program the saved configuration names was written without its question:\n${named.join('\n')}`,
  );
});

test('attack: undo of a created file deletes by path, recursively, unpinned', async (tc) => {
  const fs = new FaultyFs();
  const s = session(tc, { fs });
  const outside = testDir(tc, 'wt-outside-');
  const created = async (path: string) => {
    const staged = await s.invoke('stage_file', { path, content: 'made by the save\n' });
    return (await s.invoke('save_media', { media_id: staged.result.media_id })).result.save_id!;
  };

  // The file is swapped for a folder between the undo's check and its removal: nothing in the folder goes.
  const s1 = await created('made.txt');
  const made = nodePath.join(s.root, 'made.txt');
  fs.beforeDelete = () => {
    fs.beforeDelete = undefined;
    renameSync(made, `${made}.moved`);
    mkdirSync(made);
    writeFileSync(nodePath.join(made, 'keep.txt'), 'keep\n');
  };
  const folder = await s.invoke('undo_save', { save_id: s1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(folder instanceof SandboxError, `not narrated: ${String(folder)}`);
  assert.equal(
    readFileSync(nodePath.join(made, 'keep.txt'), 'utf8'),
    'keep\n',
    'the undo removed a folder and what it held',
  );

  // Its folder is swapped for a link to an outside folder holding the same name: nothing outside goes.
  const s2 = await created('sub/made.txt');
  writeFileSync(nodePath.join(outside.path, 'made.txt'), 'outside\n');
  const sub = nodePath.join(s.root, 'sub');
  fs.beforeDelete = () => {
    fs.beforeDelete = undefined;
    renameSync(sub, `${sub}.old`);
    symlinkSync(outside.path, sub);
  };
  await s
    .invoke('undo_save', { save_id: s2 })
    .catch((e: unknown) => assert.ok(e instanceof SandboxError, `not narrated: ${String(e)}`));
  assert.equal(
    readFileSync(nodePath.join(outside.path, 'made.txt'), 'utf8'),
    'outside\n',
    'the undo removed a file outside the workspace through a link',
  );

  // Another file with the same bytes took its place since the save: it is not the file the save created.
  const s3 = await created('other.txt');
  const other = nodePath.join(s.root, 'other.txt');
  writeFileSync(`${other}.new`, 'made by the save\n');
  renameSync(`${other}.new`, other);
  const replaced = await s.invoke('undo_save', { save_id: s3 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(replaced instanceof SandboxError && replaced.code === 'E_SANDBOX_CONFLICT', String(replaced));
  assert.match(replaced.message, /no longer the file save s\d+ created/);
  assert.equal(existsSync(other), true);

  // The file itself, unchanged, is removed.
  const s4 = await created('plain.txt');
  const undone = await s.invoke('undo_save', { save_id: s4 });
  assert.equal(undone.result.action, 'removed');
  assert.equal(existsSync(nodePath.join(s.root, 'plain.txt')), false);
});
