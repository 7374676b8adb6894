/**
 * The pool's options and events (pool.ts), apart from the class that uses them.
 */
import type { CallerTokens } from '../core/caller-tokens.js';
import type { Implementation, LoggingMessageNotification } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import type { Scrubber } from '../core/secrets.js';
import type { Timers } from '../core/timers.js';
import type { BackoffOptions } from './backoff.js';
import type { ConnectionState } from './connection.js';
import type { FeatureCapability } from './listing.js';
import type { TransportFactory } from './transport.js';

/** Options of the pool (pool.ts `Pool`). */
export interface PoolOptions {
  /** Every server of the config; disabled ones are skipped. */
  readonly servers: readonly ServerConfig[];
  /** The root logger; each server logs through a child with its name (P6, L1). */
  readonly logger: Logger;
  /** N9: config `output.max_inline_bytes`. @default 65536 */
  readonly maxInlineBytes?: number;
  /** L2: scrubs secrets from a server's stderr lines before they are cut to length. */
  readonly scrub?: Scrubber;
  /** @default defaultTransportFactory (stdio / Streamable HTTP / SSE) */
  readonly transports?: TransportFactory;
  /** @default systemTimers */
  readonly timers?: Timers;
  /** Jitter source in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** @default DEFAULT_BACKOFF (500 ms doubling to 30 s, equal jitter) */
  readonly backoff?: BackoffOptions;
  /** What our clients announce to the servers. @default { name: 'mcp-normalizer', version: '0.0.0' } */
  readonly clientInfo?: Implementation;
  /** D8: each caller's current token, for the servers behind `auth: token_exchange`. */
  readonly callerTokens?: CallerTokens;
}

/** Options of the pool's `close`. */
export interface CloseOptions {
  /**
   * How long in-flight (and queued) calls may still finish before every client is closed (P5).
   * @default 5000
   */
  readonly graceMs?: number;
}

/** Events of the pool. */
export type PoolEvents = {
  /** T10: a server's served tools changed (listed, re-listed with a difference, withheld, back). */
  toolsChanged: [server: string];
  stateChanged: [server: string, state: ConnectionState];
  /** U5: a server's served prompts (`prompts`) or resources and templates (`resources`) changed. */
  featuresChanged: [server: string, capability: FeatureCapability];
  /** U5: a logging notification from a server. */
  log: [server: string, params: LoggingMessageNotification['params']];
  /** Q5: a server's resource we subscribed to changed (its own URI). */
  resourceUpdated: [server: string, uri: string];
};
