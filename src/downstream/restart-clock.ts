/**
 * P4: when a down server is tried again (exponential backoff with jitter, `backoff.ts`), and when
 * one that stays away loses its lists (`withhold_after_ms`, T10). One per connection; the
 * connection says when it went down and when it is ready, this keeps the timers and counts.
 */
import { nextDelay, type BackoffOptions } from './backoff.js';
import type { TimerHandle, Timers } from '../core/timers.js';

/** What a {@link RestartClock} runs when its timers fire. */
export interface RestartActions {
  /** The next attempt (a restart). */
  restart(): void;
  /** The server stayed down `withholdAfterMs`: its lists go (unless it is back meanwhile). */
  withhold(): void;
}

export class RestartClock {
  #restarts = 0;
  #failures = 0;
  #nextAttemptAt: number | undefined;
  #restartTimer: TimerHandle | undefined;
  #withholdTimer: TimerHandle | undefined;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #backoff: BackoffOptions;
  readonly #withholdAfterMs: number;

  constructor(timers: Timers, random: () => number, backoff: BackoffOptions, withholdAfterMs: number) {
    this.#timers = timers;
    this.#random = random;
    this.#backoff = backoff;
    this.#withholdAfterMs = withholdAfterMs;
  }

  /** Restart attempts so far. */
  get restarts(): number {
    return this.#restarts;
  }

  /** ms until the next attempt, once scheduled; else undefined. */
  retryAfterMs(): number | undefined {
    if (this.#nextAttemptAt === undefined) return undefined;
    return Math.max(0, this.#nextAttemptAt - this.#timers.now());
  }

  /** The server is ready: the backoff starts over and nothing is withheld. */
  ready(): void {
    this.#failures = 0;
    this.#nextAttemptAt = undefined;
    if (this.#withholdTimer !== undefined) this.#timers.clearTimeout(this.#withholdTimer);
    this.#withholdTimer = undefined;
  }

  /**
   * The server went down: the next attempt is scheduled after the backoff's next delay, and
   * (when `withholdable`: its lists are not withheld yet) the withhold timer starts unless it
   * runs already. Returns the delay.
   */
  down(actions: RestartActions, withholdable: boolean): number {
    if (this.#withholdTimer === undefined && withholdable) {
      this.#withholdTimer = this.#timers.setTimeout(() => {
        this.#withholdTimer = undefined;
        actions.withhold();
      }, this.#withholdAfterMs);
    }
    const delay = nextDelay(this.#failures++, this.#random, this.#backoff);
    this.#nextAttemptAt = this.#timers.now() + delay;
    this.#restartTimer = this.#timers.setTimeout(() => {
      this.#restartTimer = undefined;
      this.#restarts++;
      actions.restart();
    }, delay);
    return delay;
  }

  /** For good (the connection closed): no timer fires any more. */
  stop(): void {
    if (this.#restartTimer !== undefined) this.#timers.clearTimeout(this.#restartTimer);
    if (this.#withholdTimer !== undefined) this.#timers.clearTimeout(this.#withholdTimer);
    this.#restartTimer = undefined;
    this.#withholdTimer = undefined;
  }
}
