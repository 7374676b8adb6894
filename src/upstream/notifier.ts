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
 *
 * A 2025 connection is told that a list changed only once it has been answered that list (and
 * again only after it lists it again): a host that has not listed yet gets the list as it is when
 * it asks. Hosts saw three list_changed notifications on every connect, before their first
 * tools/list was answered (Claude Code, Codex, opencode). A 2026 connection asks for changes with
 * a listen stream, and gets every one on it.
 */
import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import type { LoggingMessageNotification, Server, ServerEventBus } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';

export type { Era } from '../core/options.js';
import type { Era } from '../core/options.js';

/** The lists a `list_changed` notification is about. */
export type ListedKind = 'tools' | 'prompts' | 'resources';

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
  /** `server` was answered its `kind` list: the next change of it is worth telling it. */
  listed(server: Server, kind: ListedKind): void;
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

/** How long changes are gathered into one notification to 2026 hosts. */
export const COALESCE_MS = 100;

const EVENTS = {
  tools: 'tools_list_changed',
  prompts: 'prompts_list_changed',
  resources: 'resources_list_changed',
} as const;

/** Builds the bus and the registry; `logger` gets every notification that could not be sent. */
export function createNotifier(logger: Logger): Notifier {
  const eras = new Map<Server, Era>();
  const initialized = new WeakSet<Server>();
  /** The lists each connection was answered since it was last told of a change of them. */
  const listed = new WeakMap<Server, Set<ListedKind>>();
  /**
   * The lists answered to anyone so far. Until a list has been answered once, no host holds a copy
   * a change could make stale: a change then is told to no one. A 2026 host that opened its listen
   * stream at once was told of every server that came up before its first list was answered,
   * though that answer held them all.
   */
  const answered = new Set<ListedKind>();
  /**
   * 2026 hosts (listen streams) hear of changes coalesced: every change within
   * {@link COALESCE_MS} of the first is one notification (servers coming up one after another
   * were seven in 180 ms). A 2025 connection is told at once, once until it lists again, so it
   * needs no coalescing, and a list it is answered meanwhile is never followed by a stale notice.
   */
  const due = new Set<ListedKind>();
  let flush: NodeJS.Timeout | undefined;
  const publish = (kind: ListedKind): void => {
    if (!answered.has(kind)) return;
    changed(kind, 'legacy');
    due.add(kind);
    flush ??= setTimeout(() => {
      flush = undefined;
      for (const next of [...due]) {
        due.delete(next);
        bus.publish({ kind: EVENTS[next] });
      }
    }, COALESCE_MS).unref();
  };
  const bus = new InMemoryServerEventBus((error) =>
    logger.debug({ err: error }, 'list-change listener failed'),
  );

  function each(what: string, send: (server: Server, era: Era) => Promise<void> | undefined): void {
    for (const [server, era] of eras) {
      if (era === 'legacy' && !initialized.has(server)) continue;
      send(server, era)?.catch((error: unknown) => logger.debug({ err: error }, `${what} not delivered`));
    }
  }

  /**
   * Sends `kind`'s notification to the connections of `era`: each 2025 connection that listed
   * `kind` since its last such notification, or every modern one (a 2026 host asked for changes
   * with a listen stream; one sent before it opened the stream is dropped by the SDK's router,
   * so none may be held back for a listing).
   */
  function changed(kind: ListedKind, era: Era): void {
    each(`${kind}/list_changed`, (server, its) => {
      if (its !== era) return undefined;
      if (era === 'legacy' && listed.get(server)?.delete(kind) !== true) return undefined;
      return kind === 'tools'
        ? server.sendToolListChanged()
        : kind === 'prompts'
          ? server.sendPromptListChanged()
          : server.sendResourceListChanged();
    });
  }

  // The bus carries the coalesced changes to 2026 hosts (listen streams over HTTP, and modern
  // stdio connections here); 2025 connections were told at once (publish).
  bus.subscribe((event) => {
    switch (event.kind) {
      case 'tools_list_changed':
        return changed('tools', 'modern');
      case 'prompts_list_changed':
        return changed('prompts', 'modern');
      case 'resources_list_changed':
        return changed('resources', 'modern');
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
    listed(server, kind) {
      answered.add(kind);
      let lists = listed.get(server);
      if (lists === undefined) listed.set(server, (lists = new Set()));
      lists.add(kind);
    },
    toolsChanged: () => publish('tools'),
    promptsChanged: () => publish('prompts'),
    resourcesChanged: () => publish('resources'),
    log(params) {
      // Each Server has one transport: its session id is the key of that client's setLevel.
      each('log message', (server, era) =>
        era === 'legacy' ? server.sendLoggingMessage(params, server.transport?.sessionId) : undefined,
      );
    },
    servers: () => [...eras.keys()],
  };
}
