/**
 * The state of a gateway beyond one call (K1–K4, I7, issue 48): what it remembers of each server,
 * mirrored to the store the replicas share when the config names one, the rate limiter counting
 * in that store or in this process, and the file links kept there. Built by the composition root
 * (`proxy.ts`); the logins build their own shared half from the store (logins.ts).
 */
import { secureStateDir } from './state-files.js';
import type { Logger } from 'pino';
import type { Config, ServerConfig } from '../../config/types.js';
import type { DefinitionChange } from '../../core/pins.js';
import { compileLimits } from '../../core/rate-limits.js';
import type { Scrubber } from '../../core/secrets.js';
import { createMemory } from './memory.js';
import { createRateLimiter, localCounts, sharedCounts, type RateLimiter } from './rate-limiter.js';
import type { ServerSource } from '../servers.js';
import { loadShared, seedShared, watchShared } from './shared-memory.js';
import { createRedisStore } from './redis.js';
import { KEYS, type SharedStore } from './store.js';
import {
  createFileStore,
  type FileStore,
  type SharedFile,
  type SharedFiles,
} from '../../upstream/file-store.js';
import { parseBoundedJson } from '../../core/bounded-json.js';

/**
 * K1–K4, issue 48: the memory of each server, mirrored to the shared store when the config names
 * one (a replica starting loads what the others remembered; an approval there is taken).
 */
export function rememberedState(
  { config, servers, logger }: { config: Config; servers: ServerSource; logger: Logger },
  scrub: Scrubber | undefined,
  rebuild: () => void,
  reconnected: () => void,
) {
  // K6: the state folder 0700, no symbolic link followed, never one others can write.
  secureStateDir(config.stateDir);
  // Issue 55: each time the store is (re)connected it is given what this replica knows; issue 48:
  // and what it holds is taken, as at the start (a replica that started while the store was away
  // takes the others' catalogs and pins once it is back, not at its next start).
  const reseed = (): void => {
    if (store === undefined) return;
    void seedShared(store, servers.list(), config, logger)
      .then(() => loadShared(store, memory, servers.list(), config, logger))
      .then((taken) => {
        if (taken) rebuild();
        reconnected();
      });
  };
  const store = config.store === undefined ? undefined : createRedisStore(config.store.url, logger, reseed);
  const saved = (name: string, json: string): void =>
    void store?.put(KEYS.state(name), json).catch(() => undefined);
  const memory = createMemory({ config, logger, scrub, pinsChanged: rebuild, saved });
  const watch = store && watchShared(store, memory, () => servers.list(), config, logger, rebuild);
  return {
    memory,
    store,
    /** Resolves once what the store holds of `list` is loaded (at once without a store). */
    load: async (list: readonly ServerConfig[] = servers.list()): Promise<void> => {
      if (store !== undefined && (await loadShared(store, memory, list, config, logger))) rebuild();
    },
    async close(): Promise<void> {
      watch?.stop();
      await memory.close();
      await store?.close();
    },
  };
}

/**
 * I7: the limiter of `config.rate_limits`, counting in the shared store when there is one (issue
 * 48), else in this process; none without rules.
 */
export function rateLimits(
  config: Config,
  store: SharedStore | undefined,
): { limiter?: RateLimiter; storeWhere?: string } {
  if (config.rateLimits === undefined || config.rateLimits.length === 0) return {};
  const counts =
    store === undefined
      ? localCounts()
      : sharedCounts({
          // The key names its window; it is kept a second past the window's end.
          increment: (key, resetAt, by) => store.increment(KEYS.rateLimit(key), by, resetAt + 1000),
        });
  return {
    limiter: createRateLimiter(compileLimits(config.rateLimits), counts, Date.now),
    ...(store !== undefined ? { storeWhere: store.where } : {}),
  };
}

/** K3: how many definitions differ from their pins, by server. */
export function countByServer(changes: readonly DefinitionChange[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const change of changes) counts.set(change.server, (counts.get(change.server) ?? 0) + 1);
  return counts;
}

/**
 * F7, issue 48: the file store of `output.files: resource`; with a shared store, a principal's
 * files are kept there too (their bytes, with their TTL), so that any replica reads its links.
 */
export function fileStore(config: Config, store: SharedStore | undefined, logger: Logger): FileStore {
  const shared: SharedFiles | undefined =
    store === undefined
      ? undefined
      : {
          put: (id, file, ttlMs) =>
            void store
              .put(KEYS.file(id), JSON.stringify(file), { ttlMs })
              .catch((error: unknown) =>
                logger.warn(
                  { store: store.where, error: error instanceof Error ? error.message : String(error) },
                  'file link not shared: only this replica can read it',
                ),
              ),
          get: async (id) => {
            const json = await store.get(KEYS.file(id));
            // Untrusted: a file within the store's own size, its fields the right kinds.
            const bounds = { maxChars: 2 * config.output.fileStore.maxBytes + 4096, maxDepth: 4 };
            const file = parseBoundedJson(json, bounds) as Partial<SharedFile> | undefined;
            const fields = [file?.name, file?.mimeType, file?.base64, file?.kind, file?.principal];
            return fields.every((field) => typeof field === 'string') ? (file as SharedFile) : undefined;
          },
        };
  return createFileStore({ ...config.output.fileStore, ...(shared !== undefined ? { shared } : {}) });
}
