/**
 * The runtime configuration: what the code uses, after the written YAML/JSON (`WrittenConfig`,
 * snake_case, derived from the zod schema in `schema.ts`) has been interpolated, validated and
 * normalized (`normalize.ts`). Every default is applied here, so no consumer re-derives one.
 */
import type {
  ExposeMode,
  FileMode,
  LegacyMode,
  LogLevel,
  MediaMode,
  OutputFormat,
  TextMode,
} from '../core/options.js';
import type { ErrorType } from '../core/result.js';
import type { AccessRule, ProfileGlobs } from '../core/policy.js';
import type { PinningMode } from '../core/pins.js';
import type { RateLimitRule } from '../core/rate-limits.js';

export type { RateLimitRule } from '../core/rate-limits.js';

/** The envelope an upstream client receives (F1–F3). */
export type { OutputFormat } from '../core/options.js';

/** How images, audio and blobs travel (F5). */
export type { MediaMode } from '../core/options.js';

/** pino level names accepted by `log_level`. */
export type { LogLevel } from '../core/options.js';

/** Which tools are listed upstream (T11), or found by search (S1). */
export type { ExposeMode } from '../core/options.js';

/** Agent instructions per error type (R4). */
export type InstructionMap = Readonly<Partial<Record<ErrorType, string>>>;

/** A child process speaking MCP over stdio (C3). */
export interface StdioTransportConfig {
  readonly type: 'stdio';
  readonly command: string;
  readonly args: readonly string[];
  /** Only these variables (plus the SDK's safe default set) reach the child. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The longest message line read from the child. @default 67108864 (64 MiB) */
  readonly maxMessageBytes: number;
}

/** A remote server over Streamable HTTP or legacy SSE (C3). */
export interface RemoteTransportConfig {
  readonly type: 'streamable-http' | 'sse';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** D1: the OAuth login to the server; absent: none (or a static `Authorization` header). */
  readonly auth?: DownstreamAuthConfig;
}

/** D1, D2, D5, D6: `auth` of a remote server. */
export type DownstreamAuthConfig =
  ClientCredentialsConfig | OAuthLoginConfig | JwtBearerConfig | IdJagConfig | TokenExchangeConfig;

/** The grants a connection no caller owns may use (D8's `fallback`). */
export type MachineAuthConfig = ClientCredentialsConfig | JwtBearerConfig | IdJagConfig;

/** D8: each caller's own token exchanged at the server's authorization server (RFC 8693). */
export interface TokenExchangeConfig {
  readonly type: 'token_exchange';
  readonly clientId: string;
  readonly clientSecret: string;
  readonly audience?: string;
  readonly scopes?: readonly string[];
  readonly issuer?: string;
  readonly dpop?: boolean;
  /** The grant of the connection no caller owns (listing, stdio, the CLI). */
  readonly fallback?: MachineAuthConfig;
  /** D8: whose copy this is: set by the pool on a caller's copy, never written in a config. */
  readonly principal?: string;
  /** D8: that caller's current token (set by the pool with `principal`). */
  readonly subjectToken?: () => string | undefined;
}

/** Where a token the gateway reads at each token request comes from (D5, D6). */
export type TokenSource = { readonly file: string } | { readonly env: string };

/** D5: workload identity: a JWT the platform issues is the grant (RFC 7523 §2.1). */
export interface JwtBearerConfig {
  readonly type: 'jwt_bearer';
  readonly assertion: TokenSource;
  readonly clientId?: string;
  readonly scopes?: readonly string[];
  readonly issuer?: string;
  readonly dpop?: boolean;
}

/** D6: enterprise-managed authorization: an ID token exchanged at the IdP for an ID-JAG, traded here. */
export interface IdJagConfig {
  readonly type: 'id_jag';
  readonly idp: {
    readonly tokenEndpoint?: string;
    readonly issuer?: string;
    readonly clientId: string;
    readonly clientSecret?: string;
  };
  readonly idToken: TokenSource;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes?: readonly string[];
  readonly issuer?: string;
  readonly dpop?: boolean;
}

/** D1: the machine-to-machine grant. */
export interface ClientCredentialsConfig {
  readonly type: 'client_credentials';
  readonly clientId: string;
  /** One of the two: a shared secret (client_secret_basic), or a key that signs assertions. */
  readonly clientSecret?: string;
  readonly privateKey?: { readonly pem: string; readonly algorithm: string };
  readonly scopes?: readonly string[];
  readonly issuer?: string;
  /** D7: DPoP-bound tokens. */
  readonly dpop?: boolean;
}

/** D2: a person's login (authorization code with PKCE), its tokens in the token store. */
export interface OAuthLoginConfig {
  readonly type: 'oauth';
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly clientMetadataUrl?: string;
  readonly scopes?: readonly string[];
  readonly issuer?: string;
  readonly callbackPort?: number;
  /** D7: DPoP-bound tokens; the key is kept with the login in the token store. */
  readonly dpop?: boolean;
  /** Where the tokens are kept (`token_store`, else the XDG state folder). */
  readonly tokenStore: string;
  /**
   * D3: whose login a connection uses: set by the pool on a caller's own copy, never written in
   * a config. @default 'local'
   */
  readonly principal?: string;
}

