/**
 * The types of a downstream {@link Connection} (`connection.ts`): its states, options and events,
 * apart so that what reads them (the pool, the snapshot, the tests) need not load the class.
 */
import type { Implementation, LoggingMessageNotification } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import type { Scrubber } from '../core/secrets.js';
import type { Timers } from '../core/timers.js';
import type { BackoffOptions } from './backoff.js';
import type { FeatureCapability } from './listing.js';
import type { TransportFactory } from './transport.js';

/** Where a downstream is in its life cycle. */
export type ConnectionState = 'connecting' | 'ready' | 'down' | 'restarting' | 'closed';

/** Options of `Connection`. */
export interface ConnectionOptions {
  readonly server: ServerConfig;
  /** The server's child logger (stderr lines, state changes, dropped entries). */
  readonly logger: Logger;
  /** @default defaultTransportFactory */
  readonly transports?: TransportFactory;
  /** @default systemTimers */
  readonly timers?: Timers;
  /** Source of jitter in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Restart curve. @default DEFAULT_BACKOFF */
  readonly backoff?: BackoffOptions;
  /** The name and version our client announces (the pool passes the package's). */
  readonly clientInfo: Implementation;
  /** L2: given to the transport, which scrubs the child's stderr lines before cutting them. */
  readonly scrub?: Scrubber;
}

/** Events of a `Connection`. */
export type ConnectionEvents = {
  stateChanged: [state: ConnectionState];
  /** The served tool list changed: new list, first listing, withheld, or no longer withheld (T10). */
  toolsChanged: [];
  /** U5: the served prompts (`prompts`) or resources and templates (`resources`) changed. */
  featuresChanged: [capability: FeatureCapability];
  /** U5: a `notifications/message` (logging) from the downstream. */
  log: [params: LoggingMessageNotification['params']];
  /** Q5: `notifications/resources/updated` for a URI we subscribed to (its own URI). */
  resourceUpdated: [uri: string];
};
