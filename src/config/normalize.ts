/**
 * WrittenConfig → Config: apply every default, resolve prefixes, map Claude-Desktop entries (C2).
 *
 * Runs only on a config that validated and passed the rules, so it never reports problems.
 */
import os from 'node:os';
import path from 'node:path';
import type {
  DownstreamAuthConfig,
  MachineAuthConfig,
  TokenSource,
  Config,
  InstructionMap,
  ServerConfig,
  ToolOverride,
  ToolsConfig,
  TransportConfig,
} from './types.js';
import { credentialValues, type EnvMap } from './interpolate.js';
import { locate, type KeyPath, type ParsedFile } from './locate.js';
import {
  MAX_STDIO_MESSAGE_BYTES,
  type WrittenConfig,
  type WrittenMcpServer,
  type WrittenServer,
  type WrittenToolOverride,
} from './schema.js';

/** Where a server was written: `servers:`, `mcpServers:` (C2), or its own `servers_dir` file. */
export type ServerSection = 'servers' | 'mcpServers' | 'servers_dir';

/** One server as written, with where it came from; config order is the order of these entries. */
export interface ServerEntry {
  /** The server key (the file name without extension for `servers_dir`). */
  readonly name: string;
  readonly section: ServerSection;
  readonly server: WrittenServer | WrittenMcpServer;
  /** The file it is written in. */
  readonly parsed: ParsedFile;
  /** Its path in that file: `['servers', name]`, `['mcpServers', name]`, or `[]`. */
  readonly path: KeyPath;
}

/** Inputs of {@link normalizeConfig} besides the written config. */
export interface NormalizeContext {
  readonly file: string;
  readonly env: EnvMap;
  /** L2: env values in credential positions (config/interpolate.ts). */
  readonly secrets: readonly string[];
  /** L2: every env value substituted (logs scrub them all). */
  readonly values?: readonly string[];
}

/**
 * The servers of a validated main file, in written order: `servers:` then `mcpServers:`.
 * `servers_dir` entries are appended by the loader, sorted by file name (C2).
 */
export function mainFileEntries(written: WrittenConfig, parsed: ParsedFile): ServerEntry[] {
  const entries: ServerEntry[] = [];
  for (const [name, server] of Object.entries(written.servers ?? {})) {
    entries.push({ name, section: 'servers', server, parsed, path: ['servers', name] });
  }
  for (const [name, server] of Object.entries(written.mcpServers ?? {})) {
    entries.push({ name, section: 'mcpServers', server, parsed, path: ['mcpServers', name] });
  }
  return entries;
}

function isMcpEntry(entry: ServerEntry): boolean {
  return entry.section === 'mcpServers';
}

/**
 * K1: the state folder: `state_dir` (relative to the config file's folder), else
 * `$XDG_STATE_HOME/mcp-normalizer`, else `~/.local/state/mcp-normalizer`.
 */
export function stateDirPath(written: string | undefined, folder: string, env: EnvMap): string {
  if (written !== undefined) return path.resolve(folder, written);
  // XDG Base Directory: a relative (or empty) $XDG_STATE_HOME is invalid and ignored (issue 55:
  // it wrote the state folder into the working directory); $HOME likewise.
  const xdg = env['XDG_STATE_HOME'];
  const home = env['HOME'];
  const state =
    xdg !== undefined && path.isAbsolute(xdg)
      ? xdg
      : path.join(home !== undefined && path.isAbsolute(home) ? home : os.homedir(), '.local', 'state');
  return path.join(state, 'mcp-normalizer');
}

/**
 * D2: where `auth: oauth` logins are kept: `token_store` (relative to the config file's folder),
 * else `tokens.json` in the state folder.
 */
export function tokenStorePath(written: string | undefined, folder: string, stateDir: string): string {
  if (written !== undefined) return path.resolve(folder, written);
  return path.join(stateDir, 'tokens.json');
}

