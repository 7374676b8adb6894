/**
 * The shared store in this process (issue 57): one replica's, and what the unit tests share
 * between the "replicas" they build in one process (each its own connection to one
 * {@link LocalBacking}, as each replica has its own to Redis). The same port as Redis (redis.ts):
 * values with an expiry, counts, maps of fields, channels; always up until closed. Nothing is
 * kept across restarts.
 */
import type { SharedStore } from './store.js';

/** What the connections of one in-process store share. */
export interface LocalBacking {
  readonly values: Map<string, { value: string; expireAt: number }>;
  readonly maps: Map<string, Map<string, string>>;
  /** Each channel's listeners, by connection (a message reaches each connection once). */
  readonly channels: Map<string, Map<object, Set<(message: string) => void>>>;
  readonly now: () => number;
}

/** A fresh backing; `now` is its clock (expiries). */
export function localBacking(now: () => number = Date.now): LocalBacking {
  return { values: new Map(), maps: new Map(), channels: new Map(), now };
}

/** @example const store = createLocalStore(); await store.put(KEYS.file(id), json, { ttlMs }); */
export function createLocalStore(backing: LocalBacking = localBacking()): SharedStore {
  const { values, maps, channels, now } = backing;
  const connection = {};
  let closed = false;
  const open = (): void => {
    if (closed) throw new Error('the store is closed');
  };
  /** A live value, or none (an expired one goes). */
  const live = (key: string): { value: string; expireAt: number } | undefined => {
    const kept = values.get(key);
    if (kept !== undefined && kept.expireAt <= now()) {
      values.delete(key);
      return undefined;
    }
    return kept;
  };
  return {
    where: 'this process',
    async get(key) {
      open();
      return live(key)?.value;
    },
    async put(key, value, options = {}) {
      open();
      if (options.onlyIfAbsent === true && live(key) !== undefined) return false;
      values.set(key, { value, expireAt: options.ttlMs === undefined ? Infinity : now() + options.ttlMs });
      return true;
    },
    async delete(key) {
      open();
      values.delete(key);
    },
    async increment(key, by, expireAt) {
      open();
      const kept = live(key);
      const count = (kept === undefined ? 0 : Number(kept.value)) + by;
      values.set(key, { value: String(count), expireAt: kept?.expireAt ?? expireAt });
      return count;
    },
    async setField(key, field, value) {
      open();
      const map = maps.get(key) ?? new Map<string, string>();
      if (value === undefined) map.delete(field);
      else map.set(field, value);
      if (map.size === 0) maps.delete(key);
      else maps.set(key, map);
    },
    async fields(key) {
      open();
      return Object.fromEntries(maps.get(key) ?? []);
    },
    async publish(channel, message) {
      open();
      const connections = [...(channels.get(channel)?.values() ?? [])];
      // As Redis delivers: after the publisher's turn, to every listening connection.
      setImmediate(() => {
        for (const listeners of connections) for (const listener of listeners) listener(message);
      });
      return connections.length;
    },
    async subscribe(channel, listener) {
      open();
      const byConnection = channels.get(channel) ?? new Map<object, Set<(message: string) => void>>();
      channels.set(channel, byConnection);
      byConnection.set(connection, (byConnection.get(connection) ?? new Set()).add(listener));
    },
    health: () => (closed ? { ok: false, error: 'closed' } : { ok: true }),
    async close() {
      closed = true;
      for (const byConnection of channels.values()) byConnection.delete(connection);
    },
  };
}
