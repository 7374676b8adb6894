/**
 * One list-change bus for every upstream client, whatever its era and transport (T10, U5, E4).
 *
 * The bus carries the event, not the wire shape (as the SDK's `serverEventBus.ts` puts it):
 * - modern Streamable HTTP clients receive it on their `subscriptions/listen` streams, through
 *   the SDK's listen router, which `createMcpHandler` subscribes to this same bus;
 * - every connected `Server` that lives as long as its connection (a legacy HTTP session, the
 *   stdio connection in either era, an in-memory CLI client) gets it from the one subscriber
 *   below: a legacy instance sends an unsolicited `list_changed`, a modern stdio instance's send
 *   is routed by `serveStdio` onto that connection's listen subscriptions.
 * Per-request instances (modern HTTP) are never registered here: they are gone after one answer.
 */
import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import type { LoggingMessageNotification, Server, ServerEventBus } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';

/** The protocol era a connection speaks: 2025's sessions, or 2026-07-28's stateless requests. */
export type Era = 'legacy' | 'modern';

/** The registry of long-lived upstream connections and the bus that reaches all of them. */
export interface Notifier {
  /** The bus `createMcpHandler` hands to its listen streams. */
  readonly bus: ServerEventBus;
  /**
   * Registers a connected `Server` until it closes. A legacy one receives notifications once it
   * is initialized; a modern one at once (there is no handshake).
   */
  register(server: Server, era: Era): void;
  /** Forgets a server (its transport never started, or it closed). */
  unregister(server: Server): void;
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  /**
   * A downstream's log message to every legacy client, each filtered by the level that client set
   * with `logging/setLevel`. Modern clients get no log message outside a request of theirs (the
   * 2026-07-28 revision sends logs only on the stream of the request that asked for them).
   */
  log(params: LoggingMessageNotification['params']): void;
  /** The registered servers (closing them is the owner's job). */
  servers(): readonly Server[];
}

/** Builds the bus and the registry; `logger` gets every notification that could not be sent. */
export function createNotifier(logger: Logger): Notifier {
  const eras = new Map<Server, Era>();
  const initialized = new WeakSet<Server>();
  const bus = new InMemoryServerEventBus((error) =>
    logger.debug({ err: error }, 'list-change listener failed'),
  );

  function each(what: string, send: (server: Server, era: Era) => Promise<void> | undefined): void {
    for (const [server, era] of eras) {
      if (era === 'legacy' && !initialized.has(server)) continue;
      send(server, era)?.catch((error: unknown) => logger.debug({ err: error }, `${what} not delivered`));
    }
  }

  bus.subscribe((event) => {
    switch (event.kind) {
      case 'tools_list_changed':
        return each('tools/list_changed', (server) => server.sendToolListChanged());
      case 'prompts_list_changed':
        return each('prompts/list_changed', (server) => server.sendPromptListChanged());
      case 'resources_list_changed':
        return each('resources/list_changed', (server) => server.sendResourceListChanged());
      case 'resource_updated':
        return each('resources/updated', (server) => server.sendResourceUpdated({ uri: event.uri }));
    }
  });

  return {
    bus,
    register(server, era) {
      eras.set(server, era);
      if (era === 'legacy') {
        const previous = server.oninitialized;
        server.oninitialized = () => {
          initialized.add(server);
          previous?.();
        };
      }
    },
    unregister(server) {
      eras.delete(server);
    },
    toolsChanged: () => bus.publish({ kind: 'tools_list_changed' }),
    promptsChanged: () => bus.publish({ kind: 'prompts_list_changed' }),
    resourcesChanged: () => bus.publish({ kind: 'resources_list_changed' }),
    log(params) {
      // Each Server has one transport: its session id is the key of that client's setLevel.
      each('log message', (server, era) =>
        era === 'legacy' ? server.sendLoggingMessage(params, server.transport?.sessionId) : undefined,
      );
    },
    servers: () => [...eras.keys()],
  };
}
