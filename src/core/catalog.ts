/**
 * The tool catalog (CONTRACT T1–T12): every downstream's listed tools, filtered, renamed,
 * prefixed, gated and checked, in one routing table keyed by exposed name. Built once per change
 * of any downstream's list (T10) and read on every request: tools/list returns the prebuilt
 * {@link Catalog.definitions} array and tools/call is a Map lookup (T3), so neither costs
 * anything per request. Pure: the listings come in as data, problems go out as data.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { argumentValidator } from './arguments.js';
import { candidates, type Candidate } from './catalog-listing.js';
import type {
  Catalog,
  CatalogOptions,
  CatalogProblem,
  CatalogServerInput,
  ExposedTool,
  ToolInstructions,
} from './catalog-types.js';
import { describeArguments } from './describe.js';
import { gateFor, gatedDescription, gateSchema, isGated } from './explicit.js';
import { appTool, carriedMeta } from './meta.js';
import { exposedName } from './naming.js';
import { nullableParamPaths } from './param-headers.js';
import { createSchemaCompiler, type SchemaCompiler } from './schema-compiler.js';
import { ownValue, isRecord } from './json.js';
import { closest } from './suggest.js';
import { uriPrefix } from './uri-namespace.js';
import { codeToolDefinitions } from './code-mode.js';
import { searchedMode } from './options.js';
import { createToolSearch, searchPairDefinitions, searchPairNames } from './search.js';
import type { ToolSearch } from './catalog-types.js';

export type {
  Catalog,
  CatalogOptions,
  CatalogProblem,
  CatalogServerInput,
  CatalogToolOverride,
  ExposedTool,
  ToolInstructions,
} from './catalog-types.js';

/** T6, Q6: a tool's `execution` as exposed: as listed, without `taskSupport: "required"`. */
function exposedExecution(execution: unknown): Record<string, unknown> | undefined {
  if (!isRecord(execution)) return undefined;
  if (execution['taskSupport'] !== 'required') return execution;
  const { taskSupport: _runHere, ...rest } = execution;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function buildTool(
  candidate: Candidate,
  renamed: string,
  name: string,
  options: CatalogOptions,
  compiler: SchemaCompiler,
): ExposedTool {
  const { server, raw } = candidate;
  const override = ownValue(server.overrides, renamed);
  const inputSchema = raw['inputSchema'] as Record<string, unknown>;
  const policy = {
    explicitDestructive: options.explicitDestructive,
    requireExplicit: override?.requireExplicit,
  };
  const gate = isGated(raw['annotations'], policy) ? gateFor(name) : undefined;
  let description =
    override?.description ?? (typeof raw['description'] === 'string' ? raw['description'] : undefined);
  if (gate) description = gatedDescription(description, gate);
  if (options.describeArguments) {
    const list = describeArguments(inputSchema);
    if (list) description = `${description ? `${description}\n\n` : ''}Arguments:\n${list}`;
  }
  const definition: Record<string, unknown> = { name };
  if (typeof raw['title'] === 'string') definition['title'] = raw['title'];
  if (description !== undefined) definition['description'] = description;
  // T6: the downstream inputSchema verbatim; T7: a gated copy with `explicit_action`.
  definition['inputSchema'] = gate ? gateSchema(inputSchema, gate) : inputSchema;
  const app = appTool(raw['_meta']);
  // U6: an MCP App's tool is answered in its server's own shape, so it keeps its own schema.
  const own = isRecord(raw['outputSchema']) ? raw['outputSchema'] : undefined;
  if (app !== undefined) {
    if (own !== undefined) definition['outputSchema'] = own;
  } else if (options.outputSchema !== undefined) {
    definition['outputSchema'] =
      (own !== undefined ? options.typedOutputSchema?.(own) : undefined) ?? options.outputSchema;
  }
  if (isRecord(raw['annotations'])) definition['annotations'] = raw['annotations'];
  // T6: `execution` travels, except a task-only tool's `taskSupport`: the gateway runs that tool
  // as a task itself and exposes it as a plain tool (Q6).
  const execution = exposedExecution(raw['execution']);
  if (execution !== undefined) definition['execution'] = execution;
  // T13: the downstream's `_meta` travels (reserved keys dropped, `ui://` URIs exposed, U6).
  const meta = carriedMeta(raw['_meta'], uriPrefix(options.globalPrefix, server.prefix));
  if (meta !== undefined) definition['_meta'] = meta;
  const instructions: { success?: string; failure?: ToolInstructions['failure'] } = {};
  if (override?.instruction !== undefined) instructions.success = override.instruction;
  if (override?.instructions !== undefined) instructions.failure = override.instructions;
  const tool: { -readonly [K in keyof ExposedTool]: ExposedTool[K] } = {
    name,
    server: server.server,
    tool: candidate.name,
    definition: definition as Tool,
    instructions,
    validate: argumentValidator(compiler, inputSchema, options),
  };
  if (gate) tool.gate = gate;
  if (app !== undefined) tool.app = app;
  if (own !== undefined) tool.outputSchema = own;
  const nullable = nullableParamPaths(inputSchema);
  if (nullable.length > 0) tool.nullableParams = nullable;
  return tool;
}

/**
 * Builds the catalog from every server's listing, in config order. Never throws on bad input:
 * malformed tools (T12) and collisions (T4) are withheld and reported in `problems`.
 * @example buildCatalog([{ server: 'fs', prefix: 'fs', tools: listing }], { separator: '_', nameMaxLength: 64, explicitDestructive: true, strictArguments: false, describeArguments: false, outputSchema })
 */
export function buildCatalog(servers: readonly CatalogServerInput[], options: CatalogOptions): Catalog {
  const compiler = createSchemaCompiler(options.previous?.compiler);
  const problems: CatalogProblem[] = [];
  const byName = new Map<string, ExposedTool>();
  const searched = servers.filter((server) => searchedMode(server.expose)).map((server) => server.server);
  // M1: code mode lists `run_code` beside the pair.
  const coded = servers.some((server) => server.expose === 'code');
  const pair =
    searched.length > 0 || options.reserveSearchPair === true
      ? searchPairNames(options, coded || options.reserveCodeTool === true)
      : undefined;
  /** S1: the pair's names are the gateway's own; a downstream tool never takes them (T4). */
  const reserved = new Map(
    pair === undefined
      ? []
      : [
          [pair.search, 'search_tools'],
          [pair.call, 'call_tool'],
          ...(pair.run !== undefined ? [[pair.run, 'run_code'] as const] : []),
        ],
  );
  const tools: ExposedTool[] = [];
  // T5: each candidate with its name after `rename`, worked out once.
  const listed = servers.map((server) => ({
    server,
    entries: candidates(server, compiler, problems).map((candidate) => ({
      candidate,
      renamed: ownValue(server.rename, candidate.name) ?? candidate.name,
    })),
  }));
  const nameOf = (server: CatalogServerInput, tool: string): string =>
    exposedName({
      globalPrefix: options.globalPrefix,
      serverPrefix: server.prefix,
      separator: options.separator,
      tool,
      maxLength: options.nameMaxLength,
    });
  // T15: every name as it would be without stripping, so that a stripped name never takes one.
  const plain = new Set<string>();
  for (const { server, entries } of servers.some((entry) => entry.stripPrefix === true) ? listed : []) {
    for (const { renamed } of entries) plain.add(nameOf(server, renamed));
  }
  for (const { server, entries } of listed) {
    const own = new Set(entries.map(({ renamed }) => renamed));
    for (const { candidate, renamed } of entries) {
      const stripped =
        server.stripPrefix === true ? withoutOwnPrefix(renamed, server.prefix, options.separator) : undefined;
      const strippedName =
        stripped !== undefined && !own.has(stripped) ? nameOf(server, stripped) : undefined;
      const name =
        strippedName !== undefined && !plain.has(strippedName) ? strippedName : nameOf(server, renamed);
      const ownTool = reserved.get(name);
      const kept =
        byName.get(name) ?? (ownTool !== undefined ? { server: 'mcp-normalizer', tool: ownTool } : undefined);
      if (kept) {
        // T4: never shadow; the later one (config order, then listing order) is withheld.
        problems.push({
          severity: 'error',
          code: 'collision',
          server: server.server,
          tool: candidate.name,
          name,
          keptBy: { server: kept.server, tool: kept.tool },
          message: `Name collision on "${name}": tool "${candidate.name}" of server "${server.server}" is withheld because tool "${kept.tool}" of server "${kept.server}" already has that name; give one of them a different tools.rename or server prefix.`,
        });
        continue;
      }
      const built = buildTool(candidate, renamed, name, options, compiler);
      const tool: ExposedTool = searchedMode(server.expose) ? { ...built, searchOnly: true } : built;
      byName.set(name, tool);
      tools.push(tool);
    }
  }
  const appNames = appAliases(tools, byName, problems);
  const names = [...byName.keys()];
  let index: ToolSearch | undefined;
  let indexAll: ToolSearch | undefined;
  const shown = tools.filter((tool) => tool.searchOnly !== true).map((tool) => tool.definition);
  return {
    tools,
    definitions:
      pair === undefined || searched.length === 0
        ? shown
        : [...shown, ...searchPairDefinitions(pair, searched), ...(coded ? codeToolDefinitions(pair) : [])],
    ...(pair !== undefined ? { searchPair: pair } : {}),
    search(query, limit) {
      index ??= createToolSearch(tools.filter((tool) => tool.searchOnly === true));
      return index.search(query, limit);
    },
    searchAll(query, limit) {
      indexAll ??= createToolSearch(tools);
      return indexAll.search(query, limit);
    },
    get: (exposed) => byName.get(exposed) ?? appNames.get(exposed),
    isAppName: (name) => !byName.has(name) && appNames.has(name),
    problems,
    suggest: (name) => closest(name, names),
    compiler,
  };
}

/** T15: `tool` without a leading `<prefix><separator>` (any case), or undefined when it has none. */
function withoutOwnPrefix(tool: string, prefix: string, separator: string): string | undefined {
  if (prefix === '') return undefined;
  const start = `${prefix}${separator}`;
  if (tool.length <= start.length || tool.slice(0, start.length).toLowerCase() !== start.toLowerCase())
    return undefined;
  return tool.slice(start.length);
}

/**
 * U6: an MCP App calls the tools of its own server by their downstream names (its code was
 * written against that server, not against our exposed names). Every tool an app may call
 * (visibility with `app`, the default) of a server that has at least one app tool answers to its
 * downstream name too, unless that name is an exposed name or two such servers share it (then
 * neither gets it, and a warning says so).
 */
function appAliases(
  tools: readonly ExposedTool[],
  byName: ReadonlyMap<string, ExposedTool>,
  problems: CatalogProblem[],
): Map<string, ExposedTool> {
  const appServers = new Set(tools.filter((tool) => tool.app !== undefined).map((tool) => tool.server));
  const aliases = new Map<string, ExposedTool>();
  const ambiguous = new Set<string>();
  for (const tool of tools) {
    if (!appServers.has(tool.server) || tool.tool === tool.name || byName.has(tool.tool)) continue;
    if (tool.app !== undefined && !tool.app.visibility.includes('app')) continue;
    const other = aliases.get(tool.tool);
    if (other !== undefined && other.server !== tool.server) {
      ambiguous.add(tool.tool);
      problems.push({
        severity: 'warning',
        code: 'ambiguous_app_name',
        server: tool.server,
        tool: tool.tool,
        message: `MCP Apps of servers "${other.server}" and "${tool.server}" both have a tool "${tool.tool}": an app calling it by that name cannot be routed, so neither answers to it (their exposed names still work).`,
      });
    }
    aliases.set(tool.tool, tool);
  }
  for (const name of ambiguous) aliases.delete(name);
  return aliases;
}

/** What changed between two catalogs, by exposed name (T10). */
export interface CatalogDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Same exposed name, different definition or route. */
  readonly changed: readonly string[];
}

/**
 * T10: names added, removed and changed in tools/list from `before` to `after`; all empty means
 * "no notification". S1: a search-only tool is not listed, so its changes notify nobody (the next
 * `search_tools` sees them).
 */
export function diffCatalogs(before: Catalog, after: Catalog): CatalogDiff {
  const old = new Map(before.definitions.map((definition) => [definition.name, definition]));
  const added: string[] = [];
  const changed: string[] = [];
  const now = new Set<string>();
  for (const definition of after.definitions) {
    const name = definition.name;
    now.add(name);
    const was = old.get(name);
    const [from, to] = [before.get(name), after.get(name)];
    if (was === undefined) added.push(name);
    else if (
      from?.server !== to?.server ||
      from?.tool !== to?.tool ||
      JSON.stringify(was) !== JSON.stringify(definition)
    )
      changed.push(name);
  }
  const removed = [...old.keys()].filter((name) => !now.has(name));
  return { added, removed, changed };
}
