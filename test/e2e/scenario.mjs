// The agent-mode harness every *.e2e.mjs scenario file shares: a scripted conversation with
// Copilot Chat's agent in a fresh workbench, the person's clicks, and checks of screen, model and disk.
// Agent mode end to end: Copilot Chat's agent (built into VS Code 1.139) driven by a scripted
// model (test/e2e/scripted-model, installed into the test profile only) that calls our tools;
// the test clicks the in-chat tool confirmations and dialogs like a person and checks what is on
// screen, what the model got back and what is on disk. Each scenario runs in its own workbench
// (fresh profile, fresh copy of test/fixtures/workspace), so an "Always Allow" or a saved edit
// does not leak into the next one. Screenshots of every step go to test-results/agent-<scenario>-*.
//
// A script is data, handed to the scripted model (see scripted-model/extension.cjs for
// `{{step N /regex/}}` references to earlier results). Each step names a tool and its input, and
// says what the person does and sees:
//   confirm   "skip" | "allowOnce" | "allowSession" | "allowWorkspace" | "alwaysAllow" on the
//             in-chat confirmation, "save" (or "skip") on a save's own in-chat confirmation,
//             "none" (default) when none may appear (auto-approved), or "mainIfAsked": the
//             confirmation's main button if one shows (VS Code's own tools, whose asking is theirs)
//   shows     strings the in-chat confirmation must contain (the path, pattern, folder) before
//             the person answers it
//   dialog    { message, click }: our extension's own modal dialog must appear with this message,
//             and the person clicks `click` (e.g. "Cancel" to decline)
//   expect    a regex (case-insensitive) the tool result the model received must match
//   reject    a regex the tool result must not match
// The scripted model ignores everything but `tool` and `input`. Hooks in the test (by step index)
// check the screen and the disk around a step.
//
// Set WT_AGENT_SCRIPT_FILE to run one more scenario from a JSON file ({prompt, steps, final?}).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { RESULTS_DIR } from '../host/run-suite.mjs';
import { CHAT, WORKBENCH } from '../host/selectors.mjs';
import * as d from './driver.mjs';
import { installPackagedExtension } from '../host/vsix.mjs';
import { hostTarget } from '../../scripts/package.mjs';
/** The fixture's fake secret (test/fixtures/workspace/.env): it must never reach the model. */
export const CANARY = 'WT_CANARY_ENV_7f3a';

// Bounds, not waits: a scenario takes 1-3 min on a loaded 2-core machine.
export const SCENARIO_TIMEOUT = 480_000;
export const STEP_TIMEOUT = 90_000;

