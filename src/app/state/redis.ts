/**
 * The shared store in Redis (issue 48), through `redis` (node-redis, the client Redis maintains;
 * ioredis is in maintenance). Commands are not queued while the connection is down (they fail at
 * once) and each is bounded by a second. Every key and channel gets {@link KEY_PREFIX}.
 *
 * `redis` is loaded only here, when a store is configured: its packages were ~90 ms of CPU and a
 * few MB of heap at the start of every process, store or not (issue 57, the cold path).
 */
import type { createClient } from 'redis';
import type { Logger } from 'pino';
import { raceTimeout } from '../../core/timers.js';
import { systemTimers } from '../../wire/timers.js';
import { KEY_PREFIX, storeWhere, type SharedStore } from './store.js';

/** A client of the store at `url` (made once `redis` is loaded). */
function newClient(create: typeof createClient, url: string) {
  return create({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5000),
    },
  });
}
type RedisClient = ReturnType<typeof newClient>;

/** How long one command may take before the call that needed it is answered without it. */
const COMMAND_MS = 1000;

/**
 * Connects (in the background, reconnecting with backoff) to the Redis at `url`; `onConnected` runs
 * each time the connection is made (the first time, and after every outage: a Redis restarted
 * empty is given again what this replica knows).
 */
export function createRedisStore(url: string, logger: Logger, onConnected?: () => void): SharedStore {
  const where = storeWhere(url);
  let lastError: string | undefined = 'not connected yet';
  /** Since when the store is unreachable (or not connected yet). */
  let downSince = Date.now();
  let closed = false;
  // The client once `redis` is loaded (in the background; a command waits for it, within its bound).
  const loading: Promise<RedisClient> = import('redis').then(({ createClient: create }) => {
    const client = newClient(create, url);
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
    return client;
  });
  // A command waits for the first attempt to connect (within its bound); once that attempt has
  // failed, or the connection is lost, commands fail at once (no offline queue) until it is back:
  // a replica starting while the store is away is not held a second per read.
  const connected = loading.then(
    async (client) => {
      if (closed) return client;
      const failed = new Promise<void>((resolve) => client.once('error', () => resolve()));
      await Promise.race([client.connect().catch(() => undefined), failed]);
      return client;
    },
    (error: unknown) => {
      lastError = `redis could not be loaded: ${error instanceof Error ? error.message : String(error)}`;
      throw new Error(lastError);
    },
  );
  connected.catch(() => undefined);
  // The bound is the store's answer (and the first connection), not the module's loading: with
  // every core busy that alone can take most of a second, and a replica's first read (its
  // remembered catalogs, K2) would be cut short by it.
  const loaded = loading.then(
    () => undefined,
    () => undefined,
  );
  const bounded = async <T>(command: (client: RedisClient) => Promise<T>): Promise<T> => {
    await loaded;
    const run = connected.then(command);
    if ((await raceTimeout(run, COMMAND_MS, systemTimers)) === 'timeout')
      // The connection's last error says why, where there is one (a refused connection retries).
      throw new Error(`no answer within ${COMMAND_MS} ms${lastError === undefined ? '' : `: ${lastError}`}`);
    return run.catch((error: unknown) => {
      // Down: why, as the connection knows it (not the client's "offline").
      throw lastError === undefined ? error : new Error(`unreachable: ${lastError}`);
    });
  };
  /** The second connection, which only listens (Redis's pub/sub). */
  let subscriber:
    { listen(name: string, heard: (message: string) => void): Promise<void>; destroy(): void } | undefined;
  return {
    where,
    async get(key) {
      return (await bounded((client) => client.get(KEY_PREFIX + key))) ?? undefined;
    },
    async put(key, value, options = {}) {
      const { ttlMs, onlyIfAbsent = false } = options;
      const reply = await bounded((client) =>
        client.set(KEY_PREFIX + key, value, {
          ...(ttlMs !== undefined ? { PX: ttlMs } : {}),
          ...(onlyIfAbsent ? { NX: true } : {}),
        }),
      );
      return reply === 'OK';
    },
    async delete(key) {
      await bounded((client) => client.del(KEY_PREFIX + key));
    },
    async increment(key, by, expireAt) {
      // One round trip: the key names its window, so its expiry is set once, by its first count.
      const name = KEY_PREFIX + key;
      const count = await bounded((client) => client.incrBy(name, by));
      if (count === by) await bounded((client) => client.pExpireAt(name, expireAt));
      return count;
    },
    async setField(key, field, value) {
      const name = KEY_PREFIX + key;
      await bounded((client) =>
        value === undefined ? client.hDel(name, field) : client.hSet(name, field, value),
      );
    },
    async fields(key) {
      return bounded((client) => client.hGetAll(KEY_PREFIX + key));
    },
    async publish(channel, message) {
      return Number(await bounded((client) => client.publish(KEY_PREFIX + channel, message)));
    },
    async subscribe(channel, listener) {
      await bounded((client) => {
        if (subscriber === undefined) {
          const opening = client.duplicate();
          opening.on('error', () => undefined);
          const open = opening.connect().then(() => undefined);
          subscriber = {
            listen: (name, heard) => open.then(() => opening.subscribe(name, heard)),
            destroy: () => opening.destroy(),
          };
        }
        return subscriber.listen(KEY_PREFIX + channel, listener);
      });
    },
    health: () =>
      lastError === undefined ? { ok: true } : { ok: false, error: lastError, since: downSince },
    async close() {
      closed = true;
      subscriber?.destroy();
      // A client still being loaded is destroyed once it is there (it never connects then).
      await loading.then(
        (client) => client.destroy(),
        () => undefined,
      );
    },
  };
}
