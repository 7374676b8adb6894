/**
 * O4, P4: a remote server that died is shown down within `health_interval_ms`, not when a call
 * first fails. HTTP has no process exit to watch: while a remote server is ready, it is sent a
 * `ping` every interval, on the connection's own request path, where a server that cannot be
 * reached is taken down for a restart with backoff like any call that cannot reach it. A stdio
 * server's exit says so at once; it is not pinged.
 */
import type { ServerConfig } from '../config/types.js';
import type { TimerHandle, Timers } from '../core/timers.js';
import type { Connection } from './connection.js';

/** How long one health ping may take, at most. */
const PING_TIMEOUT_MS = 10_000;

/** Pings `connection` every `server.healthIntervalMs` while it is ready (remote servers only). */
export function watchHealth(connection: Connection, server: ServerConfig, timers: Timers): void {
  if (server.transport.type === 'stdio' || server.healthIntervalMs <= 0) return;
  let timer: TimerHandle | undefined;
  const schedule = (): void => {
    timer = timers.setTimeout(() => {
      timer = undefined;
      if (connection.state !== 'ready') return;
      // An answer, or an error answer, means it is there; one that cannot reach it takes it
      // down (Connection.request). Either way the next ping follows while it is ready.
      void connection
        .request('ping', {}, { timeoutMs: Math.min(server.timeoutMs, PING_TIMEOUT_MS) })
        .catch(() => undefined)
        .finally(() => {
          if (connection.state === 'ready' && timer === undefined) schedule();
        });
    }, server.healthIntervalMs);
  };
  connection.events.on('stateChanged', (state) => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    if (state === 'ready') schedule();
  });
}