/** How to reach one downstream server. */
export type TransportConfig = StdioTransportConfig | RemoteTransportConfig;

/** Per-tool overrides, keyed by the tool's name after `rename` (T5). */
export interface ToolOverride {
  readonly description?: string;
  /** Instruction attached to the tool's successful results (R4). */
  readonly instruction?: string;
  /** Instructions for the tool's failures, per error type (R4, most specific layer). */
  readonly instructions?: InstructionMap;
  /** T7: gate the tool behind `explicit_action` even without a destructive annotation. */
  readonly requireExplicit?: boolean;
}

/** Tool selection and renaming for one server (T5). */
export interface ToolsConfig {
  /** Glob patterns over the downstream tool names; empty means every tool. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  /** downstream name → new name (before prefixing). */
  readonly rename: Readonly<Record<string, string>>;
  readonly overrides: Readonly<Record<string, ToolOverride>>;
  /** T15: drop the server prefix a tool name already starts with. @default false */
  readonly stripPrefix: boolean;
}

/** Where a setting was written, for messages that point at it (C5). */
export interface SourceLocation {
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
}

/** E5: `auto` (probe, then fall back), `legacy` (2025 handshake only) or a pinned revision. */
export type ProtocolMode = 'auto' | 'legacy' | '2026-07-28';

/** P10: see {@link InstancesConfig}. */
export type InstanceMode = 'shared' | 'per_session';

/** P10: who shares one running copy of a server, how many copies at most, and for how long. */
export interface InstancesConfig {
  /** `shared`: one copy for every caller; `per_session`: a copy per upstream session. */
  readonly mode: InstanceMode;
  /** Most per-session copies at once. @default 16 */
  readonly max: number;
  /** A per-session copy with no call for this long is stopped. @default 600000 */
  readonly idleMs: number;
}

/** One downstream server, with every default applied. */
export interface ServerConfig {
  /** The server's key in the config (or its file name in `servers_dir`). */
  readonly name: string;
  /** The server prefix (T1): its `prefix`, else its key; `""` exposes names unprefixed. */
  readonly prefix: string;
  readonly enabled: boolean;
  readonly transport: TransportConfig;
  /** @default 60000 */
  readonly timeoutMs: number;
  /** P1: spawn, handshake and first tool listing, apart from calls. @default 120000 */
  readonly startupTimeoutMs: number;
  /** @default 8 */
  readonly concurrency: number;
  /** @default 256 */
  readonly maxQueue: number;
  /** @default 300000 */
  readonly withholdAfterMs: number;
  /** O4, P4: a ready remote server is pinged this often (0: never). @default 15000 */
  readonly healthIntervalMs: number;
  /** N8. @default true */
  readonly inbandErrors: boolean;
  /** E5: the era spoken to this server. @default 'auto' */
  readonly protocol: ProtocolMode;
  /** Q2: what this server may ask its client for. @default ['elicitation', 'sampling'] */
  readonly clientFeatures: readonly ClientFeature[];
  /** Q1: calls from different upstream clients never overlap on this server. @default false */
  readonly isolateCallers: boolean;
  /** P7: who shares one running copy of the server. */
  readonly instances: InstancesConfig;
  /** T11, inherited from the global `expose` unless set. */
  readonly expose: ExposeMode;
  /** R4, server layer. */
  readonly instructions: InstructionMap;
  readonly tools: ToolsConfig;
  readonly source: SourceLocation;
}

/** Q2: a request a downstream may send to its client. */
export type ClientFeature = 'elicitation' | 'sampling' | 'roots';

/** Q3: the input rounds run for requests from a downstream. */
export interface InputRequiredConfig {
  /** HMAC key of our requestState; undefined: a random key per process. */
  readonly stateKey?: string;
  /** @default 300000 */
  readonly roundTimeoutMs: number;
  /** @default 10 */
  readonly maxRounds: number;
}

/** `serve --http` settings (U1, U2). */
export interface HttpConfig {
  /** @default '127.0.0.1' */
  readonly host: string;
  /** @default 3333 */
  readonly port: number;
  /** Bearer token required on every request; undefined (or empty in YAML) = none. */
  readonly token?: string;
  /** Host names accepted in `Host`/`Origin` (compared without the port). */
  readonly allowedHosts: readonly string[];
  /** A session with no request open for this long is closed; 0 = never. @default 1800000 */
  readonly sessionIdleMs: number;
  /** Most legacy sessions open at once; the one idle longest is closed for a new one. @default 1000 */
  readonly maxSessions: number;
  /** 2025-era clients: sessions, or stateless (any replica answers). @default 'sessions' */
  readonly legacy: LegacyMode;
  /** Prefix of every session id, for session-aware load balancing; undefined: none. */
  readonly replicaId?: string;
  /** I1: the canonical URL; the resource is `<publicUrl>/mcp`. */
  readonly publicUrl?: string;
  /** I1: the resource server; absent: no identity (loopback or `token` only). */
  readonly auth?: AuthConfig;
}

