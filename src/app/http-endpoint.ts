/**
 * U1: the gateway's Streamable HTTP endpoint as the config asks for it: hosting, identity (I1,
 * I4), probes and metrics (U4, O1), the status page (O4), and the paths of callers' logins (D3,
 * D4), which learn the endpoint's URL and its issuer once it listens. The HTTP stack is loaded
 * here, on demand: stdio serving never pays for its import (cold start).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { Era } from '../core/options.js';
import type { ToolBackend } from '../upstream/backend.js';
import type { HealthReport, HttpHandle, HttpOptions } from '../upstream/http.js';
import type { UpstreamServer } from '../upstream/server.js';
import { httpIdentity } from './identity.js';
import { LOGIN_PATHS, type Logins } from './logins/logins.js';
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
