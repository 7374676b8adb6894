/**
 * The real clock of the `Timers` seam (`core/timers.ts`), shared by both ends' I/O like the
 * stdio framing (wire imports nothing of ours, so the interface is restated structurally). The globals are looked up on every
 * call (not captured at import), so `vi.useFakeTimers()` installed after this module loaded still
 * drives it. Timers are unref'd: a pending restart must not keep `check` or a shutting-down
 * process alive.
 */

/** The shape of `core/timers.ts`'s `Timers`, which `wire` may not import. */
interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock (`Date.now`, unref'd `setTimeout`). */
export const systemTimers: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    (handle as { unref?: () => void }).unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
