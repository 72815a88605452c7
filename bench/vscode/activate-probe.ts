/**
 * extensionTestsPath entry for the activate() benchmark (bundled by bench/cases/extension.ts and run
 * in code-server's extension host by test/host/run-suite.mjs). It waits for Workspace Tools to be
 * active, then reads VS Code's own activation figures for it from the "Startup Performance" view
 * (Developer: Startup Performance, the `perf:` document): Load Code (requiring the bundle), Call
 * Activate (activate() until it returns its promise) and Finish Activate (until that promise
 * settles). If the extension's test API carries an `activateMs` field, that is recorded too.
 * Writes the figures as JSON to $WT_BENCH_RESULTS.
 */
import { writeFileSync } from 'node:fs';
import * as vscode from 'vscode';

const EXTENSION_ID = 'workspace-tools.workspace-tools';

export interface ProbeResult {
  readonly wasActive: boolean;
  /** The probe's own `await extension.activate()` (0 when it was already active). */
  readonly probeActivateMs: number;
  /** VS Code's activation times, from the Startup Performance table. */
  readonly vscode?: {
    readonly loadCodeMs: number;
    readonly callActivateMs: number;
    readonly finishActivateMs: number;
    readonly event: string;
    readonly eager: string;
  };
  /** `activateMs` from the extension's test API, when it has one. */
  readonly apiActivateMs?: number;
  readonly error?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The row of the "Extension Activation Stats" table for our extension. */
function parseRow(text: string): ProbeResult['vscode'] | undefined {
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | Extension | Eager | Load Code | Call Activate | Finish Activate | Event | By |
    if (cells.length < 8 || cells[1]?.toLowerCase() !== EXTENSION_ID) continue;
    const [loadCodeMs, callActivateMs, finishActivateMs] = [cells[3], cells[4], cells[5]].map(Number);
    if ([loadCodeMs, callActivateMs, finishActivateMs].some((n) => n === undefined || !Number.isFinite(n))) continue;
    return {
      loadCodeMs: loadCodeMs!,
      callActivateMs: callActivateMs!,
      finishActivateMs: finishActivateMs!,
      eager: cells[2] ?? '',
      event: cells[6] ?? '',
    };
  }
  return undefined;
}

export async function run(): Promise<void> {
  const out = process.env['WT_BENCH_RESULTS'];
  let resultToWrite: ProbeResult;
  try {
    const ext = vscode.extensions.getExtension<{ activateMs?: unknown } | undefined>(EXTENSION_ID);
    if (!ext) throw new Error(`${EXTENSION_ID} is not installed in this extension host`);
    const wasActive = ext.isActive;
    const started = performance.now();
    const api = await ext.activate();
    const probeActivateMs = wasActive ? 0 : performance.now() - started;
    // Opening the view registers its `perf:` document provider (it is created lazily).
    await vscode.commands.executeCommand('perfview.show');
    const uri = vscode.Uri.from({ scheme: 'perf', path: 'Startup Performance' });
    let row: ProbeResult['vscode'];
    let lastText = '';
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      try {
        lastText = (await vscode.workspace.openTextDocument(uri)).getText();
        row = parseRow(lastText);
      } catch (e) {
        lastText = `openTextDocument(${uri.toString()}) failed: ${e instanceof Error ? e.message : String(e)}`;
      }
      if (row) break;
      await sleep(500);
    }
    const apiActivateMs = typeof api?.activateMs === 'number' ? api.activateMs : undefined;
    resultToWrite = {
      wasActive,
      probeActivateMs,
      ...(row
        ? { vscode: row }
        : {
            error: `no activation row for ${EXTENSION_ID} in the Startup Performance view; it said: ${lastText.slice(0, 1500)}`,
          }),
      ...(apiActivateMs !== undefined ? { apiActivateMs } : {}),
    };
  } catch (e) {
    resultToWrite = { wasActive: false, probeActivateMs: 0, error: e instanceof Error ? e.message : String(e) };
  }
  if (out) writeFileSync(out, JSON.stringify(resultToWrite, null, 2));
}
