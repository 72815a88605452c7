/**
 * One open_file of a big file in a fresh process, so its memory figure is clean:
 *   node bench/child/open-file.ts '{"root": "...", "rel": "big.log"}'
 * Prints one JSON line: the open's time, the process's RSS before it, its peak RSS during it (the
 * kernel's high-water mark, reset just before the open, and a 5 ms sampler as a cross-check), and
 * the time of the first artifact_read of the last lines after it.
 */
import { coreHost } from '../lib/hosts.ts';
import { procStatus, resetPeak } from '../lib/memory.ts';

interface Args {
  readonly root: string;
  readonly rel: string;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const host = await coreHost(args.root);
try {
  // Load every module the open path needs before measuring (a first, tiny call).
  await host.invoke('list_directory', { max_depth: 1 });
  const rssBefore = procStatus('VmRSS') ?? process.memoryUsage.rss();
  const peakReset = resetPeak();
  let sampledPeak = rssBefore;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
  }, 5);
  const started = performance.now();
  const opened = await host.invoke('open_file', { path: args.rel });
  const openMs = performance.now() - started;
  clearInterval(sampler);
  sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
  const hwm = procStatus('VmHWM');
  const handle = opened.result as { callId: string; lines: number; bytes: number };

  // The first read after the open: the 2,000 lines that end at the last line (the page is cut at 50 KiB).
  const readStarted = performance.now();
  const page = await host.invoke('artifact_read', { callId: handle.callId, offset: Math.max(1, handle.lines - 1999) });
  const firstReadMs = performance.now() - readStarted;

  process.stdout.write(
    JSON.stringify({
      openMs,
      firstReadMs,
      bytes: handle.bytes,
      lines: handle.lines,
      rssBefore,
      peakRss: peakReset && hwm !== undefined ? Math.max(hwm, sampledPeak) : sampledPeak,
      sampledPeak,
      peakFrom: peakReset && hwm !== undefined ? 'VmHWM' : 'sampler',
      pageBytes: Buffer.byteLength(page.text),
    }) + '\n',
  );
} finally {
  await host.dispose();
}