/** path → sha256 of every file under dir, to tell whether (and where) the disk changed. */
export function snapshot(dir) {
  const out = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = join(e.parentPath, e.name);
    out[relative(dir, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return out;
}

/** Files whose content differs between two snapshots (added, removed or changed). */
export function changedFiles(a, b) {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((f) => a[f] !== b[f]).sort();
}

/**
 * The audit trail our extension writes to its "Workspace Tools" log output channel: the lines
 * (tool, target, verdict, decider, outcome) of the log file under the server's logs folder.
 */
export function auditLines(wb) {
  return logLines(wb).filter((l) => /\] \w+ "/.test(l));
}

/** Every line of our extension's log (audit lines, warnings, the gate summary). */
export function logLines(wb) {
  const logs = join(wb.server.userDataDir, 'logs');
  if (!existsSync(logs)) return [];
  return readdirSync(logs, { recursive: true })
    .map((f) => join(logs, String(f)))
    .filter((f) => /Workspace Tools\.log$/.test(f) && statSync(f).isFile())
    .flatMap((f) => readFileSync(f, 'utf8').split('\n'));
}

/**
 * Nothing the model received (prompts, tool results, errors, its own calls), nothing it logged and
 * nothing on screen holds the fixture's secret.
 */
export async function assertCanaryNeverReached({ page, received, events }) {
  const all = received();
  assert.ok(all.length > 0, 'the scripted model recorded what it received');
  const hits = all.flatMap((r, i) =>
    r.messages.flatMap((m) =>
      m.parts
        .filter((p) => JSON.stringify(p).includes(CANARY))
        .map((p) => `request ${i}: ${JSON.stringify(p).slice(0, 200)}`),
    ),
  );
  assert.deepEqual(hits, [], 'the canary reached the model');
  assert.ok(!JSON.stringify(events()).includes(CANARY), 'the canary is in the model log');
  assert.ok(!(await page.locator(CHAT.response).last().innerText()).includes(CANARY), 'the canary is on screen');
}

/** Removes this scenario's screenshots from an earlier run, so test-results/ shows this run only. */
function clearScreenshots(prefix) {
  if (!existsSync(RESULTS_DIR)) return;
  for (const f of readdirSync(RESULTS_DIR)) {
    if (f.startsWith(`${prefix}-`) && f.endsWith('.png')) rmSync(join(RESULTS_DIR, f), { force: true });
  }
}

/** Clicks a choice costs the person: a button is one, a choice in the button's dropdown two. */
const CLICKS = { skip: 1, allowSession: 1, save: 1, allowOnce: 2, allowWorkspace: 2, alwaysAllow: 2 };

/**
 * Runs one scripted conversation in a fresh workbench. `hooks[i]` may hold
 * `beforeAnswer(ctx)` (the confirmation or dialog is on screen, not answered yet) and
 * `afterResult(ctx, result)` (the model received the step's result); ctx is
 * {wb, page, step, index, events, disk(), clicks, steps, started}: `clicks` lists each click the
 * person made ({step, tool, what, count}), `steps` each step's files changed on disk since the
 * step before's result ({index, tool, confirm, files}), `started` when the prompt was sent.
 * `workspace` is the fixture folder copied for the workbench (default test/fixtures/workspace).
 */
export async function runScenario(
  t,
  { name, script, setup, hooks = {}, check, installed = false, settings, workspace = d.fixtureWorkspace },
) {
  const prefix = `agent-${name}`;
  clearScreenshots(prefix);
  const tmp = mkdtempSync(join(tmpdir(), `wt-agent-${name}-`));
  const modelLog = join(tmp, 'model.jsonl');
  const receivedLog = join(tmp, 'received.jsonl');
  const events = () => d.readModelLog(modelLog);
  const received = () => d.readModelLog(receivedLog);
  const manifest = d.manifest();
  let wb;
  let shot = 0;
  // Screenshots are numbered in the order they were taken: agent-<name>-NN-<what>.png.
  const screenshot = (what) => wb.screenshot(`${prefix}-${String(shot++).padStart(2, '0')}-${what}`);
  try {
    // `installed`: the extension as a person gets it (packaged, installed by VS Code's installer), with
    // the scripted model as the development extension; otherwise the extension under development.
    const extensions = installed
      ? {
          extensionDevelopmentPath: d.scriptedModelPath,
          extraExtensions: [await installPackagedExtension(d.extensionPath, tmp, { target: hostTarget() })],
        }
      : { extensionDevelopmentPath: d.extensionPath, extraExtensions: [d.scriptedModelPath] };
    wb = await d.openWorkbench({
      workspace,
      ...extensions,
      ...(settings ? { settings } : {}),
      name: prefix,
      extensionEnv: {
        WT_SCRIPTED_MODEL_SCRIPT: JSON.stringify(script),
        WT_SCRIPTED_MODEL_LOG: modelLog,
        WT_SCRIPTED_MODEL_RECEIVED: receivedLog,
        // Our tools have no implementation until the extension under test has activated.
        WT_SCRIPTED_MODEL_AWAIT: `${manifest.publisher}.${manifest.name}`,
        // No WORKSPACE_TOOLS_TEST_DECIDER: here the person (this test) answers our modal dialogs.
      },
    });
    const { page } = wb;
    const disk = () => snapshot(wb.workspaceDir);
    const clicks = [];
    const steps = [];
    const ctx = { wb, page, events, received, disk, screenshot, clicks, steps, started: 0 };
    await d.whenWorkbenchRestored(page);

    // On a fresh profile the built-in Copilot Chat waits for "chat setup"; opening the language
    // model manager (a modal editor) once enables it and lists the scripted model.
    await d.runCommand(page, 'Manage Language Models');
    await d.waitFor(
      () => events().some((e) => e.event === 'ready'),
      'Copilot Chat and the extension under test to activate',
      STEP_TIMEOUT,
    );
    await d.closeModalEditor(page, 'Scripted Model');
    await d.selectModel(page, 'Scripted Model');
    if (setup) await setup(ctx);
    await screenshot('model-selected');

    const initialDisk = disk();
    let lastDisk = initialDisk;
    ctx.started = Date.now();
    await d.sendPrompt(page, script.prompt ?? 'Go.');
    // Every tool the script needs must be offered to the model (matched as the scripted model
    // matches names: exact, `*_<tool>` or `<tool>*`), or the agent cannot call it at all.
    const offered = (
      await d.waitFor(
        () => events().find((e) => e.event === 'request' && e.tools?.length),
        'the first agent request',
        STEP_TIMEOUT,
      )
    ).tools;
    const missing = [...new Set(script.steps.map((s) => s.tool))].filter(
      (tool) => !offered.some((n) => n === tool || n.endsWith(`_${tool}`) || n.startsWith(tool)),
    );
    assert.deepEqual(
      missing,
      [],
      `Copilot Chat's agent does not offer these tools to the model. (It drops an extension tool whose name is one of its own model-facing tool names, e.g. apply_patch.) Offered: ${offered.join(' ')}`,
    );
    for (const [index, step] of script.steps.entries()) {
      const what = `step${index}-${step.tool}`;
      const confirm = step.confirm ?? 'none';
      const hook = hooks[index] ?? {};
      const stepCtx = { ...ctx, step, index };
      await d.waitFor(
        () => events().some((e) => e.event === 'tool-call' && e.step === index),
        `the model to call step ${index} (${step.tool})`,
        STEP_TIMEOUT,
      );
      const resultOf = () => events().find((e) => e.event === 'request' && e.results?.length > index);
      const diskBefore = disk();

      // What shows first: the in-chat confirmation, our modal dialog, or (nothing to confirm) the
      // result. The result first: once it is there, whatever is on screen belongs to a later step.
      const first = await d.waitFor(
        async () => {
          if (resultOf()) return 'result';
          if (await page.locator(CHAT.toolConfirmation).count()) return 'confirmation';
          if (await page.locator(WORKBENCH.dialog).count()) return 'dialog';
          return undefined;
        },
        `step ${index} (${step.tool}) to show a confirmation or return`,
        STEP_TIMEOUT,
      );
      if (first === 'dialog' && !step.dialog) {
        const dialog = await d.waitForDialog(page);
        await screenshot(`${what}-unexpected-dialog`);
        assert.fail(`step ${index} (${step.tool}): an unexpected modal dialog asks: ${dialog.message}`);
      }

      if (confirm === 'mainIfAsked') {
        if (first === 'confirmation') {
          const pending = await d.pendingToolConfirmation(page);
          const main = pending.locator.locator(CHAT.confirmationButton).first();
          const label = ((await main.innerText()) ?? '').trim();
          await screenshot(`${what}-confirm`);
          await main.click();
          await pending.settled();
          clicks.push({ step: index, tool: step.tool, what: label, count: 1 });
        }
      } else if (confirm !== 'none') {
        if (first !== 'confirmation') {
          assert.fail(
            `step ${index} (${step.tool}): expected an in-chat confirmation, got ${first}${first === 'result' ? `; the model got: ${resultOf().results[index].text}` : ''}`,
          );
        }
        const pending = await d.pendingToolConfirmation(page);
        // What our tool says (title and message), not VS Code's block of the raw JSON input.
        const asked = `${pending.title}\n${pending.message}`;
        assert.ok(
          pending.message,
          `step ${index} (${step.tool}): the confirmation has no message of ours; it reads: ${pending.text}`,
        );
        for (const s of step.shows ?? []) {
          assert.ok(
            asked.includes(s),
            `step ${index} (${step.tool}): the confirmation does not show ${JSON.stringify(s)}; it reads:\n${asked}`,
          );
        }
        assert.match(pending.text, /Skip/, `step ${index}: the confirmation offers Skip`);
        await hook.beforeAnswer?.(stepCtx);
        await screenshot(`${what}-confirm`);
        assert.deepEqual(
          changedFiles(diskBefore, disk()),
          [],
          `step ${index} (${step.tool}): the disk changed before the person answered`,
        );
        await d.answerToolConfirmation(page, confirm, { onMenu: () => screenshot(`${what}-menu`) });
        clicks.push({ step: index, tool: step.tool, what: confirm, count: CLICKS[confirm] ?? 1 });
      } else if (first === 'confirmation') {
        const { text } = await d.pendingToolConfirmation(page);
        await screenshot(`${what}-unexpected-confirm`);
        assert.fail(
          `step ${index} (${step.tool}): expected no in-chat confirmation (auto-approved), but one asks: ${text}`,
        );
      }

      if (step.dialog) {
        const dialog = await d.waitForDialog(page, STEP_TIMEOUT);
        assert.equal(dialog.message, step.dialog.message, `step ${index} (${step.tool}): the modal dialog's message`);
        assert.ok(
          dialog.buttons.includes(step.dialog.click),
          `step ${index}: the dialog offers ${step.dialog.click} (it has ${dialog.buttons.join(', ')})`,
        );
        await hook.beforeAnswer?.(stepCtx, dialog);
        await screenshot(`${what}-dialog`);
        assert.equal(
          resultOf(),
          undefined,
          `step ${index} (${step.tool}): the model got a result while the dialog was still open`,
        );
        await d.clickDialogButton(page, step.dialog.click);
        clicks.push({ step: index, tool: step.tool, what: `dialog: ${step.dialog.click}`, count: 1 });
      }

      // The model's next request carries this step's result.
      const withResult = await d.waitFor(resultOf, `step ${index}'s result to reach the model`, STEP_TIMEOUT);
      const result = withResult.results[index].text;
      if (step.expect) assert.match(result, new RegExp(step.expect, 'i'), `step ${index} (${step.tool}) result`);
      if (step.reject) assert.doesNotMatch(result, new RegExp(step.reject, 'i'), `step ${index} (${step.tool}) result`);
      if (confirm === 'skip')
        assert.deepEqual(changedFiles(diskBefore, disk()), [], `step ${index}: Skip changed the disk`);
      const nowDisk = disk();
      steps.push({ index, tool: step.tool, confirm, files: changedFiles(lastDisk, nowDisk) });
      lastDisk = nowDisk;
      await hook.afterResult?.(stepCtx, result);
      await screenshot(`${what}-done`);
    }

    const final = await d.waitFor(
      () => events().find((e) => e.event === 'final'),
      "the model's final answer",
      STEP_TIMEOUT,
    );
    const response = page.locator(CHAT.response).last();
    await d.waitFor(
      async () => (await response.textContent())?.includes(final.text.split('\n')[0]),
      'the final answer on screen',
      30_000,
    );
    await screenshot('final');
    await check?.({ ...ctx, initialDisk });
  } catch (err) {
    if (wb?.page) await screenshot('failure').catch(() => {});
    if (wb?.server) {
      const tail = auditLines(wb).slice(-20).join('\n');
      if (tail) t.diagnostic(`audit log:\n${tail}`);
    }
    const requests = events().filter((e) => e.event === 'request' && e.tools?.length);
    const lastRequest = requests.at(-1);
    if (lastRequest) {
      t.diagnostic(`tools offered to the model: ${lastRequest.tools.join(' ')}`);
      const results = lastRequest.results.map(
        (r, i) => `step ${i} (${script.steps[i]?.tool}): ${r.text.slice(0, 300)}`,
      );
      if (results.length) t.diagnostic(`results the model received:\n${results.join('\n')}`);
    }
    throw err;
  } finally {
    await wb?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The media id a stage_file / apply_patch result names. */
export const MEDIA_ID = '"media_id":"([^"]+)"';
