/**
 * P10: the per-caller copies of one server (`instances: per_session`). A server that keeps state
 * between calls (a working directory, a browser page, an open transaction) must not let one
 * caller's calls change what another's see, so each caller key (a 2025 session, a stdio
 * connection, a principal) gets its own running copy, started at its first call.
 *
 * The server's shared copy still lists the tools, prompts and resources (every copy runs the same
 * command, so they are the same), and serves the callers that have no key. Copies are bounded
 * (`max_instances`): a new caller replaces the copy idle the longest, or is answered `overloaded`
 * when every copy has a call open. A copy with no call for `instance_idle_ms` is stopped, and
 * so is a caller's copy when the caller goes away (its session closes).
 */
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import { failure, type Result } from '../core/result.js';
import type { TimerHandle, Timers } from '../core/timers.js';
import type { CallerLane } from './callers.js';
import type { Connection } from './connection.js';
import type { DispatchTarget } from './dispatch.js';
import { CallSlots } from './slots.js';

/** The sweep of idle copies runs at least this often. */
const MAX_SWEEP_MS = 60_000;

/** Options of {@link Instances}. */
export interface InstancesOptions {
  readonly server: ServerConfig;
  readonly logger: Logger;
  readonly timers: Timers;
  /** A new, unstarted connection to the server for caller `key`, logging as `logger`. */
  readonly connect: (logger: Logger, key: string) => Connection;
  /** Q1: a lane per copy when the server has `isolate_callers`. */
  readonly lane?: () => CallerLane;
}

/** One caller's copy. */
interface Instance extends DispatchTarget {
  readonly first: Promise<void>;
  /** Calls that asked for this copy and have not ended (waiting for its start included). */
  open: number;
  lastUsed: number;
}

/** The per-caller copies of one server. */
export class Instances {
  readonly #options: InstancesOptions;
  /** By caller key, least recently used first. */
  readonly #live = new Map<string, Instance>();
  #sweep: TimerHandle | undefined;
  #closed = false;
  /** Copies started so far: each copy's number in the log. */
  #started = 0;

  constructor(options: InstancesOptions) {
    this.#options = options;
  }

  /** Copies running now. */
  get size(): number {
    return this.#live.size;
  }

  /** Calls running and waiting on every copy. */
  get load(): { readonly inFlight: number; readonly queued: number } {
    let inFlight = 0;
    let queued = 0;
    for (const instance of this.#live.values()) {
      inFlight += instance.slots.inFlight;
      queued += instance.slots.waiting;
    }
    return { inFlight, queued };
  }

  /**
   * Runs `call` on the copy of `key`, started (and awaited through its first attempt) when it is
   * the key's first call. Answers `overloaded` without a call when the bound is reached and every
   * copy has a call open.
   */
  async run<T>(key: string, tool: string, call: (target: DispatchTarget) => Promise<T>): Promise<T | Result> {
    const instance = this.#live.get(key) ?? this.#start(key, tool);
    if (!('first' in instance)) return instance;
    // Most recently used last: the first entry is the one a new caller may replace.
    this.#live.delete(key);
    this.#live.set(key, instance);
    instance.open += 1;
    try {
      await instance.first;
      return await call(instance);
    } finally {
      instance.open -= 1;
      instance.lastUsed = this.#options.timers.now();
    }
  }

  /** The caller behind `key` went away: its copy stops (calls still open on it finish first). */
  release(key: string): void {
    const instance = this.#live.get(key);
    if (instance === undefined) return;
    this.#live.delete(key);
    this.#stop(instance, 'its caller went away');
  }

  /** Stops every copy (P5); resolves once every client is closed. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sweep !== undefined) this.#options.timers.clearTimeout(this.#sweep);
    const all = [...this.#live.values()];
    this.#live.clear();
    await Promise.all(all.map((instance) => instance.connection.close()));
  }

  /** P5, forced exit: SIGKILL every copy's child now. */
  killNow(): void {
    for (const instance of this.#live.values()) instance.connection.killNow();
  }

  /** Every copy's slots, for a drain (P5, O3). */
  idle(): Promise<unknown> {
    return Promise.all([...this.#live.values()].map((instance) => instance.slots.onIdle()));
  }

  #start(key: string, tool: string): Instance | Result {
    const { server, logger, timers } = this.#options;
    if (this.#closed) {
      return failure('downstream_unavailable', `Server "${server.name}" is shutting down`, {
        meta: { server: server.name, tool },
      });
    }
    if (this.#live.size >= server.instances.max && !this.#replaceIdlest()) {
      return failure(
        'overloaded',
        `Server "${server.name}" runs ${server.instances.max} copies (max_instances), each with a call open: retry when one ends`,
        {
          meta: { server: server.name, tool },
          errorData: { instances: this.#live.size, max_instances: server.instances.max },
        },
      );
    }
    this.#started += 1;
    const child = logger.child({ instance: this.#started });
    const connection = this.#options.connect(child, key);
    const lane = this.#options.lane?.();
    const instance: Instance = {
      server,
      connection,
      logger: child,
      slots: new CallSlots(server.concurrency),
      ...(lane !== undefined ? { lane } : {}),
      first: connection.start(),
      open: 0,
      lastUsed: timers.now(),
    };
    this.#live.set(key, instance);
    logger.info({ instances: this.#live.size }, 'started a copy for a new caller');
    this.#armSweep();
    return instance;
  }

  /** Stops the least recently used copy with no call open; false when every copy is busy. */
  #replaceIdlest(): boolean {
    for (const [key, instance] of this.#live) {
      if (instance.open > 0) continue;
      this.#live.delete(key);
      this.#stop(instance, 'a new caller needed its place (max_instances)');
      return true;
    }
    return false;
  }

  #stop(instance: Instance, why: string): void {
    instance.removing = true;
    this.#options.logger.info({ instances: this.#live.size, why }, 'stopping a copy');
    void instance.slots.onIdle().then(() => instance.connection.close());
  }

  /** The idle sweep: armed while any copy runs, so an idle gateway has no timer. */
  #armSweep(): void {
    if (this.#sweep !== undefined || this.#closed) return;
    const { timers, server } = this.#options;
    const every = Math.max(1, Math.min(MAX_SWEEP_MS, Math.ceil(server.instances.idleMs / 2)));
    this.#sweep = timers.setTimeout(() => {
      this.#sweep = undefined;
      const now = timers.now();
      for (const [key, instance] of this.#live) {
        if (instance.open > 0 || now - instance.lastUsed < server.instances.idleMs) continue;
        this.#live.delete(key);
        this.#stop(instance, `no call for ${server.instances.idleMs} ms (instance_idle_ms)`);
      }
      if (this.#live.size > 0) this.#armSweep();
    }, every);
  }
}
