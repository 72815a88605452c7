/**
 * One unbounded call on a scale tree (300,000 or 1,000,000 files) in a fresh process, so its memory figure is clean:
 *   node bench/child/scale.ts '{"root": "...", "tool": "find_files", "input": {"glob": "*"}}'
 * Prints one JSON line: the time until the first page came back, the time until the result artifact
 * was complete, the process's RSS before the call and its peak during it (the kernel's high-water
 * mark, reset just before the call, and a 5 ms sampler as a cross-check), and the artifact's last line.
 */
import { coreHost } from '../lib/hosts.ts';
import { procStatus, resetPeak } from '../lib/memory.ts';
import type { ToolName } from '../../src/core/contract/names.ts';
import { readArtifact } from '../../src/core/artifacts/page.ts';

interface Args {
  readonly root: string;
  readonly tool: ToolName;
  readonly input: Record<string, unknown>;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const host = await coreHost(args.root);
try {
  // Load every module the call needs before measuring: the same tool on a tiny scope.
  const warm = await host.invoke('list_directory', { max_depth: 1 });
  if (!warm.text) throw new Error('warm-up call returned nothing');
  await host.invoke('find_files', { glob: 'nothing-matches-this-*', max_depth: 1 });
  await host.invoke('search_files', { pattern: 'nothing matches this', max_depth: 1 });
  const rssBefore = procStatus('VmRSS') ?? process.memoryUsage.rss();
  const peakReset = resetPeak();
  let sampledPeak = rssBefore;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
  }, 5);
  const started = performance.now();
  const outcome = await host.invoke(args.tool, args.input);
  const firstPageMs = performance.now() - started;
  const result = outcome.result as { artifact?: { callId: string } };
  const callId = result.artifact?.callId;
  if (callId !== undefined) await host.session.artifacts.settled(callId);
  const totalMs = performance.now() - started;
  clearInterval(sampler);
  sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
  const hwm = procStatus('VmHWM');
  const info = callId !== undefined ? host.session.artifacts.get(callId) : undefined;
  const last =
    callId !== undefined && info
      ? (await readArtifact(host.session.artifacts, callId, { offset: -1 })).lines[0]?.text
      : undefined;
  process.stdout.write(
    JSON.stringify({
      firstPageMs,
      totalMs,
      modelBytes: Buffer.byteLength(outcome.text),
      artifactBytes: info?.bytes ?? 0,
      artifactLines: info?.lines ?? 0,
      heldBytes: info?.heldBytes ?? 0,
      lastLine: last ?? '',
      rssBefore,
      peakRss: peakReset && hwm !== undefined ? Math.max(hwm, sampledPeak) : sampledPeak,
      sampledPeak,
      peakFrom: peakReset && hwm !== undefined ? 'VmHWM' : 'sampler',
    }) + '\n',
  );
} finally {
  await host.dispose();
}
