/**
 * The search thread (S2): ranks `search_tools` queries off the main event loop, so that a host
 * looping costly searches does not hold up anyone's calls. It keeps the indexes of the newest
 * {@link KEPT} generations it was sent (a catalog's search-mode tools, and all its tools for
 * profiles in search mode, I6) and answers positions in a generation's documents
 * (app/searches.ts owns it and evicts in the same order). Messages, in order on one port:
 * - `{ kind: 'index', generation, documents }`: index these (core/search.ts's documents);
 * - `{ kind: 'search', id, generation, query }`: answer `{ id, generation, positions }`, the
 *   whole ranking, best first.
 */
import { parentPort } from 'node:worker_threads';
import { createDocumentSearch, type SearchDocument } from '../core/search.js';

type Request =
  | { readonly kind: 'index'; readonly generation: number; readonly documents: readonly SearchDocument[] }
  | { readonly kind: 'search'; readonly id: number; readonly generation: number; readonly query: string };

/** How many generations' indexes are kept (app/searches.ts keeps the same count). */
const KEPT = 4;

const indexes = new Map<number, ReturnType<typeof createDocumentSearch>>();

parentPort?.on('message', (request: Request) => {
  if (request.kind === 'index') {
    indexes.set(request.generation, createDocumentSearch(request.documents));
    // The oldest goes first, as in app/searches.ts.
    for (const old of indexes.keys()) {
      if (indexes.size <= KEPT) break;
      indexes.delete(old);
    }
    return;
  }
  // An index message always comes before the searches of its generation (app/searches.ts).
  const positions = indexes.get(request.generation)?.search(request.query, Number.MAX_SAFE_INTEGER);
  parentPort?.postMessage({ id: request.id, generation: request.generation, positions });
});
