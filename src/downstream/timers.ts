/**
 * The clock seam of the downstream layer: restarts, withholding, grace periods and elapsed times
 * all go through it, so tests drive them with fake timers or a hand-made clock.
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
  /** Runs `fn` once after `ms`. Timers of the pool must never keep a finished process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The real clock. The globals are looked up on every call (not captured at import), so
 * `vi.useFakeTimers()` installed after this module loaded still drives it. Timers are unref'd:
 * a pending restart must not keep `check` or a shutting-down process alive.
 */
export const systemTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    (handle as { unref?: () => void }).unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
