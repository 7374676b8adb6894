/**
 * The connections of the HTTP endpoint (U1): a connection must send its first request within
 * `headersTimeout`, and connections never use up the process's file descriptors.
 *
 * - **Before the first request.** A connection that sends nothing at all is closed after
 *   `headersTimeout`, until its first request arrives (then the server's own timeouts apply).
 *   Node 20's connection check also answers such a connection 408, but only at its next check;
 *   this bound does not depend on that. A timer of our own rather than `socket.setTimeout`,
 *   which Node's HTTP server may set again for its own timeouts (a CI run under load once saw
 *   such a socket stay open past 30 s). The parser reads the socket's handle directly, so
 *   `data` is never emitted: the first `request` is what ends the wait.
 * - **Shedding.** At most `budget` connections are open: at the budget, a new connection closes
 *   the oldest one that has not sent a request yet (a burst of idle connections made the
 *   descriptors run out under `ulimit -n 256`, for the 10 s of the timeout above, and then child
 *   restarts and every new client failed with EMFILE); when every open connection has sent a
 *   request, the new one is closed instead.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/** Descriptors kept for everything else: children's pipes, downstream sockets, files, logs. */
const RESERVED_DESCRIPTORS = 96;

/**
 * The connection budget for this process: three quarters of what the soft descriptor limit
 * leaves after {@link RESERVED_DESCRIPTORS}, at least 16; `Infinity` when the limit is unknown.
 */

/**
 * Socket bounds: a connection must send its request headers within 10 s and its whole request
 * within 60 s (streams that answer a call stay open as long as the call: these bound only what
 * the client sends), an idle keep-alive connection is closed after 5 s, and the check runs every
 * second. Idle TCP connections cannot pile up until file descriptors run out (under
 * `ulimit -n 256`, 400 of them blocked new clients and child respawns with EMFILE).
 */
export const SOCKET_LIMITS = {
  headersTimeout: 10_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
} as const;

/** The shape of {@link SOCKET_LIMITS}. */
export type SocketLimits = { readonly [K in keyof typeof SOCKET_LIMITS]: number };

export function connectionBudget(limitsFile = '/proc/self/limits'): number {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (!Number.isFinite(soft)) return Infinity;
    return Math.max(16, Math.floor((soft - RESERVED_DESCRIPTORS) * 0.75));
  } catch {
    return Infinity;
  }
}

/** Watches `server`'s connections (see the module header). */
export function watchSockets(
  server: Server,
  options: { readonly headersTimeoutMs: number; readonly budget: number; readonly logger: Logger },
): void {
  /** Connections that have not sent a request yet, oldest first, with their timers. */
  const waiting = new Map<Socket, NodeJS.Timeout>();
  let open = 0;
  let shed = 0;
  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
      const timer = waiting.get(socket);
      if (timer !== undefined) clearTimeout(timer);
      waiting.delete(socket);
    });
    if (open > options.budget) {
      const oldest = waiting.keys().next();
      const victim = oldest.done === true ? socket : oldest.value;
      shed += 1;
      // One line per 100 shed connections: a flood must not flood the log too.
      if (shed % 100 === 1) {
        options.logger.warn(
          { open, budget: options.budget, shed, closed: victim === socket ? 'new' : 'idle' },
          'too many HTTP connections: closing one that sent no request',
        );
      }
      victim.destroy();
      if (victim === socket) return;
    }
    const timer = setTimeout(() => socket.destroy(), options.headersTimeoutMs);
    timer.unref();
    waiting.set(socket, timer);
  });
  server.on('request', (req: IncomingMessage) => {
    const timer = waiting.get(req.socket);
    if (timer === undefined) return;
    waiting.delete(req.socket);
    clearTimeout(timer);
  });
}
