/**
 * `npm run bench:search`: what search mode (S1–S3) costs and saves, over the real servers'
 * tools/list (fixtures/catalogs/, 17 servers) repeated with new prefixes up to 2,000 tools:
 * tools/list bytes with `expose: all` and `expose: search`, the time to build the catalog, to
 * build the search index (the first search after a rebuild) and per search; then the CPU of the
 * costliest queries over 2,000 tools (S2 bounds each). Bounded in count. Under load, through a
 * real gateway: `npm run bench:search-load`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildCatalog, type CatalogOptions, type CatalogServerInput } from '../src/core/catalog.js';

const ROOT = join(import.meta.dirname, '..', '..');
const options: CatalogOptions = {
  separator: '_',
  nameMaxLength: 64,
  explicitDestructive: true,
  strictArguments: false,
  describeArguments: false,
};
const QUERIES = (
  JSON.parse(readFileSync(join(ROOT, 'test', 'search', 'queries.json'), 'utf8')) as {
    queries: { q: string }[];
  }
).queries.map(({ q }) => q);

const dir = join(ROOT, 'fixtures', 'catalogs');
const recorded = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as { server: string; tools: unknown[] });

/** The real servers, copied under new names until `size` tools. */
function inputs(size: number, expose: 'all' | 'search'): CatalogServerInput[] {
  const out: CatalogServerInput[] = [];
  let count = 0;
  for (let copy = 0; count < size; copy++) {
    for (const entry of recorded) {
      if (count >= size) break;
      const tools = entry.tools.slice(0, size - count);
      const name = `${entry.server.replace(/-/g, '_')}${copy === 0 ? '' : copy}`;
      out.push({ server: name, prefix: name, expose, tools });
      count += tools.length;
    }
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const rows: string[] = [
  '| tools | tools/list `all` | tools/list `search` | catalog build | index build (first search) | search p50 | search p95 |',
  '| ----: | ---------------: | ------------------: | ------------: | -------------------------: | ---------: | ---------: |',
];
for (const size of [397, 2000]) {
  const all = buildCatalog(inputs(size, 'all'), options);
  const builds: number[] = [];
  const indexes: number[] = [];
  const searches: number[] = [];
  let searched = all;
  for (let round = 0; round < 5; round++) {
    let start = performance.now();
    searched = buildCatalog(inputs(size, 'search'), options);
    builds.push(performance.now() - start);
    start = performance.now();
    searched.search('warm up the index', 5);
    indexes.push(performance.now() - start);
    for (const query of QUERIES) {
      start = performance.now();
      searched.search(query, 5);
      searches.push(performance.now() - start);
    }
  }
  searches.sort((a, b) => a - b);
  const bytes = (catalog: typeof all): string =>
    Buffer.byteLength(JSON.stringify({ tools: catalog.definitions })).toLocaleString('en');
  rows.push(
    `| ${all.tools.length.toLocaleString('en')} | ${bytes(all)} B | ${bytes(searched)} B | ${median(builds).toFixed(1)} ms | ${median(indexes).toFixed(1)} ms | ${median(searches).toFixed(2)} ms | ${(searches[Math.floor(searches.length * 0.95)] as number).toFixed(2)} ms |`,
  );
}

// S2, issue 27 item 16: the queries that cost most, over 2,000 tools, in CPU time per search
// (median of 20, after 5 to warm up). Each must stay under 20 ms.
const HOSTILE: readonly (readonly [string, string])[] = [
  ['one word repeated to 500 characters', 'tool '.repeat(100)],
  ['500 characters, one word', 'abcdefghijklmnopqrstuvwxyz'.repeat(20).slice(0, 500)],
  [
    'many distinct common words (500 characters)',
    'tool list file data user repo name page item issue pull create update delete search query path text time date '
      .repeat(3)
      .slice(0, 500),
  ],
  ['100 distinct short words', Array.from({ length: 100 }, (_, i) => `w${i}x`).join(' ')],
  ['a usual request', 'create a pull request on github'],
];
const big = buildCatalog(inputs(2000, 'search'), options);
big.search('warm up the index', 5);
rows.push('', '| query (2,000 tools) | CPU per search (median of 20) |', '| --- | ---: |');
for (const [label, query] of HOSTILE) {
  const costs: number[] = [];
  for (let round = 0; round < 25; round++) {
    const before = process.cpuUsage();
    big.search(query, 5);
    const used = process.cpuUsage(before);
    if (round >= 5) costs.push((used.user + used.system) / 1000);
  }
  rows.push(`| ${label} | ${median(costs).toFixed(2)} ms |`);
}
process.stdout.write(`${rows.join('\n')}\n`);
