/**
 * Issue 48: what the gateway remembers (K1–K4), shared by replicas through the store: every
 * catalog and pins file a replica writes is also stored in Redis; a replica starting reads the
 * stored ones of its servers (a catalog it has none of, pins that differ), and while a change is
 * pending it looks for an approval in the store every two seconds (`pins approve` writes there
 * too), so an approval is given once for every replica.
 */
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { Config, ServerConfig } from '../../config/types.js';
import type { CatalogMemory } from './memory.js';
import { memoryPaths } from './memory-files.js';
import { readStateFile } from './state-files.js';
import { KEYS, type SharedStore } from './store.js';
import { parseBoundedJson, STATE_FILE_BOUNDS } from '../../core/bounded-json.js';
import { isRecord } from '../../core/json.js';

/** The state folder and the config file its pins are keyed by (memory.ts). */
export type StateWhere = Pick<Config, 'stateDir'> & Partial<Pick<Config, 'file'>>;

/** How often a pending change's pins are looked for in the store. */
const POLL_MS = 2000;

/** The names a server's files have in the store. */
export function sharedNames(where: StateWhere, server: Pick<ServerConfig, 'name' | 'transport'>) {
  const paths = memoryPaths(where.stateDir, server, where.file);
  return { catalog: `catalogs/${basename(paths.catalog)}`, pins: `pins/${basename(paths.pins)}` };
}

/** A stored file, when it is within a state file's bounds (bounded-json.ts); else none. */
const parse = (json: string | undefined): unknown => parseBoundedJson(json, STATE_FILE_BOUNDS);

/** Reads what the store holds of `servers` into `memory`; true when anything was taken. */
export async function loadShared(
  store: SharedStore,
  memory: CatalogMemory,
  servers: readonly ServerConfig[],
  where: StateWhere,
  logger: Logger,
): Promise<boolean> {
  try {
    const taken = await Promise.all(
      servers.map(async (server) => {
        const names = sharedNames(where, server);
        const [catalog, pins] = await Promise.all([
          store.get(KEYS.state(names.catalog)),
          store.get(KEYS.state(names.pins)),
        ]);
        return memory.adopt(server, parse(catalog), parse(pins));
      }),
    );
    return taken.includes(true);
  } catch (error) {
    logger.warn(
      { store: store.where, error: error instanceof Error ? error.message : String(error) },
      'store unreachable: catalogs and pins from this replica only',
    );
    return false;
  }
}

/**
 * Issue 55: gives the store the catalog and pins files of `servers` it does not hold (a Redis
 * restarted empty, or one this replica meets first). What the store holds is left as it is.
 */
export async function seedShared(
  store: SharedStore,
  servers: readonly ServerConfig[],
  where: StateWhere,
  logger: Logger,
): Promise<void> {
  try {
    for (const server of servers) {
      const names = sharedNames(where, server);
      const paths = memoryPaths(where.stateDir, server, where.file);
      for (const [name, path] of [
        [names.catalog, paths.catalog],
        [names.pins, paths.pins],
      ] as const) {
        const file = readStateFile(path);
        // K2: a failed first attempt's stand-in (memory.ts) is this folder's alone.
        if (file === undefined || (isRecord(file) && file['firstAttemptFailed'] === true)) continue;
        if ((await store.get(KEYS.state(name))) === undefined)
          await store.put(KEYS.state(name), JSON.stringify(file));
      }
    }
  } catch (error) {
    logger.debug(
      { store: store.where, error: error instanceof Error ? error.message : String(error) },
      'catalogs and pins not given to the store',
    );
  }
}

/** While a change is pending, takes an approval from the store; `changed` rebuilds the catalogs. */
export function watchShared(
  store: SharedStore,
  memory: CatalogMemory,
  servers: () => readonly ServerConfig[],
  where: StateWhere,
  logger: Logger,
  changed: () => void,
): { stop(): void } {
  const timer = setInterval(() => {
    const pending = new Set(memory.changes().map((change) => change.server));
    if (pending.size === 0) return;
    const those = servers().filter((server) => pending.has(server.name));
    void loadShared(store, memory, those, where, logger).then((taken) => {
      if (taken) changed();
    });
  }, POLL_MS).unref();
  return { stop: () => clearInterval(timer) };
}
