/**
 * The store the replicas share (issue 48): Redis, through `redis` (node-redis, the client Redis
 * maintains; ioredis is in maintenance). What it holds today: the rate-limit counts (I7), so that
 * a limit holds across replicas, the remembered catalogs and pins (K1–K4), so that a replica
 * started later lists them at once and an approval is given once, and a principal's file links
 * (F7), so that a link made on one replica reads on another, for that principal only. A call that needs the store while it is unreachable fails with
 * an error that names it; nothing else waits for it. Commands are not queued while the
 * connection is down (they fail at once) and each is bounded by a second.
 */
import { createClient } from 'redis';
import type { Logger } from 'pino';
import { raceTimeout } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';

/** How long one command may take before the call that needed it is answered without it. */
const COMMAND_MS = 1000;

/** The shared store of one gateway. */
export interface SharedStore {
  /** Where it is, without its password (for errors and the health report). */
  readonly where: string;
  /** I7: increments `key`, expiring at `resetAt` (epoch ms); the count after this call. */
  increment(key: string, resetAt: number): Promise<number>;
  /** Issue 48: a shared state file (`catalogs/<key>.json`, `pins/<key>.json`), if stored. */
  get(name: string): Promise<string | undefined>;
  /** Issue 48: stores a shared state file. */
  set(name: string, json: string): Promise<void>;
  /** Issue 48: a file link's file (JSON), kept for `ttlMs`. */
  putFile(id: string, json: string, ttlMs: number): Promise<void>;
  /** Issue 48: a file link's file (JSON), if kept and not expired. */
  getFile(id: string): Promise<string | undefined>;
  /** Whether the connection is up now, and the last error otherwise. */
  health(): { readonly ok: boolean; readonly error?: string };
  close(): Promise<void>;
}

/** `url` without its user and password. */
export function storeWhere(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return 'the store';
  }
}

/** Connects (in the background, reconnecting with backoff) to the Redis at `url`. */
export function createStore(url: string, logger: Logger): SharedStore {
  const where = storeWhere(url);
  let lastError: string | undefined = 'not connected yet';
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5000),
    },
  });
  client.on('error', (error: unknown) => {
    const why = error instanceof Error ? error.message : String(error);
    if (why !== lastError) logger.warn({ store: where, error: why }, 'store unreachable');
    lastError = why;
  });
  client.on('ready', () => {
    if (lastError !== undefined) logger.info({ store: where }, 'store connected');
    lastError = undefined;
  });
  // A command waits for the first connection (within its bound), then fails at once while down.
  const connected = client.connect().then(
    () => undefined,
    () => undefined,
  );
  const bounded = async <T>(command: () => Promise<T>): Promise<T> => {
    const run = connected.then(command);
    if ((await raceTimeout(run, COMMAND_MS, systemTimers)) === 'timeout')
      throw new Error(`no answer within ${COMMAND_MS} ms`);
    return run;
  };
  return {
    where,
    async increment(key, resetAt) {
      const replies = await bounded(() =>
        client
          .multi()
          .incr(`mcp-normalizer:rl:${key}`)
          .pExpireAt(`mcp-normalizer:rl:${key}`, resetAt + 1000)
          .exec(),
      );
      return Number(replies[0]);
    },
    async get(name) {
      return (await bounded(() => client.get(`mcp-normalizer:state:${name}`))) ?? undefined;
    },
    async set(name, json) {
      await bounded(() => client.set(`mcp-normalizer:state:${name}`, json));
    },
    async putFile(id, json, ttlMs) {
      await bounded(() => client.set(`mcp-normalizer:file:${id}`, json, { PX: ttlMs }));
    },
    async getFile(id) {
      return (await bounded(() => client.get(`mcp-normalizer:file:${id}`))) ?? undefined;
    },
    health: () => (lastError === undefined ? { ok: true } : { ok: false, error: lastError }),
    async close() {
      client.destroy();
    },
  };
}