/** C3 (+ C2 for `type`/`serverUrl`): the transport of one server. */
function transportOf(
  server: WrittenServer & Partial<WrittenMcpServer>,
  folder: string,
  tokenStore: string,
): TransportConfig {
  if (server.command !== undefined) {
    const stdio: TransportConfig = {
      type: 'stdio',
      command: server.command,
      args: server.args ?? [],
      env: server.env ?? {},
      maxMessageBytes: server.max_message_bytes ?? MAX_STDIO_MESSAGE_BYTES,
    };
    // cwd is relative to the file that declares it, like servers_dir.
    return server.cwd === undefined ? stdio : { ...stdio, cwd: path.resolve(folder, server.cwd) };
  }
  const url = server.url ?? server.serverUrl ?? '';
  const type = server.type === 'sse' || server.transport === 'sse' ? 'sse' : 'streamable-http';
  const auth = server.auth;
  return {
    type,
    url,
    headers: server.headers ?? {},
    ...(auth !== undefined ? { auth: authOf(auth, tokenStore, folder) } : {}),
  };
}

/** D5, D6: a token read at each token request: its file (relative to the config file) or variable. */
function sourceOf(file: string | undefined, env: string | undefined, folder: string): TokenSource {
  return file !== undefined ? { file: path.resolve(folder, file) } : { env: env ?? '' };
}

/** D1, D2, D5, D6: a remote server's `auth`, as the transport reads it. */
function authOf(
  auth: NonNullable<WrittenServer['auth']>,
  tokenStore: string,
  folder: string,
): DownstreamAuthConfig {
  const common = {
    ...(auth.scopes !== undefined ? { scopes: auth.scopes } : {}),
    ...(auth.issuer !== undefined ? { issuer: auth.issuer } : {}),
    ...(auth.dpop !== undefined ? { dpop: auth.dpop } : {}),
  };
  switch (auth.type) {
    case 'client_credentials':
      return {
        type: auth.type,
        clientId: auth.client_id,
        ...common,
        ...(auth.client_secret !== undefined ? { clientSecret: auth.client_secret } : {}),
        ...(auth.private_key !== undefined
          ? { privateKey: { pem: auth.private_key, algorithm: auth.signing_algorithm ?? 'ES256' } }
          : {}),
      };
    case 'jwt_bearer':
      return {
        type: auth.type,
        assertion: sourceOf(auth.assertion_file, auth.assertion_env, folder),
        ...common,
        ...(auth.client_id !== undefined ? { clientId: auth.client_id } : {}),
      };
    case 'id_jag': {
      const { idp } = auth;
      return {
        type: auth.type,
        idp: {
          clientId: idp.client_id,
          ...(idp.token_endpoint !== undefined ? { tokenEndpoint: idp.token_endpoint } : {}),
          ...(idp.issuer !== undefined ? { issuer: idp.issuer } : {}),
          ...(idp.client_secret !== undefined ? { clientSecret: idp.client_secret } : {}),
        },
        idToken: sourceOf(auth.id_token_file, auth.id_token_env, folder),
        clientId: auth.client_id,
        clientSecret: auth.client_secret,
        ...common,
      };
    }
    case 'token_exchange':
      return {
        type: auth.type,
        clientId: auth.client_id,
        clientSecret: auth.client_secret,
        ...common,
        ...(auth.audience !== undefined ? { audience: auth.audience } : {}),
        ...(auth.fallback !== undefined
          ? { fallback: authOf(auth.fallback, tokenStore, folder) as MachineAuthConfig }
          : {}),
      };
    case 'oauth':
      return {
        type: 'oauth',
        tokenStore,
        ...common,
        ...(auth.client_id !== undefined ? { clientId: auth.client_id } : {}),
        ...(auth.client_secret !== undefined ? { clientSecret: auth.client_secret } : {}),
        ...(auth.client_metadata_url !== undefined ? { clientMetadataUrl: auth.client_metadata_url } : {}),
        ...(auth.callback_port !== undefined ? { callbackPort: auth.callback_port } : {}),
      };
  }
}

function toolOverride(written: WrittenToolOverride): ToolOverride {
  const out: { -readonly [K in keyof ToolOverride]: ToolOverride[K] } = {};
  if (written.description !== undefined) out.description = written.description;
  if (written.instruction !== undefined) out.instruction = written.instruction;
  if (written.instructions !== undefined) out.instructions = written.instructions;
  if (written.require_explicit !== undefined) out.requireExplicit = written.require_explicit;
  return out;
}

