/**
 * The search thread (S2): ranks `search_tools` queries off the main event loop, so that a host
 * looping costly searches does not hold up anyone's calls. It keeps the index of the newest
 * catalog it was sent and answers positions in that catalog's searchable tools
 * (app/searches.ts owns it). Messages, in order on one port:
 * - `{ kind: 'index', generation, documents }`: index these (core/search.ts's documents);
 * - `{ kind: 'search', id, generation, query }`: answer `{ id, generation, positions }`, the
 *   whole ranking, best first.
 */
import { parentPort } from 'node:worker_threads';
import { createDocumentSearch, type SearchDocument } from '../core/search.js';

type Request =
  | { readonly kind: 'index'; readonly generation: number; readonly documents: readonly SearchDocument[] }
  | { readonly kind: 'search'; readonly id: number; readonly generation: number; readonly query: string };

let current: { generation: number; index: ReturnType<typeof createDocumentSearch> } | undefined;

parentPort?.on('message', (request: Request) => {
  if (request.kind === 'index') {
    current = { generation: request.generation, index: createDocumentSearch(request.documents) };
    return;
  }
  // An index message always comes before the searches of its generation (app/searches.ts).
  const positions =
    current?.generation === request.generation
      ? current.index.search(request.query, Number.MAX_SAFE_INTEGER)
      : undefined;
  parentPort?.postMessage({ id: request.id, generation: request.generation, positions });
});
