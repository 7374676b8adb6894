/**
 * The written configuration: ONE zod schema for what a user types in YAML or JSON (C1, C3, C6).
 *
 * Keys are snake_case exactly as in CONTRACT C6. Objects are strict, so an unknown key is an error
 * with a "did you mean" (C5). Every key is `.describe()`d: the descriptions flow into
 * config/schema.json (`npm run schema`), which editors use for completion and hover help.
 *
 * The keys of one server live in `server-schema.ts`.
 */
import {
  FILE_MODES,
  LEGACY_MODES,
  LOG_LEVELS,
  MEDIA_MODES,
  OUTPUT_FORMATS,
  TEXT_MODES,
} from '../core/options.js';
import { z } from 'zod';
import { AccessRuleSchema, RateLimitSchema, AuthSchema } from './identity-schema.js';
import {
  DefaultsSchema,
  exposeSchema,
  InstructionsSchema,
  McpServerEntrySchema,
  positiveInt,
  ServerSchema,
  ToolOverrideSchema,
} from './server-schema.js';

export {
  CLIENT_FEATURES,
  DefaultsSchema,
  InstructionsSchema,
  MAX_STDIO_MESSAGE_BYTES,
  MCP_ENTRY_KEYS,
  McpServerEntrySchema,
  PROTOCOL_MODES,
  SERVER_DEFAULTS,
  ServerSchema,
  ToolOverrideSchema,
  ToolsSchema,
} from './server-schema.js';

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

