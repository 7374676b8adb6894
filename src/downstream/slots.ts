/**
 * P2: at most `concurrency` calls in flight per server, the rest waiting in a p-queue.
 *
 * A call that finds a free slot and nobody waiting runs at once, without entering the queue: an
 * idle server is the common case, and p-queue's bookkeeping on every call (promise, events, abort
 * listener) was ~5% of the proxy's CPU per echo call (docs/performance-log.md). Only a call that has
 * to wait goes through p-queue, which then starts waiting calls in order as slots free up.
 *
 * The two kinds of runners share one limit by keeping `queue.concurrency` at the slots that calls
 * run at once leave free (the queue is paused while they hold all of them). A call runs at once
 * only when nobody waits, so while anybody waits the number of calls running at once can only
 * fall, and the queue is told each time it does.
 */
import PQueue from 'p-queue';
import { abortSignalOf, type CallSignal } from '../core/call-signal.js';

export class CallSlots {
  readonly #queue: PQueue;
  readonly #limit: number;
  /** Calls that skipped the queue and are still running. */
  #direct = 0;
  /** Resolves the waiters of {@link onIdle} when the last direct call ends. */
  #directIdle: Array<() => void> = [];

  /** @param limit `concurrency` (P2), ≥ 1. */
  constructor(limit: number) {
    this.#limit = limit;
    this.#queue = new PQueue({ concurrency: limit });
  }

  /** Calls running now. */
  get inFlight(): number {
    return this.#direct + this.#queue.pending;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.#queue.size;
  }

  /** True when a call arriving now would run at once. */
  get hasFreeSlot(): boolean {
    return this.#queue.size === 0 && this.inFlight < this.#limit;
  }

  /**
   * Runs `task` when a slot is free. `signal` only matters while the call waits: aborting it then
   * rejects with the signal's reason and the task never runs (p-queue's behaviour); once running,
   * the task itself must honour the signal.
   */
  run<T>(task: () => Promise<T>, signal?: CallSignal): Promise<T> {
    if (this.hasFreeSlot) return this.#runNow(task);
    this.#fitQueue();
    return this.#queue.add(task, signal ? { signal: abortSignalOf(signal) } : {});
  }

  /** Resolves once nothing runs and nothing waits. */
  async onIdle(): Promise<void> {
    while (this.inFlight > 0 || this.waiting > 0) {
      if (this.#direct > 0) await new Promise<void>((resolve) => this.#directIdle.push(resolve));
      else await this.#queue.onIdle();
    }
  }

  #runNow<T>(task: () => Promise<T>): Promise<T> {
    this.#direct++;
    let running: Promise<T>;
    try {
      running = task();
    } catch (error) {
      this.#leave();
      return Promise.reject(error);
    }
    // One reaction per call, not an async frame around the task.
    return running.then(
      (value) => {
        this.#leave();
        return value;
      },
      (error: unknown) => {
        this.#leave();
        throw error;
      },
    );
  }

  /** A direct call ended: its slot goes to the queue, or to whoever waits for idle. */
  #leave(): void {
    this.#direct--;
    if (this.#queue.size > 0) this.#fitQueue();
    if (this.#direct === 0 && this.#directIdle.length > 0) {
      const waiters = this.#directIdle;
      this.#directIdle = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Gives the queue the slots that direct calls leave free. */
  #fitQueue(): void {
    const free = this.#limit - this.#direct;
    if (free <= 0) {
      this.#queue.pause();
      return;
    }
    if (this.#queue.concurrency !== free) this.#queue.concurrency = free;
    if (this.#queue.isPaused) this.#queue.start();
  }
}
