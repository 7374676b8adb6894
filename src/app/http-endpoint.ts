/**
 * U1, O1, O4: the endpoints of one proxy: stdio, the gateway's Streamable HTTP endpoint as the
 * config asks for it (hosting, identity (I1, I4), probes and metrics (U4, O1), the status page
 * (O4), and the paths of callers' logins (D3, D4), which learn the endpoint's URL and its issuer
 * once it listens), and the metrics or the status page alone. The HTTP stack is loaded here, on
 * demand: stdio serving never pays for its import (cold start).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { Era } from '../core/options.js';
import type { ToolBackend } from '../upstream/backend.js';
import type { HealthReport, HttpHandle, HttpOptions } from '../upstream/http.js';
import { serveStdio, type StdioHandle, type StdioOptions } from '../upstream/stdio.js';
import type { UpstreamServer } from '../upstream/server.js';
import { httpIdentity } from './identity.js';
import { LOGIN_PATHS, type Logins } from './logins/logins.js';
import type { Metrics } from './metrics.js';
import type { StatusHandler } from './status-http.js';
import type { Views } from './views.js';

/** What the endpoint is built from. */
export interface EndpointParts {
  readonly config: Config;
  readonly upstream: UpstreamServer;
  readonly views: Views;
  readonly backend: Pick<ToolBackend, 'calledName' | 'answer'>;
  readonly logins: Logins;
  readonly logger: Logger;
  readonly metrics: () => Promise<{ contentType: string; body: string }>;
  readonly onRequest: (era: Era, method: string) => void;
  readonly health: () => HealthReport;
  /** O4: the status page, when the config serves one. */
  readonly status: (() => Promise<StatusHandler>) | undefined;
}

/** Listens as `config.http` says (`overrides` win), and hands the callers' logins the URL. */
export async function listenEndpoint(
  parts: EndpointParts,
  overrides: Partial<Omit<HttpOptions, 'health'>>,
): Promise<HttpHandle> {
  const { config, logins } = parts;
  const { listenHttp } = await import('../upstream/http.js');
  const handle = await listenHttp(
    parts.upstream,
    {
      host: config.http.host,
      port: config.http.port,
      allowedHosts: config.http.allowedHosts,
      sessionIdleMs: config.http.sessionIdleMs,
      maxSessions: config.http.maxSessions,
      legacy: config.http.legacy,
      ...(config.http.replicaId !== undefined ? { replicaId: config.http.replicaId } : {}),
      ...httpIdentity(config, parts.views, parts.backend),
      metrics: parts.metrics,
      onRequest: parts.onRequest,
      ...(parts.status !== undefined ? { status: await parts.status() } : {}),
      profiles: Object.keys(config.profiles),
      browserLogin: { paths: LOGIN_PATHS, answer: logins.browser },
      statusSession: logins.statusPrincipal,
      ...overrides,
      health: parts.health,
    },
    parts.logger,
  );
  // D3: the redirect URI of callers' logins: under the public URL, else the URL served.
  logins.setBase(config.http.publicUrl ?? new URL(handle.url).origin);
  // D4: a caller's login is confirmed by a sign-in at the gateway's issuer.
  const auth = config.http.auth;
  if (auth?.issuer !== undefined && handle.identity !== undefined)
    logins.setSignIn({
      issuer: auth.issuer,
      resource: auth.audience ?? handle.identity.resource,
      scopes: auth.requiredScopes,
      ...(auth.loginClient !== undefined ? { client: auth.loginClient } : {}),
      authenticate: handle.identity.authenticate,
    });
  return handle;
}

/** The endpoints a proxy serves on (`Proxy`, proxy.ts). */
export interface Hosting {
  /** U1: serves over stdio. */
  serveStdio(options?: StdioOptions): Promise<StdioHandle>;
  /** U1: serves Streamable HTTP; `http` config unless overridden. */
  listenHttp(overrides?: Partial<Omit<HttpOptions, 'health'>>): Promise<HttpHandle>;
  /** O1: `GET /metrics` alone on 127.0.0.1:`port` (for `serve` over stdio, `--metrics-port`). */
  listenMetrics(port: number): Promise<{ url: string; close(): Promise<void> }>;
  /** O4: the status page alone on 127.0.0.1:`port` (for `serve` over stdio, `--status-port`). */
  listenStatus(port: number): Promise<{ url: string; close(): Promise<void> }>;
}

/** What {@link hosting} serves: the parts every endpoint is given. */
type HostedParts = Omit<EndpointParts, 'health' | 'metrics' | 'status'> & {
  readonly health: { report: EndpointParts['health'] };
  readonly metrics: Pick<Metrics, 'scrape' | 'served'>;
  readonly statusPage: () => Promise<StatusHandler>;
};

/**
 * U1, O1, O4: the endpoints of one proxy (stdio, HTTP, the metrics and the status page alone),
 * each kept in `endpoints` for the ordered stop, the HTTP ones in `https` too.
 */
export function hosting(
  parts: HostedParts,
  endpoints: { close(): Promise<void> }[],
  https: HttpHandle[],
): Hosting {
  const { config, logger, upstream, onRequest, metrics, statusPage } = parts;
  const kept = <H extends { close(): Promise<void> }>(handle: H): H => (endpoints.push(handle), handle);
  return {
    serveStdio: async (stdioOptions) =>
      kept(await serveStdio(upstream, { onRequest, ...stdioOptions }, logger)),
    async listenHttp(overrides = {}) {
      const status = config.statusPage ? statusPage : undefined;
      const endpoint = { ...parts, health: parts.health.report, status, metrics: () => metrics.scrape() };
      const handle = kept(await listenEndpoint(endpoint, overrides));
      https.push(handle);
      metrics.served();
      return handle;
    },
    async listenMetrics(port) {
      const { listenMetrics } = await import('./metrics-endpoint.js');
      const handle = kept(await listenMetrics(port, () => metrics.scrape()));
      metrics.served();
      return handle;
    },
    async listenStatus(port) {
      const { listenStatus } = await import('./status-http.js');
      return kept(await listenStatus(port, await statusPage()));
    },
  };
}
