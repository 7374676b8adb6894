/**
 * P3: the deadlines of calls waiting for a slot, on one timer. A queued call used to arm a timer
 * of its own (and link the caller's signal with `AbortSignal.any`); with 64 calls in flight to a
 * server of `concurrency: 8` every call queues, and that was most of what a queued call cost in a
 * process's first calls (docs/performance-log.md). One timer is armed at the earliest deadline;
 * a later one arms nothing, a cancelled one is only forgotten, and the timer, when it fires, runs
 * what is due and is armed again for the next.
 */
import type { TimerHandle, Timers } from '../core/timers.js';

/** One deadline; `cancel` forgets it (nothing runs). */
export interface Deadline {
  cancel(): void;
}

interface Entry extends Deadline {
  readonly at: number;
  readonly fire: () => void;
}

/**
 * @example
 * const deadlines = new Deadlines(systemTimers);
 * const wait = deadlines.add(timers.now() + 60_000, () => controller.abort());
 * wait.cancel(); // the call got its slot
 */
export class Deadlines {
  readonly #timers: Timers;
  readonly #entries = new Set<Entry>();
  #timer: TimerHandle | undefined;
  #armedFor = Infinity;

  constructor(timers: Timers) {
    this.#timers = timers;
  }

  /** Runs `fire` at `at` (on the timers' clock) unless cancelled first. */
  add(at: number, fire: () => void): Deadline {
    const entry: Entry = { at, fire, cancel: () => void this.#entries.delete(entry) };
    this.#entries.add(entry);
    if (at < this.#armedFor) this.#arm(at);
    return entry;
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#armedFor = at;
    this.#timer = this.#timers.setTimeout(this.#expire, Math.max(1, at - this.#timers.now()));
  }

  readonly #expire = (): void => {
    // The timer fired: its deadline is due even where the clock lags it.
    const now = Math.max(this.#timers.now(), this.#armedFor);
    this.#timer = undefined;
    this.#armedFor = Infinity;
    let next = Infinity;
    for (const entry of [...this.#entries]) {
      if (entry.at <= now) {
        this.#entries.delete(entry);
        entry.fire();
      } else if (entry.at < next) next = entry.at;
    }
    if (next < this.#armedFor) this.#arm(next);
  };
}
