/**
 * Search mode (CONTRACT S1–S4): the tools of servers with `expose: search` are not listed one by
 * one; the upstream sees a fixed pair instead, `search_tools` (query → the best matches) and
 * `call_tool` (exposed name + arguments → the call, exactly as a direct one). This module owns
 * the pair's definitions, the ranking (MiniSearch's BM25+, never hand-written) and the reading of
 * the pair's arguments. Pure: no I/O, the index is built from the catalog's tools.
 */
import MiniSearch from 'minisearch';
import type { Tool } from '@modelcontextprotocol/server';
import type { CatalogOptions, ExposedTool, SearchMatch, SearchPair, ToolSearch } from './catalog-types.js';

export type { SearchMatch, SearchPair, ToolSearch } from './catalog-types.js';
import { exposedName } from './naming.js';
import { isRecord } from './json.js';

/** S1: `search_tools` and `call_tool`, under the global prefix (T1) when there is one. */
export function searchPairNames(
  options: Pick<CatalogOptions, 'globalPrefix' | 'separator' | 'nameMaxLength'>,
  code = false,
): SearchPair {
  const name = (tool: string): string =>
    exposedName({
      globalPrefix: options.globalPrefix,
      serverPrefix: '',
      separator: options.separator,
      tool,
      maxLength: options.nameMaxLength,
    });
  return {
    search: name('search_tools'),
    call: name('call_tool'),
    ...(code ? { run: name('run_code') } : {}),
  };
}

/** S2: how many matches `search_tools` returns unless asked, and at most. */
export const SEARCH_DEFAULT_LIMIT = 5;
export const SEARCH_MAX_LIMIT = 20;
/**
 * S2: the longest query. Each word is matched fuzzily against the whole index, synchronously: a
 * query of a megabyte would hold the event loop for seconds.
 */
export const SEARCH_MAX_QUERY = 500;

/** Splits `get_pull_requestFiles` / `API-post-search` into lower-case words. */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

/**
 * Words too common in requests and tool descriptions to tell tools apart. BM25 weighs them low
 * already; dropping them keeps "a tool that mentions 'the' five times" from outranking a match.
 */
const STOP_WORDS = new Set(
  'a an and are as at be by can for from how i in into is it its me my of on or our please show that the their this to use using want we what which with you your'.split(
    ' ',
  ),
);

/**
 * S2: the most distinct words of one query that are searched. Each word is matched by prefix and
 * fuzzily against the whole vocabulary, synchronously, so the work must not grow with the query:
 * `"tool " × 100` cost 200 ms of CPU over 2,000 tools before words were deduplicated and capped.
 */
export const SEARCH_MAX_TERMS = 12;
/** S2: a longer word is cut to this many characters (a fuzzy match's work grows with its length). */
const MAX_TERM_LENGTH = 32;

/**
 * The words of a query that are searched: split like tool names, stop words dropped, each once,
 * cut to {@link MAX_TERM_LENGTH}, at most {@link SEARCH_MAX_TERMS} (the first ones, in order).
 * @example queryTerms('List the tools, list them all') // ['list', 'tools', 'them', 'all']
 */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const word of words(query)) {
    if (STOP_WORDS.has(word)) continue;
    terms.add(word.slice(0, MAX_TERM_LENGTH));
    if (terms.size >= SEARCH_MAX_TERMS) break;
  }
  return [...terms];
}

/**
 * What the index reads of one tool: plain strings, so that the ranking can run where the
 * catalog's objects are not (app/search-thread.ts, off the event loop).
 */
export interface SearchDocument {
  readonly name: string;
  readonly server: string;
  readonly title: string;
  readonly description: string;
  readonly args: string;
}

interface IndexedTool extends SearchDocument {
  readonly id: number;
}

/** The top-level argument names and descriptions of a tool's inputSchema. */
function argumentText(schema: unknown): string {
  const properties = isRecord(schema) && isRecord(schema['properties']) ? schema['properties'] : {};
  const parts: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    parts.push(key);
    if (isRecord(value) && typeof value['description'] === 'string') parts.push(value['description']);
  }
  return parts.join(' ');
}

/** What the index reads of `tool`. */
export function searchDocument(tool: ExposedTool): SearchDocument {
  return {
    name: tool.tool,
    server: tool.server,
    title: typeof tool.definition.title === 'string' ? tool.definition.title : '',
    description: tool.definition.description ?? '',
    args: argumentText(tool.definition.inputSchema),
  };
}

/**
 * Indexes `documents` (S3). Field weights: the tool's own name and title say most about it, its
 * server's name says which service, the description says the rest, argument names the least.
 * `search` answers positions in `documents`, best first; ties keep their order (deterministic).
 */
export function createDocumentSearch(documents: readonly SearchDocument[]): {
  search(query: string, limit: number): number[];
} {
  const index = new MiniSearch<IndexedTool>({
    fields: ['name', 'server', 'title', 'description', 'args'],
    tokenize: words,
    processTerm: (term) => (STOP_WORDS.has(term) ? null : term),
    searchOptions: {
      boost: { name: 3, title: 2, server: 2, description: 1, args: 0.5 },
      prefix: (term) => term.length >= 4,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      combineWith: 'OR',
    },
  });
  index.addAll(documents.map((document, id) => ({ id, ...document })));
  return {
    search(query, limit) {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const hits = index.search(terms.join(' '));
      // MiniSearch sorts by score; equal scores keep catalog order so answers never vary.
      hits.sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number));
      return hits.slice(0, limit).map((hit) => hit.id as number);
    },
  };
}

