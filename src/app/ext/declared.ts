/**
 * Which enabled servers declare an extension (issue 57): the one answer every extension's app
 * side asks for, worked out again only when a server's state changes or the servers do (a
 * reload), since every upstream server made (each 2026 request) may ask.
 */
import type { ServerConfig } from '../../config/types.js';
import type { Pool } from '../../downstream/pool.js';
import type { ServerSource } from '../servers.js';

/** The enabled servers that declare one extension now, in config order, and what each declared. */
export interface Declared {
  readonly servers: readonly ServerConfig[];
  /** What each of them declared under `capabilities.extensions[id]`, by server name. */
  readonly flags: ReadonlyMap<string, unknown>;
}

/** @example const skilled = declaredBy(pool, servers, SKILLS_EXTENSION); skilled().servers */
export function declaredBy(pool: Pool, source: ServerSource, id: string): () => Declared {
  let cached: (Declared & { readonly from: readonly ServerConfig[] }) | undefined;
  pool.on('stateChanged', () => (cached = undefined));
  return () => {
    const from = source.list();
    if (cached?.from !== from) {
      const flags = new Map<string, unknown>();
      for (const row of pool.snapshot()) {
        const declared = row.extensions?.[id];
        if (declared !== undefined) flags.set(row.name, declared);
      }
      cached = { from, flags, servers: from.filter((server) => server.enabled && flags.has(server.name)) };
    }
    return cached;
  };
}