function toolsOf(server: WrittenServer): ToolsConfig {
  const tools = server.tools ?? {};
  const overrides: Record<string, ToolOverride> = {};
  for (const [name, override] of Object.entries(tools.overrides ?? {}))
    overrides[name] = toolOverride(override);
  return {
    include: tools.include ?? [],
    exclude: tools.exclude ?? [],
    rename: tools.rename ?? {},
    overrides,
    stripPrefix: tools.strip_prefix ?? false,
  };
}

function serverConfig(entry: ServerEntry, written: WrittenConfig, stateDir: string): ServerConfig {
  const server = entry.server as WrittenServer & Partial<WrittenMcpServer>;
  const defaults = written.defaults;
  const disabled = isMcpEntry(entry) && server.disabled === true;
  const where = locate(entry.parsed, entry.path, 'key');
  return {
    name: entry.name,
    // T1: the server's prefix, else its key; "" stays "" (unprefixed).
    prefix: server.prefix ?? entry.name,
    enabled: server.enabled ?? !disabled,
    transport: transportOf(
      server,
      path.dirname(entry.parsed.file),
      tokenStorePath(written.token_store, path.dirname(entry.parsed.file), stateDir),
    ),
    timeoutMs: server.timeout_ms ?? defaults.timeout_ms,
    startupTimeoutMs: server.startup_timeout_ms ?? defaults.startup_timeout_ms,
    concurrency: server.concurrency ?? defaults.concurrency,
    maxQueue: server.max_queue ?? defaults.max_queue,
    withholdAfterMs: server.withhold_after_ms ?? defaults.withhold_after_ms,
    healthIntervalMs: server.health_interval_ms ?? defaults.health_interval_ms,
    inbandErrors: server.inband_errors ?? defaults.inband_errors,
    protocol: server.protocol ?? defaults.protocol,
    clientFeatures: server.client_features ?? defaults.client_features,
    isolateCallers: server.isolate_callers ?? defaults.isolate_callers,
    instances: {
      mode: server.instances ?? defaults.instances,
      max: server.max_instances ?? defaults.max_instances,
      idleMs: server.instance_idle_ms ?? defaults.instance_idle_ms,
    },
    expose: server.expose ?? written.expose,
    instructions: (server.instructions ?? {}) as InstructionMap,
    tools: toolsOf(server),
    source: { file: entry.parsed.file, ...where },
  };
}

/** The password (and user) in a store URL, decoded: secrets (L2). */
function storePassword(url: string | undefined): string[] {
  if (url === undefined) return [];
  try {
    const parsed = new URL(url);
    return parsed.password === '' ? [] : [decodeURIComponent(parsed.password)];
  } catch {
    return [];
  }
}

/**
 * The runtime Config: defaults applied, servers in config order (main file first, as written,
 * then `servers_dir` files by name).
 */