/**
 * Indexes `tools` (S3): {@link createDocumentSearch} over their {@link searchDocument}s.
 * @example createToolSearch(catalog.tools.filter((tool) => tool.searchOnly)).search('open an issue', 5)
 */
export function createToolSearch(tools: readonly ExposedTool[]): ToolSearch {
  const documents = createDocumentSearch(tools.map(searchDocument));
  return {
    search: (query, limit) => documents.search(query, limit).map((id) => tools[id] as ExposedTool),
  };
}

/** What `search_tools` answers for one tool. */
export function searchMatch(tool: ExposedTool): SearchMatch {
  const { title, description, inputSchema } = tool.definition;
  return {
    name: tool.name,
    ...(typeof title === 'string' ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    input_schema: inputSchema,
  };
}

/** How many server names the `search_tools` description lists before "and N more". */
const NAMED_SERVERS = 12;

/**
 * S1: the pair's definitions. They depend only on the config (the servers in search mode), never
 * on how many tools those servers list, so tools/list stays small and the same for every client.
 */
export function searchPairDefinitions(pair: SearchPair, servers: readonly string[]): Tool[] {
  const named = servers.slice(0, NAMED_SERVERS).join(', ');
  const more = servers.length > NAMED_SERVERS ? ` and ${servers.length - NAMED_SERVERS} more` : '';
  return [
    {
      name: pair.search,
      title: 'Search tools',
      description: `Find tools by what they do (servers: ${named}${more}). Returns the best matches with their names, descriptions and input schemas; run one with ${pair.call}.`,
      inputSchema: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            minLength: 1,
            maxLength: SEARCH_MAX_QUERY,
            description: 'What you want to do, in a few words.',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: SEARCH_MAX_LIMIT,
            description: `How many matches to return (default ${SEARCH_DEFAULT_LIMIT}).`,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: pair.call,
      title: 'Call a tool',
      description: `Run a tool found with ${pair.search}: its exact name and its arguments, which must match its input schema.`,
      inputSchema: {
        type: 'object',
        properties: {
          name: {
            type: 'string',
            minLength: 1,
            description: `The tool's name as ${pair.search} returned it.`,
          },
          arguments: { type: 'object', description: "The tool's arguments." },
        },
        required: ['name'],
        additionalProperties: false,
      },
    },
  ];
}

/** A problem with the pair's own arguments, as one path and message (T8's issue shape). */
export interface PairIssue {
  readonly path: string;
  readonly message: string;
}

/** S2: `search_tools` arguments, read; or the issues with them. */
export function readSearchArguments(
  args: unknown,
): { readonly query: string; readonly limit: number } | { readonly issues: PairIssue[] } {
  const given = args === undefined ? {} : args;
  if (!isRecord(given)) return { issues: [{ path: '', message: 'arguments must be an object' }] };
  const issues: PairIssue[] = [];
  const { query, limit } = given;
  if (typeof query !== 'string' || query.trim() === '')
    issues.push({ path: '/query', message: 'must be a non-empty string' });
  else if (query.length > SEARCH_MAX_QUERY)
    issues.push({ path: '/query', message: `must be at most ${SEARCH_MAX_QUERY} characters` });
  if (
    limit !== undefined &&
    !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= SEARCH_MAX_LIMIT)
  )
    issues.push({ path: '/limit', message: `must be an integer from 1 to ${SEARCH_MAX_LIMIT}` });
  for (const key of Object.keys(given)) {
    if (key !== 'query' && key !== 'limit')
      issues.push({ path: `/${key}`, message: 'is not an argument of this tool' });
  }
  if (issues.length > 0) return { issues };
  return { query: query as string, limit: (limit as number | undefined) ?? SEARCH_DEFAULT_LIMIT };
}

/** S4: `call_tool` arguments, read; or the issues with them. */
export function readCallArguments(
  args: unknown,
): { readonly name: string; readonly arguments: unknown } | { readonly issues: PairIssue[] } {
  const given = args === undefined ? {} : args;
  if (!isRecord(given)) return { issues: [{ path: '', message: 'arguments must be an object' }] };
  const issues: PairIssue[] = [];
  if (typeof given['name'] !== 'string' || given['name'] === '')
    issues.push({ path: '/name', message: 'must be a non-empty string' });
  if (given['arguments'] !== undefined && !isRecord(given['arguments']))
    issues.push({ path: '/arguments', message: 'must be an object' });
  for (const key of Object.keys(given)) {
    if (key !== 'name' && key !== 'arguments')
      issues.push({ path: `/${key}`, message: 'is not an argument of this tool' });
  }
  if (issues.length > 0) return { issues };
  return { name: given['name'] as string, arguments: given['arguments'] };
}

/** S4: the exposed name a call is for: the one `call_tool` names, else the name called. */
export function calledName(pair: SearchPair | undefined, name: string, args: unknown): string {
  if (pair === undefined || name !== pair.call || !isRecord(args)) return name;
  const named = args['name'];
  return typeof named === 'string' && named !== '' ? named : name;
}
