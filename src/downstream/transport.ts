/**
 * Server config → SDK client transport (C3). The one place that knows how each transport kind is
 * built; `connection.ts` only sees the SDK `Transport` interface, and tests swap the whole thing
 * through {@link TransportFactory}.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ChildProcess } from 'node:child_process';
import type { OAuthClientProvider, Transport } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { RemoteTransportConfig, ServerConfig, StdioTransportConfig } from '../config/types.js';
import type { Scrubber } from '../core/secrets.js';
import { machineProvider } from './grants.js';
import { tokenExchangeProvider } from './token-exchange.js';
import { downstreamFetch } from './http-fetch.js';
import { StoredLoginProvider } from './oauth-login.js';
import { StdioClientTransport } from './stdio-client.js';
import { spawnSpec } from './spawn.js';

/**
 * Builds a fresh transport for one connection attempt. Called again on every restart: a
 * transport (ours or the SDK's) cannot be restarted once closed.
 *
 * @example
 * const factory: TransportFactory = { create: () => InMemoryTransport.createLinkedPair()[0] };
 */
export interface TransportFactory {
  /** `scrub` (L2): applied to each stderr line of a stdio child before it is cut to length. */
  create(server: ServerConfig, logger: Logger, scrub?: Scrubber): Transport | Promise<Transport>;
}

/**
 * P1: children spawned before the transports were built (`app/head-start.ts`): the first
 * transport of a stdio server takes its child over instead of spawning.
 */
export interface EarlyChildren {
  /** The running child spawned for this config, once; `undefined` when there is none (any more). */
  take(config: StdioTransportConfig): ChildProcess | undefined;
}

/**
 * A stderr line longer than this is cut before logging: one runaway line (a minified stack, a
 * base64 dump) must not become a multi-megabyte log record.
 */
const MAX_STDERR_LINE = 8192;

/**
 * P6: every line a child writes to stderr becomes one log record on the server's child logger,
 * never a byte on our stdout (which is the upstream protocol channel).
 */
function logStderr(stream: Readable, logger: Logger, scrub: Scrubber | undefined): void {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (raw) => {
    // L2: scrubbed whole, before the cut: a secret across the cut would keep its first characters.
    const line = scrub === undefined ? raw : scrub(raw);
    const text = line.length > MAX_STDERR_LINE ? `${line.slice(0, MAX_STDERR_LINE)}…` : line;
    logger.info({ stderr: true }, text);
  });
  // A broken pipe on the child's stderr is not our failure; the transport reports the exit.
  stream.on('error', () => {});
}

/** D1: one login per configured server (D3: per principal's copy), so a restart reuses its token until it expires. */
const providers = new WeakMap<RemoteTransportConfig, OAuthClientProvider>();

/**
 * D1: the SDK's OAuth client for a remote server with `auth`: on a 401 it discovers the
 * authorization server (RFC 9728 from the challenge, RFC 8414 / OIDC), asks for a token for this
 * server (`resource`, RFC 8707) and sends it; the host's own token is never among the headers.
 */
function authOf(server: string, config: RemoteTransportConfig): { authProvider?: OAuthClientProvider } {
  const auth = config.auth;
  if (auth === undefined) return {};
  let provider = providers.get(config);
  if (provider === undefined && auth.type === 'oauth') {
    // D2: the login `mcp-normalizer login` stored; refreshed tokens are saved back.
    provider = new StoredLoginProvider({
      server,
      url: config.url,
      auth,
      ...(auth.principal !== undefined ? { principal: auth.principal } : {}),
    });
    providers.set(config, provider);
  }
  if (provider === undefined && auth.type === 'token_exchange') {
    // D8: a caller's copy exchanges that caller's token (token-exchange.ts).
    provider = tokenExchangeProvider(auth);
    providers.set(config, provider);
  }
  if (provider === undefined && auth.type !== 'oauth' && auth.type !== 'token_exchange') {
    // D1, D5, D6: the machine grants (grants.ts).
    provider = machineProvider(auth);
    providers.set(config, provider);
  }
  return { authProvider: provider };
}

/**
 * The transport for `server` as configured: a spawned child over stdio (our own transport,
 * `stdio-client.ts`; its environment is the SDK's safe default set plus the configured `env`;
 * the child `early` holds for this config, if any, is taken over instead),
 * the SDK's Streamable HTTP, or its legacy SSE (headers go with every request through
 * `requestInit`; requests go through {@link downstreamFetch}: node:http with keep-alive, no
 * listener left on the SDK's signal, every digit kept).
 */
export async function createTransport(
  server: ServerConfig,
  logger: Logger,
  scrub?: Scrubber,
  early?: EarlyChildren,
): Promise<Transport> {
  const config = server.transport;
  switch (config.type) {
    case 'stdio': {
      const child = early?.take(config);
      const transport = new StdioClientTransport({
        ...spawnSpec(config),
        maxMessageBytes: config.maxMessageBytes,
        ...(child !== undefined ? { child } : {}),
      });
      // Readable before start(), so the child's early output is not lost.
      logStderr(transport.stderr, logger, scrub);
      return transport;
    }
    // SDK v2 ships the HTTP client transports in the client package's one bundle, which the
    // Client already loads: there is nothing left to load lazily (v1 had separate modules).
    case 'streamable-http': {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        fetch: downstreamFetch,
        ...authOf(server.name, config),
      });
    }
    case 'sse': {
      return new SSEClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        fetch: downstreamFetch,
        ...authOf(server.name, config),
      });
    }
  }
}

/** The production {@link TransportFactory}: {@link createTransport}. */
export const defaultTransportFactory: TransportFactory = { create: createTransport };

/**
 * P1: {@link createTransport}, taking over the children `early` holds (`serve`'s head start).
 * @example new Pool({ servers, logger, transports: transportFactory(startEarly(servers)) });
 */
export function transportFactory(early: EarlyChildren): TransportFactory {
  return { create: (server, logger, scrub) => createTransport(server, logger, scrub, early) };
}
