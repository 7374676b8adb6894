/**
 * The written configuration of one downstream server (C3, C6): its keys under `servers:` or in a
 * `servers_dir` file, the Claude-Desktop `mcpServers` entry, and the `defaults:` block, each
 * per-server key with a default written once (`DEFAULTABLE`). Part of the one config schema
 * (`schema.ts`).
 *
 * Per-server keys carry no zod default on purpose: `normalize.ts` must see whether a server set a
 * key itself, so that the `defaults:` block applies only where it did not.
 */
import { z } from 'zod';
import { EXPOSE_MODES } from '../core/options.js';
import { ERROR_TYPES } from '../core/result.js';
import { DownstreamAuthInputSchema } from './auth-schema.js';

/**
 * The longest message line read from a stdio server unless it sets `max_message_bytes`: results
 * this large become file artifacts anyway (N9), and a longer line fails only its own call.
 */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Contract defaults for the per-server limits (C6, P2–P4); the `defaults:` block overrides them. */
export const SERVER_DEFAULTS = {
  timeout_ms: 60_000,
  startup_timeout_ms: 120_000,
  concurrency: 8,
  max_queue: 256,
  withhold_after_ms: 300_000,
  health_interval_ms: 15_000,
  inband_errors: true,
  protocol: 'auto',
  client_features: ['elicitation', 'sampling'],
  isolate_callers: false,
  instances: 'shared',
  max_instances: 16,
  instance_idle_ms: 600_000,
} as const;

/**
 * Q2: what a downstream may ask its client for, forwarded to the upstream caller behind the call.
 * `roots` is not in the default: a server such as server-filesystem replaces the folders in its
 * args with the client's roots (Q4).
 */
export const CLIENT_FEATURES = ['elicitation', 'sampling', 'roots'] as const;
const clientFeaturesSchema = z
  .array(z.enum(CLIENT_FEATURES))
  .refine((list) => new Set(list).size === list.length, { message: 'expected each feature once' });

/**
 * E5: the protocol era spoken to a server. `auto` probes with `server/discover` and falls back to
 * the 2025 `initialize`; `legacy` never probes; `"2026-07-28"` insists on the modern revision.
 */
export const PROTOCOL_MODES = ['auto', 'legacy', '2026-07-28'] as const;

/**
 * Which callers share one running copy of a server: all of them (`shared`), or each 2025 session
 * and stdio connection, and each 2026 caller by its principal, its own (`per_session`).
 */
export const INSTANCE_MODES = ['shared', 'per_session'] as const;
const protocolSchema = z.enum(PROTOCOL_MODES);

export const positiveInt = z.number().int().min(1);
export const nonNegativeInt = z.number().int().min(0);
export const stringMap = z.record(z.string(), z.string());

/** R4: agent instructions per error type; keys must be R3 error types. */
export const InstructionsSchema = z
  .partialRecord(z.enum(ERROR_TYPES), z.string().min(1))
  .describe(
    `Agent instruction per error type (R4), e.g. { timeout: "Retry at most once." }. Keys: ${ERROR_TYPES.join(', ')}.`,
  );

export const exposeSchema = z.enum(EXPOSE_MODES);

/** Per-tool overrides, keyed by the tool's name after `rename` (T5). */
export const ToolOverrideSchema = z
  .strictObject({
    description: z.string().describe("Replaces the downstream tool's description."),
    instruction: z.string().describe("Instruction attached to the tool's successful results (R4)."),
    instructions: InstructionsSchema.describe(
      "Instructions for this tool's failures, per error type (R4); wins over server and global ones.",
    ),
    require_explicit: z
      .boolean()
      .describe('T7: require the explicit_action argument even without a destructive annotation.'),
  })
  .partial()
  .describe('Overrides for one tool, keyed by its name after `rename`.');

/** Tool selection and renaming for one server (T5). */
export const ToolsSchema = z
  .strictObject({
    include: z
      .array(z.string().min(1))
      .describe('Glob patterns over downstream tool names; only matching tools are exposed. Default: all.'),
    exclude: z.array(z.string().min(1)).describe('Glob patterns of downstream tools to hide. Default: none.'),
    rename: stringMap.describe(
      'Downstream tool name → new name (before prefixing), e.g. { read_text_file: read }.',
    ),
    overrides: z
      .record(z.string(), ToolOverrideSchema)
      .describe('Per-tool description, instruction(s) and require_explicit, keyed by the name after rename.'),
    strip_prefix: z
      .boolean()
      .describe(
        "T15: expose a tool whose name already starts with this server's prefix and the separator without the repeat (git_status, not git_git_status), unless another tool has that name. Default: false.",
      ),
  })
  .partial()
  .describe('Which tools of this server are exposed, and how (T5).');

/**
 * The keys every server accepts, whatever its transport. Transport keys are all optional here;
 * the refinement below decides stdio vs remote with a message that says which key to keep.
 */
