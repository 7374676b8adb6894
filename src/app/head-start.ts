/**
 * P1, the head start: `serve` spawns its first stdio servers (one per core it does not need
 * itself) as soon as the config is read, while the rest of the gateway (the SDK, the upstream
 * server, the pool) is still loading, about 0.5 s on a small machine. A server that itself takes
 * that long to load is then ready about when the gateway is, instead of after it. Each child is
 * handed, once, to the first transport built for its server's config (`EarlyChildren` in
 * `downstream/transport.ts`); whatever it wrote in the meantime waits in its pipes.
 *
 * Only what the transport would spawn in the same way is spawned: the same config object
 * (a reload builds new ones), through `spawn.ts`. A child that failed to spawn or has already
 * exited is not handed over: the transport spawns the server again, so its error and exit report
 * come as they always do. Children never taken (a server the pool did not start) are stopped by
 * {@link HeadStart.release}, and at the latest when the process exits (`spawn.ts`).
 *
 * Light on purpose: Node built-ins and cross-spawn only.
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { ServerConfig, StdioTransportConfig } from '../config/types.js';
import type { EarlyChildren } from '../downstream/transport.js';
import { signalProcessTree, spawnChild, spawnSpec } from '../downstream/spawn.js';

/** One early child and what became of its spawn. */
interface Early {
  readonly child: ChildProcess;
  spawned: boolean;
  failed: boolean;
}

/**
 * The children spawned ahead of the pool. `take` (the transports' {@link EarlyChildren}): the
 * running child spawned for `config`, once (`undefined` after that, for a config not started
 * early, and for a child that failed or exited, which is stopped here).
 */
export interface HeadStart extends EarlyChildren {
  /** Stops every child not taken yet; nothing is handed out afterwards. */
  release(): void;
  /** How many children are still waiting to be taken. */
  readonly waiting: number;
}

/** Ends a child that will not be used: its stdin closed (the MCP stdio shutdown), its group SIGTERMed. */
function stop(child: ChildProcess): void {
  try {
    child.stdin?.end();
  } catch {
    // Gone already.
  }
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
    signalProcessTree(child.pid, 'SIGTERM');
}

/**
 * Spawns the first `max` enabled stdio servers of `servers` now, in config order (through
 * `spawn`: tests watch the children). `max` defaults to the cores the gateway does not need
 * itself (`os.availableParallelism() - 1`): a server loading on a core of its own is ready sooner,
 * but more of them than there are idle cores only slow the gateway's own start (on 2 cores, seven
 * Node servers spawned at once delayed its first answer past the opening from 1.7 s to 3.0 s).
 * The rest are spawned by the pool, as without a head start. Servers over HTTP are not touched
 * (a connection costs nothing to load).
 * @example const headStart = startEarly(config.servers); createProxy(config, { logger, headStart });
 */
export function startEarly(
  servers: readonly ServerConfig[],
  options: { readonly max?: number; readonly spawn?: typeof spawnChild } = {},
): HeadStart {
  const { max = availableParallelism() - 1, spawn = spawnChild } = options;
  const early = new Map<StdioTransportConfig, Early>();
  for (const server of servers) {
    const config = server.transport;
    if (!server.enabled || config.type !== 'stdio') continue;
    if (early.size >= max) break;
    const child = spawn(spawnSpec(config));
    const entry: Early = { child, spawned: false, failed: false };
    // Without a listener, a failed spawn (ENOENT) would be an uncaught error; the transport
    // reports it when it spawns the server again.
    child.once('error', () => {
      entry.failed = true;
    });
    child.once('spawn', () => {
      entry.spawned = true;
    });
    early.set(config, entry);
  }
  return {
    take(config) {
      const entry = early.get(config);
      if (entry === undefined) return undefined;
      early.delete(config);
      const { child } = entry;
      if (entry.spawned && !entry.failed && child.exitCode === null && child.signalCode === null)
        return child;
      stop(child);
      return undefined;
    },
    release() {
      for (const { child } of early.values()) stop(child);
      early.clear();
    },
    get waiting() {
      return early.size;
    },
  };
}
