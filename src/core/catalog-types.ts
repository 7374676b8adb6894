/**
 * The catalog's types (CONTRACT T1–T12, S1–S4): what goes into a build, what comes out, and the
 * search pair's. Their own module so that the catalog, its listing step and search mode can each
 * import them without importing one another (no import circle, test/architecture.test.ts).
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { ArgumentValidator } from './arguments.js';
import type { ExplicitGate } from './explicit.js';
import type { AppTool } from './meta.js';
import type { ExposeMode } from './options.js';
import type { ErrorType } from './result.js';
import type { SchemaCompiler } from './schema-compiler.js';

/** Per-tool overrides, keyed by the tool's name after `rename` (T5). Config's `ToolOverride` fits. */
export interface CatalogToolOverride {
  /** Replaces the downstream description. */
  readonly description?: string;
  /** Instruction attached to the tool's successful results (R4). */
  readonly instruction?: string;
  /** Instructions for the tool's failures, per error type (R4). */
  readonly instructions?: Readonly<Partial<Record<ErrorType, string>>>;
  /** T7: `true` gates the tool, `false` un-gates it, whatever its annotations say. */
  readonly requireExplicit?: boolean;
}

/** One downstream server's listing and its tool settings. Config's `ToolsConfig` spreads in. */
export interface CatalogServerInput {
  /** The server's key in the config. */
  readonly server: string;
  /** T1: the server prefix; `""` exposes its tools unprefixed. */
  readonly prefix: string;
  /**
   * T11: `read_only` lists only tools annotated `readOnlyHint: true`. S1: `search` lists none of
   * them; they are found with `search_tools` and run with `call_tool`. @default 'all'
   */
  readonly expose?: ExposeMode;
  /** The downstream's `tools/list` entries, raw: each one is checked on its own (T12). */
  readonly tools: readonly unknown[];
  /** T5: globs over the downstream names; empty or absent means every tool. */
  readonly include?: readonly string[];
  /** T5: globs over the downstream names; exclude wins over include. */
  readonly exclude?: readonly string[];
  /** T5: downstream name → new name (before prefixing). */
  readonly rename?: Readonly<Record<string, string>>;
  /** T5: keyed by the name after `rename`. */
  readonly overrides?: Readonly<Record<string, CatalogToolOverride>>;
  /**
   * T15: a tool whose name already starts with the server prefix and the separator
   * (`git_status` of server `git`) is exposed without the repeat (`git_status`, not
   * `git_git_status`), unless that would take a name another tool has.
   */
  readonly stripPrefix?: boolean;
}

/** Catalog-wide settings. */
export interface CatalogOptions {
  /** T1: config `prefix`, else env `MCP_TOOL_PREFIX` (read by config), else none. @example 'acme' */
  readonly globalPrefix?: string;
  /** T1. @default '_' */
  readonly separator: string;
  /** T2. @default 64 */
  readonly nameMaxLength: number;
  /** T7. @default true */
  readonly explicitDestructive: boolean;
  /** T8. @default false */
  readonly strictArguments: boolean;
  /** T6: append a markdown argument list to each description. @default false */
  readonly describeArguments: boolean;
  /**
   * T6: every exposed tool's outputSchema, the envelope schema of the configured format; absent
   * (config `output.advertise_schema: false`, the default), tools carry no outputSchema.
   */
  readonly outputSchema?: Record<string, unknown>;
  /**
   * T14: the envelope schema for a tool with its own outputSchema (its value field typed), or
   * `undefined` to keep {@link CatalogOptions.outputSchema} for that tool.
   */
  readonly typedOutputSchema?: (toolSchema: Record<string, unknown>) => Record<string, unknown> | undefined;
  /** The catalog this one replaces: its compiled validators are reused (T10 rebuilds stay cheap). */
  readonly previous?: Catalog;
  /**
   * S1, I6: the search pair's names are the gateway's even when no server is in search mode (a
   * profile with `expose: search` lists them). @default false
   */
  readonly reserveSearchPair?: boolean;
  /** M1: reserve `run_code` too (a profile in code mode lists it). @default false */
  readonly reserveCodeTool?: boolean;
}