/**
 * The per-server keys that `defaults:` may set (C6): each written once, with its help text; the
 * server key's help names its default, and `DefaultsSchema` applies it. `SERVER_DEFAULTS` holds
 * the values.
 */
const DEFAULTABLE = {
  timeout_ms: { schema: positiveInt, help: 'Per-call timeout in ms (P3).' },
  startup_timeout_ms: {
    schema: positiveInt,
    help: 'Time for spawn, handshake and first tool listing, apart from timeout_ms (P1).',
  },
  concurrency: { schema: positiveInt, help: 'Calls in flight at most per server (P2).' },
  max_queue: { schema: nonNegativeInt, help: 'Calls waiting at most per server before `overloaded` (P2).' },
  health_interval_ms: {
    schema: nonNegativeInt,
    help: 'O4, P4: a ready remote server is pinged this often, so one that died is shown down within it (stdio: its exit says so). 0: never.',
  },
  withhold_after_ms: {
    schema: nonNegativeInt,
    help: 'A server down this long has its tools withheld (P4).',
  },
  inband_errors: { schema: z.boolean(), help: 'N8: recognise in-band error conventions.' },
  protocol: {
    schema: protocolSchema,
    help: 'E5: the protocol era spoken to the server: auto (probe with server/discover, fall back to initialize), legacy (2025 initialize, no probe) or "2026-07-28" (modern only).',
  },
  client_features: {
    schema: clientFeaturesSchema,
    help: 'Q2: what the server may ask its client for (elicitation, sampling, roots), forwarded to the caller behind the call when that caller has it.',
  },
  isolate_callers: {
    schema: z.boolean(),
    help: 'Q1: calls from different upstream clients never overlap on the server, so every request it sends to its client has one possible owner.',
  },
  instances: {
    schema: z.enum(INSTANCE_MODES),
    help: 'P10: shared (one running copy for every caller) or per_session (each upstream session gets its own copy, for servers that keep state between calls: git, shells, browsers).',
  },
  max_instances: {
    schema: positiveInt,
    help: 'P10: most per-session copies of the server running at once; a new caller replaces the one idle longest, or gets `overloaded` when all are busy.',
  },
  instance_idle_ms: {
    schema: positiveInt,
    help: 'P10: a per-session copy with no call for this long is stopped.',
  },
} as const satisfies Record<keyof typeof SERVER_DEFAULTS, { schema: z.ZodType; help: string }>;

type Defaultable = typeof DEFAULTABLE;

/** A server's own key: the help, and the default it falls back to. */
function serverKey<K extends keyof Defaultable>(key: K): Defaultable[K]['schema'] {
  const { schema, help } = DEFAULTABLE[key];
  return schema.describe(
    `${help} Default: defaults.${key} (${JSON.stringify(SERVER_DEFAULTS[key])}).`,
  ) as Defaultable[K]['schema'];
}

const serverShape = {
  command: z.string().min(1).describe('Stdio server: the program to run (e.g. npx, node, uvx).'),
  args: z.array(z.string()).describe('Stdio server: command-line arguments.'),
  env: stringMap.describe(
    'Stdio server: environment variables for the child (only these plus HOME, LOGNAME, PATH, SHELL, TERM, USER reach it).',
  ),
  cwd: z
    .string()
    .describe("Stdio server: working directory of the child; relative to the config file's folder."),
  max_message_bytes: positiveInt.describe(
    `Stdio server: the longest message read from the child; a longer answer fails only its own call. Default: ${MAX_STDIO_MESSAGE_BYTES} (64 MiB).`,
  ),
  url: z
    .string()
    .regex(/^https?:\/\/\S+$/, { message: 'expected an http:// or https:// URL' })
    .describe('Remote server: its MCP endpoint URL.'),
  transport: z
    .enum(['streamable-http', 'sse'])
    .describe('Remote server: streamable-http (default) or legacy sse.'),
  headers: stringMap.describe('Remote server: HTTP headers sent with every request (e.g. Authorization).'),
  auth: DownstreamAuthInputSchema,
  prefix: z
    .string()
    .describe('Server prefix of exposed names (T1); default: the server key; "" exposes names unprefixed.'),
  enabled: z.boolean().describe('false keeps the server configured but not started. Default: true.'),
  timeout_ms: serverKey('timeout_ms'),
  startup_timeout_ms: serverKey('startup_timeout_ms'),
  concurrency: serverKey('concurrency'),
  max_queue: serverKey('max_queue'),
  withhold_after_ms: serverKey('withhold_after_ms'),
  health_interval_ms: serverKey('health_interval_ms'),
  tools: ToolsSchema,
  instructions: InstructionsSchema.describe('Agent instruction per error type for this server (R4).'),
  inband_errors: serverKey('inband_errors'),
  protocol: serverKey('protocol'),
  expose: exposeSchema.describe(
    'T11: all, or read_only (only tools annotated readOnlyHint); S1: search (not listed; found with search_tools, run with call_tool); M1: code (as search, plus run_code). Default: global expose.',
  ),
  client_features: serverKey('client_features'),
  isolate_callers: serverKey('isolate_callers'),
  instances: serverKey('instances'),
  max_instances: serverKey('max_instances'),
  instance_idle_ms: serverKey('instance_idle_ms'),
};

