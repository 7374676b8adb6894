/**
 * One SDK `Client` for one connection attempt (P8, E5, Q1–Q3, U5): the capabilities its server
 * is told, the era negotiation, and the handlers for what the server sends: list changes, logs,
 * resource updates, and (2025 servers) requests to its client, which go to the caller of the
 * call in flight. The handlers only call back into the connection, which checks that the client
 * is still its current one.
 */
import { Client } from '@modelcontextprotocol/client';
import type { Implementation, LoggingMessageNotification } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/types.js';
import { advertisedCapabilities, answerAsk, FEATURE_METHODS, type CallerRoute } from './callers.js';
import { negotiation } from './era.js';
import type { ListGroup } from './listing.js';

/** What a downstream client reports to its connection. */
export interface ClientEvents {
  /** The transport closed. */
  closed(): void;
  /** The transport reported an error (a skipped line of a child's stdout, a failed request...). */
  error(error: Error): void;
  /** `notifications/<group>/list_changed`. */
  listChanged(group: ListGroup): void;
  /** U5: `notifications/message`. */
  log(params: LoggingMessageNotification['params']): void;
  /** Q5: `notifications/resources/updated` for one of our subscriptions. */
  resourceUpdated(uri: string): void;
}

/**
 * Builds the client of one attempt for `server`, wired to `events`; its pushed requests (Q1) go
 * to the owner `callers` names.
 */
export function createDownstreamClient(
  server: ServerConfig,
  clientInfo: Implementation,
  callers: CallerRoute,
  events: ClientEvents,
): Client {
  const client = new Client(clientInfo, {
    capabilities: advertisedCapabilities(server.clientFeatures),
    versionNegotiation: negotiation(server),
    // Q3: a 2026 server's input rounds are the caller's host's to answer, not ours.
    inputRequired: { autoFulfill: false },
  });
  client.onclose = () => events.closed();
  client.onerror = (error) => events.error(error);
  client.setNotificationHandler('notifications/tools/list_changed', () => events.listChanged('tools'));
  // U5: prompts and resources are re-listed on their own list_changed, logs are passed on.
  client.setNotificationHandler('notifications/prompts/list_changed', () => events.listChanged('prompts'));
  client.setNotificationHandler('notifications/resources/list_changed', () =>
    events.listChanged('resources'),
  );
  client.setNotificationHandler('notifications/message', (notification) => events.log(notification.params));
  client.setNotificationHandler('notifications/resources/updated', (notification) =>
    events.resourceUpdated(notification.params.uri),
  );
  // Q1, Q2: what a 2025 server asks its client goes to the caller of the call in flight.
  for (const feature of server.clientFeatures) {
    client.setRequestHandler(
      FEATURE_METHODS[feature] as 'elicitation/create',
      (request) =>
        // The host's answer goes back as it is (the SDK checks its shape).
        answerAsk(callers, request as { method: string; params?: Record<string, unknown> }) as never,
    );
  }
  return client;
}
