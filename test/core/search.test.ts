import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildCatalog,
  diffCatalogs,
  type CatalogOptions,
  type CatalogServerInput,
} from '../../src/core/catalog.js';
import { isForward, prepareCall, type PreparedCall } from '../../src/core/prepare-call.js';
import { queryTerms, SEARCH_MAX_TERMS } from '../../src/core/search.js';
import { isFailure, isOk, type FailureResult, type Result } from '../../src/core/result.js';

const options: CatalogOptions = {
  separator: '_',
  nameMaxLength: 64,
  explicitDestructive: true,
  strictArguments: false,
  describeArguments: false,
};

const root = join(import.meta.dirname, '..', '..');

interface Recorded {
  readonly server: string;
  readonly package: string;
  readonly tools: readonly Record<string, unknown>[];
}

/** The real servers' tools/list, as scripts/record-catalogs.ts recorded them. */
function realCatalogs(): Recorded[] {
  const dir = join(root, 'fixtures', 'catalogs');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Recorded);
}

function inSearchMode(recorded: readonly Recorded[]): CatalogServerInput[] {
  return recorded.map((entry) => ({
    server: entry.server,
    prefix: entry.server.replace(/-/g, '_'),
    expose: 'search',
    tools: entry.tools,
  }));
}

const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

/** `count` synthetic tools over `servers` servers, each with a description and a schema. */
function synthetic(count: number, servers: number): CatalogServerInput[] {
  return Array.from({ length: servers }, (_, s) => ({
    server: `svc${s}`,
    prefix: `svc${s}`,
    expose: 'search' as const,
    tools: Array.from({ length: count / servers }, (_, t) => ({
      name: `operation_${t}`,
      description: `Performs operation ${t} of service ${s} on the given path, with a long description that costs tokens.`,
      inputSchema: schema,
    })),
  }));
}

