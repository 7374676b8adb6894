/**
 * Restart delays for a downstream that went down (P4): capped exponential backoff with "equal
 * jitter". Pure: the attempt number and the random source are parameters, no clock inside, so a
 * table test can pin every delay.
 */

/** Shape of the backoff curve. */
export interface BackoffOptions {
  /**
   * Upper bound of the first delay (attempt 0), in ms.
   * @default 500
   */
  readonly initialMs?: number;
  /**
   * No delay exceeds this, in ms.
   * @default 30000
   */
  readonly maxMs?: number;
  /**
   * Growth of the upper bound per attempt.
   * @default 2
   */
  readonly factor?: number;
}

/** The defaults of {@link BackoffOptions}. */
export const DEFAULT_BACKOFF: Required<BackoffOptions> = Object.freeze({
  initialMs: 500,
  maxMs: 30_000,
  factor: 2,
});

/**
 * The delay before restart attempt `attempt` (0 for the first restart after a failure).
 *
 * Equal jitter: with `cap = min(maxMs, initialMs * factor^attempt)` the delay is uniformly drawn
 * between `cap / 2` and `cap` (rounded to whole ms). Full jitter (`[0, cap)`) spreads load best but may restart a
 * crash-looping child almost at once; equal jitter keeps at least half the cap between attempts
 * while still de-synchronising servers that died together.
 *
 * @param attempt  0-based count of consecutive failed attempts; negative or fractional values are
 *   treated as 0 / floored.
 * @param random   a source of numbers in `[0, 1)` (`Math.random` in production); values outside are
 *   clamped, so a bad source can never produce a negative or uncapped delay.
 * @example nextDelay(0, () => 0.5) // 375 with the defaults
 */
export function nextDelay(attempt: number, random: () => number, options: BackoffOptions = {}): number {
  const { initialMs, maxMs, factor } = { ...DEFAULT_BACKOFF, ...options };
  const n = Number.isFinite(attempt) && attempt > 0 ? Math.floor(attempt) : 0;
  // Math.pow overflows to Infinity for large n; min() caps it, so no loop or guard is needed.
  const cap = Math.min(maxMs, initialMs * Math.pow(factor, n));
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.round(cap / 2 + (cap / 2) * unit);
}
