/**
 * The store the replicas share (issue 48): Redis, through `redis` (node-redis, the client Redis
 * maintains; ioredis is in maintenance). What it holds today: the rate-limit counts (I7), so that
 * a limit holds across replicas, the remembered catalogs and pins (K1–K4), so that a replica
 * started later lists them at once and an approval is given once, and a principal's file links
 * (F7), so that a link made on one replica reads on another, for that principal only; callers'
 * downstream logins (D2, D3: shared-logins.ts) and the browser's legs of a login in progress
 * (login-relay.ts). A call that needs the store while it is unreachable fails with
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
  /** I7: adds `by` (default 1) to `key`, expiring at `resetAt` (epoch ms); the count after it. */
  increment(key: string, resetAt: number, by?: number): Promise<number>;
  /** Issue 48: a shared state file (`catalogs/<key>.json`, `pins/<key>.json`), if stored. */
  get(name: string): Promise<string | undefined>;
  /** Issue 48: stores a shared state file. */
  set(name: string, json: string): Promise<void>;
  /** Issue 48: a file link's file (JSON), kept for `ttlMs`. */
  putFile(id: string, json: string, ttlMs: number): Promise<void>;
  /** Issue 48: a file link's file (JSON), if kept and not expired. */
  getFile(id: string): Promise<string | undefined>;
  /** Issue 48: a short-lived value (a login flow's owner, a refresh lock); `absent`: only if none. */
  claim(key: string, value: string, ttlMs: number, absent?: boolean): Promise<boolean>;
  /** Issue 48: a {@link claim}ed value, if it has not expired. */
  claimed(key: string): Promise<string | undefined>;
  /** Issue 48: removes a {@link claim}. */
  release(key: string): Promise<void>;
  /** Issue 48: a principal's login to a server (JSON), shared by every replica; undefined removes it. */
  putLogin(server: string, principal: string, json: string | undefined): Promise<void>;
  /** Issue 48: every principal's login to `server` (JSON by principal). */
  logins(server: string): Promise<Record<string, string>>;
  /** Issue 48: a message to the replicas listening on `channel`; how many received it. */
  publish(channel: string, message: string): Promise<number>;
  /** Issue 48: listens on `channel` (a second connection, opened at the first call). */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** Whether the connection is up now, and the last error otherwise. */
  /** Whether the connection is up now; else the last error and since when (epoch ms) it is down. */
  health(): { readonly ok: boolean; readonly error?: string; readonly since?: number };
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

/**
 * Connects (in the background, reconnecting with backoff) to the Redis at `url`; `onConnected` runs
 * each time the connection is made (the first time, and after every outage: a Redis restarted
 * empty is given again what this replica knows).
 */
export function createStore(url: string, logger: Logger, onConnected?: () => void): SharedStore {
  const where = storeWhere(url);
  let lastError: string | undefined = 'not connected yet';
  /** Since when the store is unreachable (or not connected yet). */
  let downSince = Date.now();
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
    if (lastError === undefined) downSince = Date.now();
    lastError = why;
  });
  client.on('ready', () => {
    if (lastError !== undefined) logger.info({ store: where }, 'store connected');
    lastError = undefined;
    onConnected?.();
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
  /** The second connection, which only listens (Redis's pub/sub). */
  let subscriber:
    { listen(name: string, heard: (message: string) => void): Promise<void>; destroy(): void } | undefined;
  return {
    where,
    async increment(key, resetAt, by = 1) {
      // One round trip: the key names its window, so its expiry is set once, by its first count.
      const name = `mcp-normalizer:rl:${key}`;
      const count = await bounded(() => client.incrBy(name, by));
      if (count === by) await bounded(() => client.pExpireAt(name, resetAt + 1000));
      return count;
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
    async claim(key, value, ttlMs, absent = false) {
      const reply = await bounded(() =>
        client.set(`mcp-normalizer:claim:${key}`, value, { PX: ttlMs, ...(absent ? { NX: true } : {}) }),
      );
      return reply === 'OK';
    },
    async claimed(key) {
      return (await bounded(() => client.get(`mcp-normalizer:claim:${key}`))) ?? undefined;
    },
    async release(key) {
      await bounded(() => client.del(`mcp-normalizer:claim:${key}`));
    },
    async putLogin(server, principal, json) {
      const key = `mcp-normalizer:logins:${server}`;
      await bounded(() =>
        json === undefined ? client.hDel(key, principal) : client.hSet(key, principal, json),
      );
    },
    async logins(server) {
      return bounded(() => client.hGetAll(`mcp-normalizer:logins:${server}`));
    },
    async publish(channel, message) {
      return Number(await bounded(() => client.publish(`mcp-normalizer:${channel}`, message)));
    },
    async subscribe(channel, listener) {
      if (subscriber === undefined) {
        const opening = client.duplicate();
        opening.on('error', () => undefined);
        const open = opening.connect().then(() => undefined);
        subscriber = {
          listen: (name, heard) => open.then(() => opening.subscribe(name, heard)),
          destroy: () => opening.destroy(),
        };
      }
      const mine = subscriber;
      await bounded(() => mine.listen(`mcp-normalizer:${channel}`, listener));
    },
    health: () =>
      lastError === undefined ? { ok: true } : { ok: false, error: lastError, since: downSince },
    async close() {
      subscriber?.destroy();
      client.destroy();
    },
  };
}