/** I1: `http.auth.introspection`. */
export interface IntrospectionConfig {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Default: the issuer metadata's `introspection_endpoint`. */
  readonly endpoint?: string;
  readonly cacheSeconds: number;
}

/** I1: `http.auth`. */
export interface AuthConfig {
  readonly issuer?: string;
  readonly audience?: string;
  readonly jwksUri?: string;
  /** I1: RFC 7662 introspection of opaque tokens. */
  readonly introspection?: IntrospectionConfig;
  readonly requiredScopes: readonly string[];
  readonly groupsClaim: string;
  readonly clockSkewSeconds: number;
  /** O4: principal patterns who may read the status page. */
  readonly admins: readonly string[];
  /** D4: the gateway's own client at the issuer (the browser's sign-in before a caller's login). */
  readonly loginClient?: { readonly clientId: string; readonly clientSecret?: string };
  readonly tokens: Readonly<
    Record<
      string,
      { readonly token: string; readonly groups: readonly string[]; readonly scopes: readonly string[] }
    >
  >;
}

/** Output settings (F, N9, T6). */
export interface OutputConfig {
  /** @default 'results' */
  readonly format: OutputFormat;
  /** @default 'artifacts' */
  readonly media: MediaMode;
  /** @default 65536 */
  readonly maxInlineBytes: number;
  /** @default false */
  readonly describeArguments: boolean;
  /** T6: exposed tools carry the envelope's outputSchema. @default false */
  readonly advertiseSchema: boolean;
  /** F6: the text block: the envelope's JSON, or TOON where that is shorter. @default 'json' */
  readonly text: TextMode;
  /** F7: file bodies in the result, or kept by the gateway and linked. @default 'inline' */
  readonly files: FileMode;
  /** F7: the store's bounds. @default { maxBytes: 268435456, ttlMs: 600000 } */
  readonly fileStore: { readonly maxBytes: number; readonly ttlMs: number };
}

/** I6: one profile: its selection (policy.ts), its own expose mode, its own envelope format. */
export interface ProfileConfig extends ProfileGlobs {
  readonly output?: { readonly format: OutputFormat };
}

/** The whole runtime configuration. */
export interface Config {
  /** Global prefix (T1): config `prefix`, else env `MCP_TOOL_PREFIX`, else none. */
  readonly prefix?: string;
  /** @default '_' */
  readonly separator: string;
  /** @default 64 */
  readonly nameMaxLength: number;
  /** @default 'info' */
  readonly logLevel: LogLevel;
  readonly output: OutputConfig;
  /** T7. @default true */
  readonly explicitDestructive: boolean;
  /** T8. @default false */
  readonly strictArguments: boolean;
  /**
   * P1, K2: until how long after the process started a list waits for servers still starting
   * that nothing is remembered of. @default 8000
   */
  readonly listWaitMs: number;
  /** K1: the folder of what the gateway remembers (catalogs, pins, logins). */
  readonly stateDir: string;
  /** K3: how a definition that changed since it was pinned is treated. @default 'warn' */
  readonly pinning: PinningMode;
  /** T11. @default 'all' */
  readonly expose: ExposeMode;
  /** R4, global layer. */
  readonly instructions: InstructionMap;
  readonly http: HttpConfig;
  /** Q3: requests from a downstream to its client, relayed as input rounds. */
  readonly inputRequired: InputRequiredConfig;
  /** I6: named views of the catalog: the tool, prompt and resource globs of each, its own expose mode and envelope. */
  readonly profiles: Readonly<Record<string, ProfileConfig>>;
  /** O4: the status page and its records. @default true */
  readonly statusPage: boolean;
  /** I3: the access rules; absent: every caller everything. */
  readonly access?: readonly AccessRule[];
  /** The store the replicas share (Redis); absent: each process keeps its own state. */
  readonly store?: { readonly url: string };
  /** I7: limits on calls per caller; absent: none. */
  readonly rateLimits?: readonly RateLimitRule[];
  /** Enabled and disabled servers, in config order (T4 decides collisions by this order). */
  readonly servers: readonly ServerConfig[];
  /** Argument keys whose values are redacted in trace logs (L1). */
  readonly redactKeys: readonly string[];
  /**
   * L2: values in credential positions (configuration.md, "What a secret is"), written literally
   * or as `${VAR}`: never in any output.
   */
  readonly secrets: readonly string[];
  /** L2: {@link secrets} and every other value interpolated from the environment: never logged. */
  readonly logSecrets: readonly string[];
  /** The main config file. */
  readonly file: string;
}
