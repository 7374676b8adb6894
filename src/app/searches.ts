/**
 * `search_tools` off the event loop (S2, issue 27 item 16): each catalog's searchable tools are
 * indexed in a worker thread (search-thread.ts) and every query is ranked there, so four hosts
 * looping the costliest queries leave the main loop to everyone's calls. The catalog's own
 * in-thread search (core/catalog.ts) answers when no thread can run: from the TypeScript sources
 * (tests run them without a build), or after the thread failed, until it is started again.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Catalog, ExposedTool } from '../core/catalog.js';
import { searchDocument } from '../core/search.js';

/**
 * Which tools a search ranks: `search`, those of servers in search mode (S1); `all`, every tool
 * of the catalog (a profile in search mode, I6, filters them to its view).
 */
export type SearchScope = 'search' | 'all';

/** Ranks queries over a catalog's searchable tools. */
export interface Searches {
  /** S2: the whole ranking of `query` over `catalog`'s tools of `scope`, best first. */
  rank(catalog: Catalog, query: string, scope?: SearchScope): Promise<readonly ExposedTool[]>;
  /** Stops the thread (P5). */
  close(): Promise<void>;
}

interface Pending {
  readonly resolve: (positions: readonly number[] | undefined) => void;
}

/** The thread's file beside this one, or undefined when running from the sources. */
function threadFile(): URL | undefined {
  const url = new URL('./search-thread.js', import.meta.url);
  return import.meta.url.endsWith('.js') ? url : undefined;
}

/** How many generations the thread keeps indexed (search-thread.ts's `KEPT`). */
const KEPT = 4;

interface Generation {
  readonly generation: number;
  readonly tools: readonly ExposedTool[];
}

export function createSearches(logger: Logger): Searches {
  const generations = new WeakMap<Catalog, Partial<Record<SearchScope, Generation>>>();
  let nextGeneration = 0;
  let worker: Worker | undefined;
  /** The generations the running thread has indexed, oldest first (it evicts in this order). */
  const indexed = new Set<number>();
  const pending = new Map<number, Pending>();
  let nextId = 0;

  const searchable = (catalog: Catalog, scope: SearchScope): Generation => {
    let known = generations.get(catalog);
    if (known === undefined) generations.set(catalog, (known = {}));
    return (known[scope] ??= {
      generation: nextGeneration++,
      tools: scope === 'all' ? catalog.tools : catalog.tools.filter((tool) => tool.searchOnly === true),
    });
  };

  const stopped = (error?: unknown): void => {
    if (error !== undefined)
      logger.warn({ err: error }, 'search thread failed; searching in the main thread');
    worker = undefined;
    indexed.clear();
    // What it had not answered is answered here (the catalog's own search).
    for (const { resolve } of pending.values()) resolve(undefined);
    pending.clear();
  };

  const thread = (): Worker | undefined => {
    if (worker !== undefined) return worker;
    const file = threadFile();
    if (file === undefined) return undefined;
    const started = new Worker(file);
    // It must not keep a gateway that is done alive; P5 closes it too.
    started.unref();
    started.on('message', (answer: { id: number; positions?: number[] }) => {
      const waiting = pending.get(answer.id);
      pending.delete(answer.id);
      waiting?.resolve(answer.positions);
    });
    started.on('error', (error) => {
      if (worker === started) stopped(error);
    });
    started.on('exit', () => {
      if (worker === started) stopped();
    });
    worker = started;
    return worker;
  };

  return {
    async rank(catalog, query, scope = 'search') {
      const { generation, tools } = searchable(catalog, scope);
      const running = thread();
      const positions =
        running === undefined
          ? undefined
          : await new Promise<readonly number[] | undefined>((resolve) => {
              if (!indexed.has(generation)) {
                running.postMessage({ kind: 'index', generation, documents: tools.map(searchDocument) });
                indexed.add(generation);
                for (const old of indexed) {
                  if (indexed.size <= KEPT) break;
                  indexed.delete(old);
                }
              }
              const id = nextId++;
              pending.set(id, { resolve });
              running.postMessage({ kind: 'search', id, generation, query });
            });
      if (positions === undefined)
        return scope === 'all'
          ? catalog.searchAll(query, Number.MAX_SAFE_INTEGER)
          : catalog.search(query, Number.MAX_SAFE_INTEGER);
      return positions.map((position) => tools[position] as ExposedTool);
    },
    async close() {
      const running = worker;
      stopped();
      await running?.terminate();
    },
  };
}
