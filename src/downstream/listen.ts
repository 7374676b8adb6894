/**
 * E6: a 2026-07-28 server sends list changes only on a `subscriptions/listen` stream, and the SDK
 * never reopens one. The stream is reopened here when the server drops it (`remote`), after a
 * pause that grows with each drop, and the lists are read again, since changes made meanwhile
 * were not announced. A server that refuses the stream, a stream closed by us, or a connection
 * that moved on ends the loop.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { describeError } from './errors.js';
import type { Timers } from '../core/timers.js';

/** The first pause before a dropped listen stream is reopened, and the longest. */
export const LISTEN_RETRY_MS = 1000;
export const MAX_LISTEN_RETRY_MS = 30_000;

/** What {@link keepListening} needs from its connection. */
export interface ListenOptions {
  /** False once the connection moved on (another client, down, closed): the loop ends. */
  readonly current: () => boolean;
  /** The stream was reopened after a drop: read every list again. */
  readonly reopened: () => void;
  readonly timers: Timers;
  readonly logger: Logger;
}

/** Listens on `client` for list changes for as long as it is current. Never rejects. */
export async function keepListening(client: Client, options: ListenOptions): Promise<void> {
  const { current, timers, logger } = options;
  for (let drops = 1; current(); drops++) {
    let reason: 'local' | 'graceful' | 'remote';
    try {
      const subscription = await client.listen({
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
      });
      reason = await subscription.closed;
    } catch (error) {
      if (current())
        logger.info({ error: describeError(error) }, 'downstream refused a listen stream: no list changes');
      return;
    }
    if (reason !== 'remote' || !current()) return;
    const pauseMs = Math.min(LISTEN_RETRY_MS * drops, MAX_LISTEN_RETRY_MS);
    logger.info({ retryInMs: pauseMs }, 'downstream listen stream dropped; listening again');
    await new Promise<void>((resolve) => timers.setTimeout(resolve, pauseMs));
    if (!current()) return;
    options.reopened();
  }
}
