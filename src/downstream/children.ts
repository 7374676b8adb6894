/**
 * P5: what one connection has started and must end: the stdio children of its attempts (a start
 * that timed out, a crashed one, the live one) and the closes of its clients still under way. No
 * child outlives the gateway: {@link Children.waitAll} waits for every close (each bounded), and
 * {@link Children.killNow} SIGKILLs whatever still runs, with its process group.
 */
import type { Client, Transport } from '@modelcontextprotocol/client';
import { signalProcessTree } from './spawn.js';
import { StdioClientTransport } from './stdio-client.js';
import { raceTimeout, type Timers } from '../core/timers.js';

/** Upper bound on closing one client; the stdio transport's own close is bounded by ~4 s. */
const CLOSE_BOUND_MS = 5000;

/** The stdio transport exposes its child's pid once started (null before, and for HTTP). */
function childPid(transport: Transport): number | undefined {
  const pid = (transport as { pid?: number | null }).pid;
  return typeof pid === 'number' ? pid : undefined;
}

/** The children and client closes of one connection. */
export class Children {
  /** Every stdio transport whose child may still run. */
  readonly #transports = new Set<StdioClientTransport>();
  /** Client closes under way: {@link Children.waitAll} waits for them. */
  readonly #closing = new Set<Promise<void>>();
  /** The live transport's child process id (stdio only). */
  #pid: number | undefined;
  readonly #timers: Timers;

  constructor(timers: Timers) {
    this.#timers = timers;
  }

  /** A new attempt's transport: its child is ours to end; children that exited are forgotten. */
  adopt(transport: Transport): void {
    for (const old of this.#transports) if (!old.running) this.#transports.delete(old);
    if (transport instanceof StdioClientTransport) this.#transports.add(transport);
    this.#pid = undefined;
  }

  /**
   * Reads the live child's pid from `transport`: the stdio transport spawns in `start()`, which
   * `connect()` calls before its first await, so the pid is known while `initialize` is pending
   * (a forced exit while it starts, `npx -y` still downloading, must kill it too).
   */
  track(transport: Transport): void {
    this.#pid = childPid(transport) ?? this.#pid;
  }

  /** The live child exited: its pid may be reused by an unrelated process, never to be signalled. */
  exited(): void {
    this.#pid = undefined;
  }

  /** Closes `client` (stdio: stdin end → SIGTERM → SIGKILL), bounded by {@link CLOSE_BOUND_MS}. */
  close(client: Client): Promise<void> {
    const transport = client.transport;
    const closing = raceTimeout(client.close(), CLOSE_BOUND_MS, this.#timers).then(() => {
      this.#closing.delete(closing);
      if (transport instanceof StdioClientTransport && !transport.running) this.#transports.delete(transport);
    });
    this.#closing.add(closing);
    return closing;
  }

  /** Resolves once every close under way has ended (each is bounded). */
  async waitAll(): Promise<void> {
    await Promise.all([...this.#closing]);
  }

  /** SIGKILLs the live child and every child still running, each with its process group. */
  killNow(): void {
    const pid = this.#pid;
    this.#pid = undefined;
    // The whole process group: a wrapper's children die with it (P5).
    if (pid !== undefined) signalProcessTree(pid, 'SIGKILL');
    for (const transport of this.#transports) {
      transport.killNow();
      this.#transports.delete(transport);
    }
  }
}
