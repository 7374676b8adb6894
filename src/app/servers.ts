/**
 * The configured servers as the composition root's parts read them (O3): in config order, and
 * one by name. A reload replaces them in the proxy; the tool backend and the feature index read
 * them through this, so every part sees the same servers at once.
 */
import type { ServerConfig } from '../config/types.js';

/** The servers now. */
export interface ServerSource {
  /** Every server, in config order. */
  list(): readonly ServerConfig[];
  /** One server by its key. */
  get(name: string): ServerConfig | undefined;
}

/** A source that never changes (a part used without a proxy, as in tests). */
export function fixedServers(servers: readonly ServerConfig[]): ServerSource {
  const byName = new Map(servers.map((server) => [server.name, server]));
  return { list: () => servers, get: (name) => byName.get(name) };
}

/** A source a reload replaces (O3). */
export interface ServerHolder extends ServerSource {
  /** From now on, `servers` are the servers. */
  replace(servers: readonly ServerConfig[]): void;
}

/** The proxy's servers: `initial`, until a reload replaces them. */
export function serverHolder(initial: readonly ServerConfig[]): ServerHolder {
  let current = fixedServers(initial);
  return {
    list: () => current.list(),
    get: (name) => current.get(name),
    replace(servers) {
      current = fixedServers(servers);
    },
  };
}
