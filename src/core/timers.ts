/**
 * The clock seam of every layer: restarts, withholding, grace periods, bounded waits and elapsed
 * times go through a {@link Timers}, so tests drive them with fake timers or a hand-made clock.
 * Pure: the real clock (`systemTimers`) lives where I/O may (`downstream/timers.ts`) and is
 * handed in by the composition root.
 */

/** An opaque timer handle, as returned by {@link Timers.setTimeout}. */
export type TimerHandle = unknown;

/**
 * Time and one-shot timers.
 * @example const t: Timers = { now: () => 0, setTimeout: (fn) => fn(), clearTimeout: () => {} };
 */
export interface Timers {
  /** Milliseconds on a monotonic-enough clock (only differences are used). */
  now(): number;
  /** Runs `fn` once after `ms`. A timer must never keep a finished process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * Waits for `promise` at most `ms`: `'done'` when it settled first (fulfilled or rejected: a
 * bounded wait only cares that it ended), `'timeout'` otherwise. The timer goes either way.
 * @example if ((await raceTimeout(closing, 5000, timers)) === 'timeout') killNow();
 */
export async function raceTimeout(
  promise: Promise<unknown>,
  ms: number,
  timers: Timers,
): Promise<'done' | 'timeout'> {
  let handle: TimerHandle | undefined;
  const bound = new Promise<'timeout'>((resolve) => {
    handle = timers.setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      bound,
    ]);
  } finally {
    timers.clearTimeout(handle);
  }
}
