/**
 * `search_tools` rankings off the event loop (app/searches.ts, S2): the worker thread of the
 * build ranks exactly as the catalog does, follows catalog rebuilds, leaves the main loop free
 * while it ranks, and comes back after it stopped. The thread runs from the build (dist/), as
 * in a real gateway; from the sources the catalog ranks in this thread, the same answers.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCatalog, type Catalog, type CatalogServerInput } from '../../src/core/catalog.js';
import { createSearches as fromSources, type Searches } from '../../src/app/searches.js';
import { ROOT } from '../helpers/fixtures.js';
import { captureLogger } from '../helpers/memory-servers.js';

const built = (await import(join(ROOT, 'dist', 'src', 'app', 'searches.js'))) as {
  createSearches: typeof fromSources;
};

const open: Searches[] = [];
afterEach(async () => {
  for (const searches of open.splice(0)) await searches.close();
});

const recorded = readdirSync(join(ROOT, 'fixtures', 'catalogs'))
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map(
    (file) =>
      JSON.parse(readFileSync(join(ROOT, 'fixtures', 'catalogs', file), 'utf8')) as {
        server: string;
        tools: unknown[];
      },
  );

/** The recorded real servers' tools in search mode, `skip` of them left out (a rebuild). */
function catalog(skip = 0): Catalog {
  const inputs: CatalogServerInput[] = recorded.slice(skip).map((entry) => {
    const name = entry.server.replace(/-/g, '_');
    return { server: name, prefix: name, expose: 'search', tools: entry.tools };
  });
  return buildCatalog(inputs, {
    separator: '_',
    nameMaxLength: 64,
    explicitDestructive: true,
    strictArguments: false,
    describeArguments: false,
  });
}

const QUERIES = [
  'create an issue',
  'read a file',
  'tool '.repeat(100),
  'tool list file data user repo name page item issue pull create update delete search query path text time date',
  'zzzz nothing matches this',
];

function started(create: typeof fromSources): Searches {
  const searches = create(captureLogger().logger);
  open.push(searches);
  return searches;
}

const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name);

describe('searches', () => {
  it.each([
    ['the worker thread (build)', built.createSearches],
    ['this thread (sources)', fromSources],
  ])('S2: %s ranks every query exactly as the catalog does', async (_where, create) => {
    const searches = started(create);
    const tools = catalog();
    for (const query of QUERIES) {
      expect(names(await searches.rank(tools, query))).toEqual(
        names(tools.search(query, Number.MAX_SAFE_INTEGER)),
      );
    }
  });

  it('S2: after a rebuild, the new catalog is ranked, and an answer for the old one still names its tools', async () => {
    const searches = started(built.createSearches);
    const before = catalog();
    const after = catalog(3);
    const [old, fresh] = await Promise.all([
      searches.rank(before, 'create an issue'),
      searches.rank(after, 'create an issue'),
    ]);
    expect(names(old)).toEqual(names(before.search('create an issue', Number.MAX_SAFE_INTEGER)));
    expect(names(fresh)).toEqual(names(after.search('create an issue', Number.MAX_SAFE_INTEGER)));
    expect(names(fresh)).not.toEqual(names(old));
  });

  it.each([
    ['the worker thread (build)', built.createSearches],
    ['this thread (sources)', fromSources],
  ])(
    'I6, S2: %s ranks every tool for a profile in search mode, alternating with the search-mode scope',
    async (_where, create) => {
      const searches = started(create);
      // Half the servers in search mode: the two scopes hold different tools.
      const inputs: CatalogServerInput[] = recorded.map((entry, index) => {
        const name = entry.server.replace(/-/g, '_');
        return { server: name, prefix: name, expose: index % 2 === 0 ? 'search' : 'all', tools: entry.tools };
      });
      const mixed = buildCatalog(inputs, {
        separator: '_',
        nameMaxLength: 64,
        explicitDestructive: true,
        strictArguments: false,
        describeArguments: false,
      });
      for (const query of QUERIES) {
        expect(names(await searches.rank(mixed, query, 'all'))).toEqual(
          names(mixed.searchAll(query, Number.MAX_SAFE_INTEGER)),
        );
        expect(names(await searches.rank(mixed, query))).toEqual(
          names(mixed.search(query, Number.MAX_SAFE_INTEGER)),
        );
      }
      // `all` finds tools of servers not in search mode; the search-mode scope never does.
      expect(mixed.searchAll('read a file', 20).some((tool) => tool.searchOnly !== true)).toBe(true);
      expect(mixed.search('read a file', 20).every((tool) => tool.searchOnly === true)).toBe(true);
    },
  );

  it('S2: the main event loop runs while the thread ranks', async () => {
    const searches = started(built.createSearches);
    const tools = catalog();
    await searches.rank(tools, 'warm up');
    let turns = 0;
    let ranking = true;
    const spin = (): void => {
      turns += 1;
      if (ranking) setImmediate(spin);
    };
    setImmediate(spin);
    await Promise.all(QUERIES.map((query) => searches.rank(tools, query)));
    ranking = false;
    expect(turns).toBeGreaterThan(0);
  });

  it('S2: a closed thread is started again at the next search', async () => {
    const searches = started(built.createSearches);
    const tools = catalog();
    const first = names(await searches.rank(tools, 'read a file'));
    await searches.close();
    expect(names(await searches.rank(tools, 'read a file'))).toEqual(first);
  });
});
