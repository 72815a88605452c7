/** How a long call tells its host how far it got: items so far, and a line for a person. */
export type ProgressReporter = (done: number, message: string) => void;

/** Reports at most once per `intervalMs` (the first item at once), so a fast stream sends few notifications. */
export function throttledProgress(
  report: ProgressReporter,
  intervalMs = 250,
  now: () => number = Date.now,
): ProgressReporter {
  let last = Number.NEGATIVE_INFINITY;
  return (done, message) => {
    const at = now();
    if (at - last < intervalMs) return;
    last = at;
    report(done, message);
  };
}
