import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Tool } from '../../src/core/contract/tool.ts';
import { TOOLS } from '../../src/core/tools/index.ts';
import { ChatCalls } from '../../src/vscode/chat-calls.ts';
import { session } from './harness.ts';

/** `tool`, counting how often a call of it is validated (its schema asked for) and planned (`targets`, through `prepare`). */
function counted<R>(tool: Tool<R>): {
  readonly tool: Tool<R>;
  readonly validated: () => number;
  readonly planned: () => number;
} {
  let validated = 0;
  let planned = 0;
  return {
    tool: {
      ...tool,
      inputSchema: (declaration) => {
        validated++;
        return tool.inputSchema(declaration);
      },
      prepare: (input, scope) => {
        planned++;
        return tool.prepare(input, scope);
      },
    },
    validated: () => validated,
    planned: () => planned,
  };
}

test('a chat call is prepared once: from its confirmation (prepareInvocation) to its run (invoke), validation and targets() run once', async (t) => {
  const s = session(t);
  const stage = counted(TOOLS.stage_file);
  const chat = new ChatCalls(s.session);
  const input = { path: 'a.txt', content: 'hello\n' };
  const shown = chat.prepare(stage.tool, 'id:chat-1', input, () => false);
  assert.equal(shown?.prepared.call.summary, 'stage a.txt with new content');
  const run = chat.take(stage.tool, 'id:chat-1', input, true);
  assert.equal(run.origin, 'chat');
  const outcome = await chat.run(stage.tool, input, run, {});
  assert.equal(outcome.result.media_id, 'm1');
  assert.deepEqual([stage.validated(), stage.planned()], [1, 1]);
  // The gate was asked once, about the call as it was prepared for the confirmation.
  assert.deepEqual(
    s.gate.calls.map((c) => [c.tool, c.origin, c.summary]),
    [['stage_file', 'chat', 'stage a.txt with new content']],
  );
});

test('a chat save is prepared once, its writes (for the diff links and diagnostics) taken from that one preparation', async (t) => {
  const s = session(t);
  const staged = await s.invoke('stage_file', { path: 'b.txt', content: 'saved\n' });
  const save = counted(TOOLS.save_media);
  const chat = new ChatCalls(s.session);
  const input = { media_id: staged.result.media_id };
  const shown = chat.prepare(save.tool, 'id:chat-1', input, (prepared) => prepared.writes.length > 0);
  assert.equal(shown?.asksItself, true);
  const run = chat.take(save.tool, 'id:chat-1', input, true);
  assert.deepEqual(
    run.prepared?.writes.map((w) => [w.kind, w.path.display]),
    [['write', 'b.txt']],
  );
  await chat.run(save.tool, input, run, {});
  assert.equal(readFileSync(join(s.root, 'b.txt'), 'utf8'), 'saved\n');
  assert.deepEqual([save.validated(), save.planned()], [1, 1]);
});

test('a call VS Code runs with no confirmation prepared for it in its chat runs as unprepared (the gate asks in a modal)', async (t) => {
  const s = session(t);
  const stage = counted(TOOLS.stage_file);
  const chat = new ChatCalls(s.session);
  const input = { path: 'c.txt', content: 'x\n' };
  // Prepared in another chat: not this one's confirmation.
  chat.prepare(stage.tool, 'id:chat-other', input, () => false);
  const run = chat.take(stage.tool, 'id:chat-1', input, true);
  assert.equal(run.origin, 'unprepared');
  await chat.run(stage.tool, input, run, {});
  assert.deepEqual(
    s.gate.calls.map((c) => c.origin),
    ['unprepared'],
  );
  assert.deepEqual(
    [stage.validated(), stage.planned()],
    [2, 2],
    "once for the other chat's confirmation, once for this run",
  );
});