type ServerLike = { command?: string; url?: string; serverUrl?: string; [key: string]: unknown };

const STDIO_ONLY = ['args', 'env', 'cwd', 'max_message_bytes'] as const;
const REMOTE_ONLY = ['transport', 'headers', 'auth'] as const;

/**
 * C3: a server is stdio (`command`) or remote (`url`), never both, never neither. Runs even when
 * the object has unknown keys (zod's default for non-aborting issues), so all problems are listed.
 */
function checkTransportKeys(server: ServerLike, ctx: z.RefinementCtx, urlKeys: readonly string[]): void {
  const urlKey = urlKeys.find((key) => server[key] !== undefined);
  const hasCommand = server.command !== undefined;
  if (hasCommand && urlKey !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [urlKey],
      message: `a server has either "command" (local stdio server) or "${urlKey}" (remote server), not both: remove one`,
    });
    return;
  }
  if (!hasCommand && urlKey === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'server has no transport: add "command" (local stdio server) or "url" (remote server)',
      // Lets the loader drop this issue when an unknown key (a typo of command/url) explains it.
      params: { noTransport: true },
    });
    return;
  }
  const misplaced = hasCommand ? REMOTE_ONLY : STDIO_ONLY;
  for (const key of misplaced) {
    if (server[key] === undefined) continue;
    ctx.addIssue({
      code: 'custom',
      path: [key],
      message: hasCommand
        ? `"${key}" applies only to remote servers (with "url"): remove it`
        : `"${key}" applies only to stdio servers (with "command"): remove it`,
    });
  }
}

/** One downstream server as written under `servers:` or in a `servers_dir` file (C3). */
export const ServerSchema = z
  .strictObject(serverShape)
  .partial()
  .superRefine((server, ctx) => checkTransportKeys(server, ctx, ['url']))
  .describe('One downstream MCP server: `command` (stdio) or `url` (remote), plus per-server settings.')
  // A named definition: a servers_dir file points its editor at schema.json#/definitions/server.
  .meta({ id: 'server' });

/**
 * A Claude-Desktop-style `mcpServers` entry (C2), as written by Claude Desktop, Cursor, Windsurf,
 * Cline and VS Code. Loose on purpose: keys other clients add (`autoApprove`, `alwaysAllow`, ...)
 * are ignored with a warning (rules.ts) so that an existing file works unchanged.
 */
/** The keys of a `mcpServers` entry: every key of ours, plus the spellings of other clients. */
const mcpEntryShape = {
  ...serverShape,
  serverUrl: serverShape.url.describe('Remote server URL (Windsurf spelling of `url`).'),
  type: z
    .enum(['stdio', 'http', 'streamable-http', 'streamableHttp', 'sse'])
    .describe('Transport as other clients write it: stdio, http / streamable-http, or sse.'),
  disabled: z.boolean().describe('true keeps the server configured but not started (Cline, Roo).'),
};

/**
 * C5: the keys of a `mcpServers` entry that we read, derived from the schema (a list kept by hand
 * forgot `protocol`: applied, and reported as ignored); any other key is another client's.
 */
export const MCP_ENTRY_KEYS: ReadonlySet<string> = new Set(Object.keys(mcpEntryShape));

export const McpServerEntrySchema = z
  .looseObject(mcpEntryShape)
  .partial()
  .superRefine((server, ctx) => {
    checkTransportKeys(server, ctx, ['url', 'serverUrl']);
    if (server.type === 'stdio' && server.command === undefined) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: '"type: stdio" needs "command"' });
    }
    if (server.type !== undefined && server.type !== 'stdio' && server.transport !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['transport'], message: 'set "type" or "transport", not both' });
    }
  })
  .describe('A Claude-Desktop-style server entry: {command, args, env} or {url | serverUrl, type, headers}.');

/** Per-server values applied to every server that does not set its own (C6). */
export const DefaultsSchema = z
  .strictObject(
    Object.fromEntries(
      Object.entries(DEFAULTABLE).map(([key, { schema, help }]) => {
        const value: unknown = SERVER_DEFAULTS[key as keyof Defaultable];
        // A fresh copy of an array default each time (zod would hand out the same array).
        const fallback = Array.isArray(value) ? () => [...(value as unknown[])] : value;
        return [key, (schema as z.ZodType).default(fallback as never).describe(help)];
      }),
    ) as {
      [K in keyof Defaultable]: z.ZodDefault<Defaultable[K]['schema']>;
    },
  )
  .prefault({})
  .describe('Apply to every server unless it sets its own.');