/** Agent instructions of one tool (R4), for `core/instructions`. */
export interface ToolInstructions {
  readonly success?: string;
  readonly failure?: Readonly<Partial<Record<ErrorType, string>>>;
}

/** One routable tool. */
export interface ExposedTool {
  /** The exposed name (T1, T2): the routing key. */
  readonly name: string;
  /** The downstream server's key. */
  readonly server: string;
  /** The downstream tool's original name (before `rename`): what is forwarded. */
  readonly tool: string;
  /** The tool as tools/list shows it (T6, T7). */
  readonly definition: Tool;
  /** T7: present when the tool needs `explicit_action`. */
  readonly gate?: ExplicitGate;
  readonly instructions: ToolInstructions;
  /** T8: validates arguments (with `explicit_action` already stripped) against the downstream schema. */
  readonly validate: ArgumentValidator;
  /** SEP-2243: optional header-mirrored params whose `null` is dropped before T8 (param-headers.ts). */
  readonly nullableParams?: readonly (readonly string[])[];
  /** U6: the tool's MCP Apps metadata (a UI, or a visibility), when it has any. */
  readonly app?: AppTool;
  /** S1: its server is in search mode: not in tools/list, found with `search_tools`. */
  readonly searchOnly?: true;
  /** M5: the downstream's own outputSchema, when it declared one (what its result value is). */
  readonly outputSchema?: Record<string, unknown>;
}

/** Something wrong with the catalog: `check` prints these and exits non-zero on an error (T4). */
export interface CatalogProblem {
  readonly severity: 'error' | 'warning';
  readonly code:
    | 'collision'
    | 'malformed_tool'
    | 'invalid_pattern'
    | 'unused_rename'
    | 'unused_override'
    | 'ambiguous_app_name';
  readonly server: string;
  /** The downstream tool's name (or `#<index>` when it has none). */
  readonly tool?: string;
  /** The exposed name concerned, when there is one. */
  readonly name?: string;
  /** T4: the tool that kept the name. */
  readonly keptBy?: { readonly server: string; readonly tool: string };
  readonly message: string;
}

/** The routing table and the tools/list answer. */
export interface Catalog {
  /** tools/list order: config order, then each downstream's listing order. */
  readonly tools: readonly ExposedTool[];
  /**
   * The tools/list answer, prebuilt: every listed tool's definition in `tools` order, then the
   * search pair's when a server is in search mode (S1).
   */
  readonly definitions: readonly Tool[];
  /**
   * S1: the pair's exposed names, present when at least one server has `expose: search` (or
   * {@link CatalogOptions.reserveSearchPair}).
   */
  readonly searchPair?: SearchPair;
  /**
   * S2, S3: the best `limit` tools of servers in search mode for `query` (indexed on first use,
   * once per build).
   */
  search(query: string, limit: number): readonly ExposedTool[];
  /** I6: as {@link search}, over every tool (a profile in search mode; its own index). */
  searchAll(query: string, limit: number): readonly ExposedTool[];
  /**
   * T3: a Map lookup; names are never parsed. U6: a name that is no exposed name may be the
   * downstream name an MCP App calls its own server's tool by (see {@link Catalog.isAppName}).
   */
  get(exposedName: string): ExposedTool | undefined;
  /** U6: `name` is not an exposed name but an app's name for a tool of its own server. */
  isAppName(name: string): boolean;
  readonly problems: readonly CatalogProblem[];
  /** T9: up to 3 exposed names close to `name`. */
  suggest(name: string): string[];
  /** The schema compiler of this build; the next build reuses its validators. */
  readonly compiler: SchemaCompiler;
}

/** The exposed names of the pair (T1: the global prefix applies, no server prefix). */
export interface SearchPair {
  readonly search: string;
  readonly call: string;
  /** M1: `run_code`, when a server or a profile is in code mode. */
  readonly run?: string;
}

/** One match, as `search_tools` answers it: what an agent needs to call the tool. */
export interface SearchMatch {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly input_schema: unknown;
}

/** The ranking over one catalog's searchable tools (rebuilt with the catalog, S3). */
export interface ToolSearch {
  /** The best `limit` tools for `query`, best first; ties keep catalog order (deterministic). */
  search(query: string, limit: number): readonly ExposedTool[];
}