function refused(result: PreparedCall | Result): FailureResult {
  if (isForward(result) || !isFailure(result))
    throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

describe('search mode', () => {
  it('S1: tools of servers in search mode are not listed; the pair is, under the global prefix', () => {
    const catalog = buildCatalog(
      [
        { server: 'fs', prefix: 'fs', tools: [{ name: 'read', inputSchema: schema }] },
        {
          server: 'gh',
          prefix: 'gh',
          expose: 'search',
          tools: [{ name: 'create_issue', inputSchema: schema }],
        },
      ],
      { ...options, globalPrefix: 'acme' },
    );
    expect(catalog.definitions.map((tool) => tool.name)).toEqual([
      'acme_fs_read',
      'acme_search_tools',
      'acme_call_tool',
    ]);
    expect(catalog.searchPair).toEqual({ search: 'acme_search_tools', call: 'acme_call_tool' });
    // Still routable by its exposed name: search_tools returns it, a direct call works too.
    expect(catalog.get('acme_gh_create_issue')?.searchOnly).toBe(true);
    expect(JSON.stringify(catalog.definitions)).toContain('servers: gh');
  });

  it('S1: without a server in search mode there is no pair', () => {
    const catalog = buildCatalog(
      [{ server: 'fs', prefix: 'fs', tools: [{ name: 'read', inputSchema: schema }] }],
      options,
    );
    expect(catalog.searchPair).toBeUndefined();
    expect(catalog.definitions.map((tool) => tool.name)).toEqual(['fs_read']);
  });

  it('S1: tools/list of a 2,000-tool catalog in search mode is under 2 KB, and the same for 20 tools', () => {
    const big = buildCatalog(synthetic(2000, 40), options);
    const small = buildCatalog(synthetic(20, 40), options);
    expect(big.tools).toHaveLength(2000);
    const bytes = Buffer.byteLength(JSON.stringify({ tools: big.definitions }));
    expect(bytes).toBeLessThan(2048);
    expect(JSON.stringify(small.definitions)).toBe(JSON.stringify(big.definitions));
  });

  it("S1: a downstream tool never takes the pair's names (T4: withheld, reported)", () => {
    const catalog = buildCatalog(
      [
        {
          server: 'gh',
          prefix: 'gh',
          expose: 'search',
          tools: [{ name: 'create_issue', inputSchema: schema }],
        },
        { server: 'raw', prefix: '', tools: [{ name: 'search_tools', inputSchema: schema }] },
      ],
      options,
    );
    expect(catalog.get('search_tools')).toBeUndefined();
    expect(catalog.problems).toEqual([
      expect.objectContaining({
        code: 'collision',
        name: 'search_tools',
        keptBy: { server: 'mcp-normalizer', tool: 'search_tools' },
      }),
    ]);
  });

  it('S1: a search-only tool that changes notifies nobody; the pair appearing does (T10)', () => {
    const before = buildCatalog(synthetic(20, 2), options);
    const after = buildCatalog(synthetic(40, 2), options);
    expect(diffCatalogs(before, after)).toEqual({ added: [], removed: [], changed: [] });
    const none = buildCatalog([], options);
    expect(diffCatalogs(none, after).added).toEqual(['search_tools', 'call_tool']);
  });

  it('S1: an MCP App tool of a server in search mode is search-only too (the list stays small)', () => {
    const catalog = buildCatalog(
      [
        {
          server: 'viewer',
          prefix: 'viewer',
          expose: 'search',
          tools: [
            {
              name: 'show_chart',
              inputSchema: schema,
              _meta: { ui: { resourceUri: 'ui://viewer/chart.html' } },
            },
            { name: 'export_chart', inputSchema: schema },
          ],
        },
      ],
      options,
    );
    expect(catalog.definitions.map((tool) => tool.name)).toEqual(['search_tools', 'call_tool']);
    expect(catalog.search('show chart', 5).map((tool) => tool.name)).toContain('viewer_show_chart');
  });

  it('S2: search_tools answers the best matches: exposed name, description, input schema', () => {
    const catalog = buildCatalog(inSearchMode(realCatalogs()), options);
    const answer = prepareCall(catalog, 'search_tools', { query: 'open a new issue on github', limit: 3 });
    if (isForward(answer) || !isOk(answer)) throw new Error(JSON.stringify(answer));
    const { tools } = answer.value as { tools: Record<string, unknown>[] };
    expect(tools).toHaveLength(3);
    // gitlab's create_issue says "open a new issue" word for word; github's is in the top 3.
    expect(tools.find((tool) => tool['name'] === 'github_create_issue')).toEqual({
      name: 'github_create_issue',
      description: expect.any(String),
      input_schema: catalog.get('github_create_issue')?.definition.inputSchema,
    });
    expect(answer.meta).toMatchObject({ tool: 'search_tools', source: 'proxy' });
  });

  it.each([
    [{}, '/query: must be a non-empty string'],
    [{ query: '  ' }, '/query: must be a non-empty string'],
    [{ query: 'x', limit: 0 }, '/limit: must be an integer from 1 to 20'],
    [{ query: 'word '.repeat(101) }, '/query: must be at most 500 characters'],
    [{ query: 'x', limit: 2.5 }, '/limit: must be an integer from 1 to 20'],
    [{ query: 'x', top: 3 }, '/top: is not an argument of this tool'],
    ['x', '(arguments): arguments must be an object'],
  ])('S2: search_tools refuses %j with invalid_arguments', (args, message) => {
    const catalog = buildCatalog(synthetic(4, 2), options);
    const result = refused(prepareCall(catalog, 'search_tools', args));
    expect(result.errorType).toBe('invalid_arguments');
    expect(result.error).toContain(message);
  });

  it('S3: ranking is deterministic: the same query gives the same order, ties in catalog order', () => {
    const catalog = buildCatalog(synthetic(40, 4), options);
    const first = catalog.search('operation path', 20).map((tool) => tool.name);
    expect(first).toHaveLength(20);
    expect(catalog.search('operation path', 20).map((tool) => tool.name)).toEqual(first);
    const again = buildCatalog(synthetic(40, 4), options);
    expect(again.search('operation path', 20).map((tool) => tool.name)).toEqual(first);
  });

  it.each([
    [
      'words split like tool names, stop words dropped',
      'List the openPullRequests',
      ['list', 'open', 'pull', 'requests'],
    ],
    ['each word once', 'tool '.repeat(100), ['tool']],
    ['a long word cut to 32 characters', 'x'.repeat(500), ['x'.repeat(32)]],
    [
      `the first ${SEARCH_MAX_TERMS} distinct words only`,
      Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '),
      Array.from({ length: SEARCH_MAX_TERMS }, (_, i) => `w${i}`),
    ],
    ['nothing but stop words: no terms', 'the and of', []],
  ])('S2: query terms: %s', (_d, query, terms) => {
    expect(queryTerms(query)).toEqual(terms);
  });

  it('S2: a query of stop words only, or of one word repeated, answers as its distinct words do', () => {
    const catalog = buildCatalog(synthetic(40, 4), options);
    expect(catalog.search('the and of', 5)).toEqual([]);
    const once = catalog.search('operation', 5).map((tool) => tool.name);
    expect(once.length).toBeGreaterThan(0);
    expect(catalog.search('operation '.repeat(50), 5).map((tool) => tool.name)).toEqual(once);
  });

  it('S3: the query set finds the wanted tool in the top 5 for at least 90% of its requests', () => {
    const recorded = realCatalogs();
    const reference = ['everything', 'filesystem', 'memory', 'sequential-thinking'];
    expect(recorded.map((entry) => entry.server)).toEqual(expect.arrayContaining(reference));
    expect(recorded.length - reference.length).toBeGreaterThanOrEqual(2);
    const catalog = buildCatalog(inSearchMode(recorded), options);
    expect(catalog.problems).toEqual([]);
    expect(catalog.tools.length).toBeGreaterThanOrEqual(300);
    const { queries } = JSON.parse(readFileSync(join(root, 'test', 'search', 'queries.json'), 'utf8')) as {
      queries: { q: string; want: string[] }[];
    };
    expect(queries.length).toBeGreaterThanOrEqual(60);
    const misses = queries.filter(
      ({ q, want }) => !catalog.search(q, 5).some((tool) => want.includes(`${tool.server}/${tool.tool}`)),
    );
    const found = (queries.length - misses.length) / queries.length;
    // The figure in docs/performance-log.md; the misses say where the ranking is weak.
    expect({ found: found >= 0.9, misses: misses.map(({ q }) => q) }).toMatchObject({ found: true });
  });

  it('S4: call_tool runs the named tool with its arguments, exactly as a direct call', () => {
    const catalog = buildCatalog(synthetic(4, 2), options);
    const direct = prepareCall(catalog, 'svc1_operation_0', { path: 'a' });
    const through = prepareCall(catalog, 'call_tool', { name: 'svc1_operation_0', arguments: { path: 'a' } });
    expect(through).toEqual({ ...direct, exposedName: 'svc1_operation_0' });
  });

  it('S4: call_tool refusals are the named tool’s: T9 unknown with suggestions, T8 invalid arguments', () => {
    const catalog = buildCatalog(synthetic(4, 2), options);
    const unknown = refused(prepareCall(catalog, 'call_tool', { name: 'svc1_operatoin_0' }));
    expect(unknown.errorType).toBe('unknown_tool');
    expect(unknown.errorData?.['suggestions']).toContain('svc1_operation_0');
    const invalid = refused(prepareCall(catalog, 'call_tool', { name: 'svc1_operation_0', arguments: {} }));
    expect(invalid.errorType).toBe('invalid_arguments');
    expect(invalid.meta).toMatchObject({ server: 'svc1', tool: 'operation_0' });
  });

  it('S4: T7 holds through call_tool: a destructive tool needs explicit_action in its arguments', () => {
    const catalog = buildCatalog(
      [
        {
          server: 'fs',
          prefix: 'fs',
          expose: 'search',
          tools: [{ name: 'delete', inputSchema: schema, annotations: { destructiveHint: true } }],
        },
      ],
      options,
    );
    const gate = catalog.get('fs_delete')?.gate;
    expect(
      refused(prepareCall(catalog, 'call_tool', { name: 'fs_delete', arguments: { path: 'a' } })).errorType,
    ).toBe('consent_required');
    const allowed = prepareCall(catalog, 'call_tool', {
      name: 'fs_delete',
      arguments: { path: 'a', explicit_action: gate?.value },
    });
    expect(isForward(allowed) && allowed.arguments).toEqual({ path: 'a' });
  });

  it.each([
    [{}, '/name: must be a non-empty string'],
    [{ name: 'svc0_operation_0', arguments: [1] }, '/arguments: must be an object'],
    [{ name: 'svc0_operation_0', args: {} }, '/args: is not an argument of this tool'],
    [{ name: 'search_tools', arguments: { query: 'x' } }, 'call "search_tools" directly'],
  ])('S4: call_tool refuses %j with invalid_arguments', (args, message) => {
    const catalog = buildCatalog(synthetic(4, 2), options);
    const result = refused(prepareCall(catalog, 'call_tool', args));
    expect(result.errorType).toBe('invalid_arguments');
    expect(result.error).toContain(message);
  });
});