export function normalizeConfig(
  written: WrittenConfig,
  entries: readonly ServerEntry[],
  context: NormalizeContext,
): Config {
  // T1: config `prefix`, else env MCP_TOOL_PREFIX, else none; an empty value means none.
  const globalPrefix = written.prefix ?? context.env['MCP_TOOL_PREFIX'];
  const token = written.http.token;
  const auth = written.http.auth;
  const stateKey = written.input_required.state_key;
  const stateDir = stateDirPath(written.state_dir, path.dirname(context.file), context.env);
  // L2: the state key and static tokens are secrets even when written literally.
  const secrets = [
    ...new Set([
      ...context.secrets,
      ...(stateKey !== undefined ? [stateKey] : []),
      ...Object.values(auth?.tokens ?? {}).map((entry) => entry.token),
      ...(auth?.introspection !== undefined ? [auth.introspection.client_secret] : []),
      ...(auth?.login_client?.client_secret !== undefined ? [auth.login_client.client_secret] : []),
      // The store's password, also when it is written in its URL.
      ...storePassword(written.store?.url),
      // D1: downstream client secrets and signing keys.
      ...entries.flatMap((entry) => {
        const auth = (
          entry.server as {
            auth?: {
              client_secret?: string;
              private_key?: string;
              idp?: { client_secret?: string };
              fallback?: { client_secret?: string; private_key?: string; idp?: { client_secret?: string } };
            };
          }
        ).auth;
        return [auth, auth?.fallback]
          .flatMap((grant) => [grant?.client_secret, grant?.private_key, grant?.idp?.client_secret])
          .filter((value) => value !== undefined);
      }),
      // L2: headers, credential env entries and URL credentials, written literally too.
      ...entries.flatMap((entry) => credentialValues(entry.server)),
    ]),
  ];
  const config: Config = {
    separator: written.separator,
    nameMaxLength: written.name_max_length,
    logLevel: written.log_level,
    output: {
      format: written.output.format,
      media: written.output.media,
      maxInlineBytes: written.output.max_inline_bytes,
      describeArguments: written.output.describe_arguments,
      advertiseSchema: written.output.advertise_schema,
      text: written.output.text,
      files: written.output.files,
      fileStore: {
        maxBytes: written.output.file_store.max_bytes,
        ttlMs: written.output.file_store.ttl_ms,
      },
    },
    explicitDestructive: written.explicit_destructive,
    strictArguments: written.strict_arguments,
    listWaitMs: written.list_wait_ms,
    stateDir,
    pinning: written.pinning,
    expose: written.expose,
    instructions: (written.instructions ?? {}) as InstructionMap,
    http: {
      host: written.http.host,
      port: written.http.port,
      // `token: ${MCP_NORMALIZER_TOKEN:-}` interpolates to "": no token required.
      ...(token !== undefined && token !== '' ? { token } : {}),
      allowedHosts: written.http.allowed_hosts,
      sessionIdleMs: written.http.session_idle_ms,
      maxSessions: written.http.max_sessions,
      legacy: written.http.legacy,
      ...(written.http.replica_id !== undefined && written.http.replica_id !== ''
        ? { replicaId: written.http.replica_id }
        : {}),
      ...(written.http.public_url !== undefined
        ? { publicUrl: written.http.public_url.replace(/\/+$/, '') }
        : {}),
      ...(auth !== undefined
        ? {
            auth: {
              ...(auth.issuer !== undefined ? { issuer: auth.issuer } : {}),
              ...(auth.audience !== undefined ? { audience: auth.audience } : {}),
              ...(auth.jwks_uri !== undefined ? { jwksUri: auth.jwks_uri } : {}),
              ...(auth.introspection !== undefined
                ? {
                    introspection: {
                      clientId: auth.introspection.client_id,
                      clientSecret: auth.introspection.client_secret,
                      ...(auth.introspection.endpoint !== undefined
                        ? { endpoint: auth.introspection.endpoint }
                        : {}),
                      cacheSeconds: auth.introspection.cache_s,
                    },
                  }
                : {}),
              requiredScopes: auth.required_scopes,
              groupsClaim: auth.groups_claim,
              clockSkewSeconds: auth.clock_skew_s,
              admins: auth.admins,
              tokens: auth.tokens,
              ...(auth.login_client !== undefined
                ? {
                    loginClient: {
                      clientId: auth.login_client.client_id,
                      ...(auth.login_client.client_secret !== undefined
                        ? { clientSecret: auth.login_client.client_secret }
                        : {}),
                    },
                  }
                : {}),
            },
          }
        : {}),
    },
    statusPage: written.status_page,
    profiles: written.profiles ?? {},
    ...(written.access !== undefined ? { access: written.access } : {}),
    ...(written.store !== undefined ? { store: { url: written.store.url } } : {}),
    ...(written.rate_limits !== undefined
      ? {
          rateLimits: written.rate_limits.map((rule) => ({
            principals: rule.principals,
            tools: rule.tools,
            calls: rule.calls,
            perS: rule.per_s,
          })),
        }
      : {}),
    inputRequired: {
      ...(stateKey !== undefined ? { stateKey } : {}),
      roundTimeoutMs: written.input_required.round_timeout_ms,
      maxRounds: written.input_required.max_rounds,
    },
    servers: entries.map((entry) => serverConfig(entry, written, stateDir)),
    redactKeys: written.redact_keys,
    secrets,
    // L2: logs scrub every env value substituted too (a path included), as the shared L2 says.
    logSecrets: [...new Set([...secrets, ...(context.values ?? [])])],
    file: context.file,
  };
  return globalPrefix !== undefined && globalPrefix !== '' ? { ...config, prefix: globalPrefix } : config;
}
