/**
 * The written configuration: ONE zod schema for what a user types in YAML or JSON (C1, C3, C6).
 *
 * Keys are snake_case exactly as in CONTRACT C6. Objects are strict, so an unknown key is an error
 * with a "did you mean" (C5). Every key is `.describe()`d: the descriptions flow into
 * config/schema.json (`npm run schema`), which editors use for completion and hover help.
 *
 * Per-server keys carry no zod default on purpose: `normalize.ts` must see whether a server set a
 * key itself, so that the `defaults:` block applies only where it did not.
 */
import { z } from 'zod';
import { ERROR_TYPES } from '../core/result.js';

/** Argument keys redacted in trace logs unless `redact_keys` says otherwise (L1). */
export const DEFAULT_REDACT_KEYS = [
  'password',
  'token',
  'secret',
  'api_key',
  'apikey',
  'authorization',
  'access_token',
] as const;

/** Host names accepted by `serve --http` unless `http.allowed_hosts` says otherwise (U2). */
export const DEFAULT_ALLOWED_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

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
  inband_errors: true,
  protocol: 'auto',
  client_features: ['elicitation', 'sampling'],
  isolate_callers: false,
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
const protocolSchema = z.enum(PROTOCOL_MODES);

const positiveInt = z.number().int().min(1);
const nonNegativeInt = z.number().int().min(0);
const stringMap = z.record(z.string(), z.string());

/** R4: agent instructions per error type; keys must be R3 error types. */
export const InstructionsSchema = z
  .partialRecord(z.enum(ERROR_TYPES), z.string().min(1))
  .describe(
    `Agent instruction per error type (R4), e.g. { timeout: "Retry at most once." }. Keys: ${ERROR_TYPES.join(', ')}.`,
  );

const exposeSchema = z.enum(['all', 'read_only', 'search']);

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
  prefix: z
    .string()
    .describe('Server prefix of exposed names (T1); default: the server key; "" exposes names unprefixed.'),
  enabled: z.boolean().describe('false keeps the server configured but not started. Default: true.'),
  timeout_ms: positiveInt.describe('Per-call timeout in ms (P3). Default: defaults.timeout_ms (60000).'),
  startup_timeout_ms: positiveInt.describe(
    'Time for spawn, handshake and first tool listing, apart from timeout_ms (P1). Default: defaults.startup_timeout_ms (120000).',
  ),
  concurrency: positiveInt.describe('Calls in flight at most (P2). Default: defaults.concurrency (8).'),
  max_queue: nonNegativeInt.describe(
    'Calls waiting at most before `overloaded` (P2). Default: defaults.max_queue (256).',
  ),
  withhold_after_ms: nonNegativeInt.describe(
    'A server down this long has its tools withheld (P4). Default: defaults.withhold_after_ms (300000).',
  ),
  tools: ToolsSchema,
  instructions: InstructionsSchema.describe('Agent instruction per error type for this server (R4).'),
  inband_errors: z
    .boolean()
    .describe('N8: recognise in-band error conventions. Default: defaults.inband_errors (true).'),
  protocol: protocolSchema.describe(
    'E5: the protocol era spoken to this server: auto (probe with server/discover, fall back to initialize), legacy (2025 initialize, no probe) or "2026-07-28" (modern only). Default: defaults.protocol (auto).',
  ),
  expose: exposeSchema.describe(
    'T11: all, or read_only (only tools annotated readOnlyHint); S1: search (not listed; found with search_tools, run with call_tool). Default: global expose.',
  ),
  client_features: clientFeaturesSchema.describe(
    'Q2: what this server may ask its client for (elicitation, sampling, roots), forwarded to the caller behind the call when that caller has it. Default: defaults.client_features ([elicitation, sampling]).',
  ),
  isolate_callers: z
    .boolean()
    .describe(
      'Q1: calls from different upstream clients never overlap on this server, so every request it sends to its client has one possible owner. Default: defaults.isolate_callers (false).',
    ),
};

type ServerLike = { command?: string; url?: string; serverUrl?: string; [key: string]: unknown };