/** Output settings (F1–F5, N9, T6). */
export const OutputSchema = z
  .strictObject({
    format: z
      .enum(OUTPUT_FORMATS)
      .default('results')
      .describe('Envelope: results (Tool Output Contract), result (ADR-003) or response (ADR-002).'),
    media: z
      .enum(MEDIA_MODES)
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
      .enum(TEXT_MODES)
      .default('json')
      .describe(
        'F6: the text block the model reads: json, or toon (Token-Oriented Object Notation) where it is shorter than the JSON; structuredContent stays the JSON envelope either way.',
      ),
    files: z
      .enum(FILE_MODES)
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
    public_url: z
      .url()
      .optional()
      .describe(
        'I1: the canonical URL of the gateway; the OAuth resource is <public_url>/mcp. Default: the URL served.',
      ),
    auth: AuthSchema.optional(),
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
      .enum(LEGACY_MODES)
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
    log_level: z.enum(LOG_LEVELS).default('info').describe('Log level on stderr (L1).'),
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
      .default(8000)
      .describe(
        "P1, K2: until this many ms after the gateway's process started, a tools/prompts/resources list waits for servers still starting that it remembers no catalog of (a host that lists once gets them in one answer); a remembered server is listed from memory at once. Later, lists answer at once with what is ready and list_changed follows. server/discover, initialize and ping never wait.",
      ),
    expose: exposeSchema
      .default('all')
      .describe(
        'T11: all, or read_only (only tools annotated readOnlyHint); S1: search (tools are not listed, the upstream sees search_tools and call_tool); M1: code (search_tools, call_tool and run_code, which runs a snippet calling the tools).',
      ),
    instructions: InstructionsSchema.optional(),
    defaults: DefaultsSchema,
    input_required: InputRequiredSchema,
    http: HttpSchema,
    token_store: z
      .string()
      .min(1)
      .optional()
      .describe(
        'D2: the file that keeps `auth: oauth` logins (mode 0600), relative to this file. Default: tokens.json in the state folder (state_dir).',
      ),
    state_dir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "K1: the folder of what the gateway remembers (each server's last catalog, pinned definitions, logins), relative to this file. Default: $XDG_STATE_HOME/mcp-normalizer, else ~/.local/state/mcp-normalizer.",
      ),
    pinning: z
      .enum(['warn', 'hold', 'off'])
      .default('warn')
      .describe(
        'K3: a tool or prompt definition that changed since it was pinned: warn (served, logged and shown as definition_changed), hold (withheld, with the new tools of a pinned server, until `mcp-normalizer pins approve`), off.',
      ),
    status_page: z
      .boolean()
      .default(true)
      .describe('O4: the status page at / and /status, and its records of recent calls; false: neither.'),
    profiles: z
      .record(
        z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'expected 1 to 64 of A-Z a-z 0-9 _ -' }),
        z.strictObject({
          tools: z
            .array(z.string().min(1))
            .min(1)
            .describe('Globs over exposed tool names this profile serves; `!glob` excludes.'),
          prompts: z
            .array(z.string().min(1))
            .optional()
            .describe(
              'Globs over exposed prompt names this profile serves; `!glob` excludes. Default: the tools globs.',
            ),
          resources: z
            .array(z.string().min(1))
            .optional()
            .describe(
              'Globs over exposed resource and template URIs this profile serves (`*`: any run of characters); `!glob` excludes. Default: none.',
            ),
          expose: exposeSchema
            .optional()
            .describe(
              "This profile's own expose mode: all (every tool of the view listed), read_only (only readOnlyHint tools), search (only search_tools and call_tool, over the view's tools), code (those and run_code). Default: as the catalog lists them.",
            ),
          output: z
            .strictObject({
              format: z
                .enum(OUTPUT_FORMATS)
                .describe("This profile's envelope (F1): results, result or response."),
            })
            .optional()
            .describe("This profile's own output settings; the rest are output:'s."),
        }),
      )
      .optional()
      .describe('I6: named views of the catalog, served at /mcp/<name> and by serve --profile <name>.'),
    store: z
      .strictObject({
        url: z
          .string()
          .regex(/^rediss?:\/\/\S+$/, { message: 'expected a redis:// or rediss:// URL' })
          .describe('The Redis server (a password through ${VAR}: it is scrubbed from every output).'),
      })
      .optional()
      .describe(
        'Issue 48: state the replicas share, in Redis: the rate-limit counts (I7), the remembered catalogs and pins (K1–K4), the file links of principals (F7). Absent: each process keeps its own.',
      ),
    rate_limits: z
      .array(RateLimitSchema)
      .optional()
      .describe(
        'I7: calls per caller: every rule a call matches (its principal, its tool) counts it, per principal, in fixed windows of per_s seconds; a call over a limit fails with rate_limited and the wait.',
      ),
    access: z
      .array(AccessRuleSchema)
      .optional()
      .describe(
        'I3: ordered rules, first match wins, no match means no access. Absent: every caller may see and call every tool.',
      ),
    redact_keys: z
      .array(z.string().min(1))
      .default([...DEFAULT_REDACT_KEYS])
      .describe(
        'Our addition (L1): argument keys whose values are replaced by [REDACTED] in trace logs (case-insensitive, any depth up to 3).',
      ),
    secret_env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits, _'))
      .optional()
      .describe(
        'Our addition (L2): environment variables whose values are secrets wherever a ${VAR} puts them, besides those in credential positions (headers, auth, tokens, env entries named like KEY, TOKEN, SECRET or PASSWORD, URL credentials and query secrets).',
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
  .superRefine((config, ctx) => {
    // I6: an advertised envelope schema is of one format: a profile cannot answer in another.
    for (const [name, profile] of Object.entries(config.profiles ?? {})) {
      const format = profile.output?.format;
      if (config.output.advertise_schema && format !== undefined && format !== config.output.format)
        ctx.addIssue({
          code: 'custom',
          path: ['profiles', name, 'output', 'format'],
          message: `"${format}" differs from output.format "${config.output.format}", whose envelope schema every tool advertises (output.advertise_schema: true); drop one of them`,
        });
    }
    // I6: a rule's profiles must be the config's own.
    const known = Object.keys(config.profiles ?? {});
    config.access?.forEach((rule, index) => {
      rule.profiles?.forEach((profile, at) => {
        if (known.includes(profile)) return;
        ctx.addIssue({
          code: 'custom',
          path: ['access', index, 'profiles', at],
          message: `unknown profile "${profile}": ${known.length > 0 ? `profiles: has ${known.join(', ')}` : 'the config has no profiles:'}`,
        });
      });
    });
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
