/**
 * Graceful shutdown (CONTRACT P5): SIGINT, SIGTERM, or the end of stdin when serving stdio →
 * stop taking calls, let in-flight calls finish up to a grace period, close the endpoints and
 * every downstream (children that do not exit are killed), exit 0. A second signal forces the
 * exit at once, after a last synchronous kill of the children so none is orphaned.
 */
import type { Logger } from 'pino';
import type { Pool } from '../downstream/pool.js';
import type { UpstreamServer } from '../upstream/server.js';
import type { Catalogs } from './catalogs.js';

/** Options of {@link installShutdown}. */
export interface ShutdownOptions {
  /**
   * The ordered, graceful stop (the proxy's `stop`). Receives the grace period.
   * @example (graceMs) => proxy.stop({ graceMs })
   */
  readonly stop: (graceMs: number) => Promise<void>;
  /** Last resort on a forced exit: kill remaining children synchronously. */
  readonly forceKill?: () => void;
  readonly logger: Logger;
  /**
   * How long in-flight calls may take to finish.
   * @default 5000
   */
  readonly graceMs?: number;
  /**
   * Extra time for closing endpoints and downstreams after the grace period, before the exit is
   * forced anyway (a wedged close must never keep the process alive).
   * @default 5000
   */
  readonly closeMs?: number;
  /**
   * The signals that start a shutdown.
   * @default ['SIGINT', 'SIGTERM']
   */
  readonly signals?: readonly NodeJS.Signals[];
  /** Resolves when stdin ends (stdio serving): treated like a signal. */
  readonly inputEnded?: Promise<void>;
  /** @default process.exit */
  readonly exit?: (code: number) => void;
  /** Where signals are listened for. @default process */
  readonly target?: NodeJS.EventEmitter;
}

/** Handle of an installed shutdown. */
export interface ShutdownHandle {
  /** Starts the shutdown (idempotent) and resolves once `exit` was called. */
  trigger(reason: string): Promise<void>;
  /** Removes the signal listeners. */
  dispose(): void;
}

/**
 * Installs the P5 handlers.
 * @example installShutdown({ stop: (graceMs) => proxy.stop({ graceMs }), logger });
 */
export function installShutdown(options: ShutdownOptions): ShutdownHandle {
  const graceMs = options.graceMs ?? 5000;
  const closeMs = options.closeMs ?? 5000;
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const target: NodeJS.EventEmitter = options.target ?? process;
  const { logger } = options;
  let running: Promise<void> | undefined;
  let exited = false;

  const finish = (code: number): void => {
    if (exited) return;
    exited = true;
    exit(code);
  };

  const force = (reason: string): void => {
    logger.warn({ reason }, 'forced exit');
    try {
      options.forceKill?.();
    } finally {
      finish(1);
    }
  };

  const trigger = (reason: string): Promise<void> => {
    running ??= (async () => {
      logger.info({ reason, graceMs }, 'shutting down');
      const deadline = setTimeout(() => force('shutdown took too long'), graceMs + closeMs);
      deadline.unref();
      try {
        await options.stop(graceMs);
        logger.info('shut down cleanly');
        finish(0);
      } catch (error) {
        logger.error({ err: error }, 'shutdown failed');
        force('shutdown failed');
      } finally {
        clearTimeout(deadline);
      }
    })();
    return running;
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (running !== undefined) {
      force(`second ${signal}`);
      return;
    }
    void trigger(signal);
  };
  for (const signal of signals) target.on(signal, onSignal);
  void options.inputEnded?.then(() => trigger('stdin closed'));

  return {
    trigger,
    dispose() {
      for (const signal of signals) target.off(signal, onSignal);
    },
  };
}

/**
 * P5: stop in order: no new calls, the calls in flight drained (bounded by `graceMs`), the
 * endpoints and sessions closed, then every downstream within what is left of the grace.
 */
export async function stopInOrder(
  parts: {
    readonly catalogs: Pick<Catalogs, 'stop'>;
    readonly upstream: UpstreamServer;
    readonly endpoints: readonly { close(): Promise<void> }[];
    readonly searches: { close(): Promise<void> };
    readonly pool: Pool;
    readonly logger: Logger;
  },
  graceMs: number,
): Promise<void> {
  const { upstream } = parts;
  const began = Date.now();
  parts.catalogs.stop();
  upstream.stopAccepting();
  const drained = await upstream.drain(graceMs);
  if (!drained)
    parts.logger.warn(
      { inFlight: upstream.inFlight(), graceMs },
      'calls still running after the grace period',
    );
  await Promise.allSettled(parts.endpoints.map((endpoint) => endpoint.close()));
  await upstream.close();
  await parts.searches.close();
  await parts.pool.close({ graceMs: Math.max(0, graceMs - (Date.now() - began)) });
}