const STDIO_ONLY = ['args', 'env', 'cwd', 'max_message_bytes'] as const;
const REMOTE_ONLY = ['transport', 'headers'] as const;

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
export const McpServerEntrySchema = z
  .looseObject({
    ...serverShape,
    serverUrl: serverShape.url.describe('Remote server URL (Windsurf spelling of `url`).'),
    type: z
      .enum(['stdio', 'http', 'streamable-http', 'streamableHttp', 'sse'])
      .describe('Transport as other clients write it: stdio, http / streamable-http, or sse.'),
    disabled: z.boolean().describe('true keeps the server configured but not started (Cline, Roo).'),
  })
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
  .strictObject({
    timeout_ms: positiveInt.default(SERVER_DEFAULTS.timeout_ms).describe('Per-call timeout in ms (P3).'),
    startup_timeout_ms: positiveInt
      .default(SERVER_DEFAULTS.startup_timeout_ms)
      .describe('Time for spawn, handshake and first tool listing (P1).'),
    concurrency: positiveInt
      .default(SERVER_DEFAULTS.concurrency)
      .describe('Calls in flight per server (P2).'),
    max_queue: nonNegativeInt
      .default(SERVER_DEFAULTS.max_queue)
      .describe('Calls waiting per server before `overloaded` (P2).'),
    withhold_after_ms: nonNegativeInt
      .default(SERVER_DEFAULTS.withhold_after_ms)
      .describe('A server down this long has its tools withheld (P4).'),
    inband_errors: z
      .boolean()
      .default(SERVER_DEFAULTS.inband_errors)
      .describe('N8: recognise in-band error conventions.'),
    protocol: protocolSchema
      .default(SERVER_DEFAULTS.protocol)
      .describe('E5: the protocol era spoken to each server: auto, legacy or "2026-07-28".'),
    client_features: clientFeaturesSchema
      .default([...SERVER_DEFAULTS.client_features])
      .describe('Q2: what each server may ask its client for (elicitation, sampling, roots).'),
    isolate_callers: z
      .boolean()
      .default(SERVER_DEFAULTS.isolate_callers)
      .describe('Q1: calls from different upstream clients never overlap on one server.'),
  })
  .prefault({})
  .describe('Apply to every server unless it sets its own.');

/** Output settings (F1–F5, N9, T6). */
export const OutputSchema = z
  .strictObject({
    format: z
      .enum(['results', 'result', 'response'])
      .default('results')
      .describe('Envelope: results (Tool Output Contract), result (ADR-003) or response (ADR-002).'),
    media: z
      .enum(['artifacts', 'passthrough'])
      .default('artifacts')
      .describe(
        'artifacts: images/audio/blobs as file fields; passthrough: also keep the original blocks (F5).',
      ),
    max_inline_bytes: positiveInt
      .default(65_536)
      .describe('A value whose JSON is larger moves into a JSON file artifact (N9).'),
    describe_arguments: z
      .boolean()
      .default(false)
      .describe("Append a markdown list of the arguments to each tool's description (T6)."),
    text: z
      .enum(['json', 'toon'])
      .default('json')
      .describe(
        'F6: the text block the model reads: json, or toon (Token-Oriented Object Notation) where it is shorter than the JSON; structuredContent stays the JSON envelope either way.',
      ),
    files: z
      .enum(['inline', 'resource'])
      .default('inline')
      .describe(
        'F7: inline (file bodies as base64 in returned_file_contents) or resource (bodies kept by the gateway for output.file_store.ttl_ms, the envelope lists a resource_link per file, read with resources/read).',
      ),
    file_store: z
      .strictObject({
        max_bytes: positiveInt
          .default(268_435_456)
          .describe('F7: most decoded file bytes kept at once; the oldest files go first.'),
        ttl_ms: positiveInt.default(600_000).describe('F7: how long a kept file can be read.'),
      })
      .prefault({})
      .describe('F7: the store of output.files: resource.'),
    advertise_schema: z
      .boolean()
      .default(false)
      .describe(
        "T6: give every exposed tool the envelope's outputSchema (typed by the tool's own, T14). Off by default: it was 69% of each tool's bytes in tools/list.",
      ),
  })
  .prefault({})
  .describe('How results are rendered to upstream clients.');

/** Q3: the `input_required` rounds the gateway runs for requests from a downstream. */
export const InputRequiredSchema = z
  .strictObject({
    state_key: z
      .string()
      .min(32, { message: 'expected at least 32 characters' })
      .optional()
      .describe(
        'Q3: HMAC key of the requestState the gateway hands to hosts (at least 32 characters). Replicas behind one load balancer must share it: use ${VAR}. Default: a random key per process.',
      ),
    round_timeout_ms: positiveInt
      .default(300_000)
      .describe(
        'Q3: how long a call waits for its host to answer one round of requests (a form, a completion) before it fails.',
      ),
    max_rounds: positiveInt
      .default(10)
      .describe('Q3: the most input rounds one call may take; one more fails the call.'),
  })
  .prefault({})
  .describe(
    'Requests from a downstream to its client (elicitation, sampling, roots), relayed as input rounds.',
  );

/** `serve --http` settings (U1, U2). */
export const HttpSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1').describe('Interface to listen on.'),
    port: z
      .number()
      .int()
      .min(0)
      .max(65_535)
      .default(3333)
      .describe('TCP port; 0 picks a free (ephemeral) port.'),
    token: z
      .string()
      .optional()
      .describe(
        'Bearer token required on every request; empty or absent: none. Use ${VAR} to keep it out of the file.',
      ),
    allowed_hosts: z
      .array(z.string().min(1))
      .default([...DEFAULT_ALLOWED_HOSTS])
      .describe('Host names accepted in Host/Origin headers, compared without the port (U2).'),
    session_idle_ms: z
      .number()
      .int()
      .min(0)
      .default(1_800_000)
      .describe(
        'Our addition: an MCP session with no request open (no call, no GET stream) for this long is closed, as if the client had sent DELETE; its id then gets 404 and the client initializes again. 0: never.',
      ),
    legacy: z
      .enum(['sessions', 'stateless'])
      .default('sessions')
      .describe(
        '2025-era clients: sessions (pushed notifications, the GET stream, input rounds; behind a load balancer a session must reach its replica, see replica_id) or stateless (no session: any replica answers, nothing is pushed).',
      ),
    replica_id: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{0,63}$/, { message: 'expected up to 63 of A-Z a-z 0-9 _ . -' })
      .optional()
      .describe(
        "This replica's name, put in front of every 2025 session id (`<replica_id>.<uuid>`), so that a load balancer can send a session's requests to the replica that holds it. Use ${HOSTNAME} in Kubernetes; empty: none.",
      ),
    max_sessions: z
      .number()
      .int()
      .min(1)
      .default(1000)
      .describe(
        'Most 2025-era MCP sessions open at once. A new one beyond it closes the session idle the longest; when every session has a request open, the new initialize is refused with 503.',
      ),
  })
  .prefault({})
  .describe('Used by `serve --http`.');

/** The whole written configuration file (C6). */
export const ConfigSchema = z
  .strictObject({
    $schema: z.string().optional().describe('JSON Schema of this file, for editors (JSON configs).'),
    prefix: z
      .string()
      .optional()
      .describe('Global prefix of every exposed name (T1). Default: env MCP_TOOL_PREFIX, else none.'),
    separator: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,8}$/, { message: 'expected 1 to 8 of A-Z a-z 0-9 _ -' })
      .default('_')
      .describe('Joins prefixes and tool names (T1).'),
    name_max_length: z
      .number()
      .int()
      .min(16)
      .max(128)
      .default(64)
      .describe('Longest exposed name; longer ones are cut and end in a short hash (T2).'),
    servers_dir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Folder with one <key>.yaml (or .yml/.json) per server; relative to this file's folder (C2).",
      ),
    log_level: z
      .enum(['trace', 'debug', 'info', 'warn', 'error'])
      .default('info')
      .describe('Log level on stderr (L1).'),
    output: OutputSchema,
    explicit_destructive: z
      .boolean()
      .default(true)
      .describe('T7: destructive tools require an explicit_action argument.'),
    strict_arguments: z
      .boolean()
      .default(false)
      .describe('T8: reject arguments the inputSchema does not declare.'),
    list_wait_ms: z
      .number()
      .int()
      .min(0)
      .max(120_000)
      .default(1000)
      .describe(
        'P1: in the first this many ms after start, a tools/prompts/resources list waits for servers still starting (a host that lists once gets them in one answer); later, lists answer at once with what is ready and list_changed follows. server/discover and initialize never wait.',
      ),
    expose: exposeSchema
      .default('all')
      .describe(
        'T11: all, or read_only (only tools annotated readOnlyHint); S1: search (tools are not listed, the upstream sees search_tools and call_tool).',
      ),
    instructions: InstructionsSchema.optional(),
    defaults: DefaultsSchema,
    input_required: InputRequiredSchema,
    http: HttpSchema,
    redact_keys: z
      .array(z.string().min(1))
      .default([...DEFAULT_REDACT_KEYS])
      .describe(
        'Our addition (L1): argument keys whose values are replaced by [REDACTED] in trace logs (case-insensitive, any depth up to 3).',
      ),
    servers: z
      .record(z.string().min(1), ServerSchema)
      .nullable()
      .optional()
      .describe('Downstream servers by key; the key is the default prefix (C2, C3).'),
    mcpServers: z
      .record(z.string().min(1), McpServerEntrySchema)
      .optional()
      .describe('Claude-Desktop-style servers (C2): existing mcpServers files work unchanged.'),
  })
  .describe('mcp-normalizer configuration (reference: docs/configuration.md).');

/** The written config after validation (zod output: top-level defaults applied). */
export type WrittenConfig = z.infer<typeof ConfigSchema>;
/** One server as written (no defaults applied). */
export type WrittenServer = z.infer<typeof ServerSchema>;
/** One Claude-Desktop-style `mcpServers` entry. */
export type WrittenMcpServer = z.infer<typeof McpServerEntrySchema>;
/** Per-tool overrides as written. */
export type WrittenToolOverride = z.infer<typeof ToolOverrideSchema>;
