/**
 * What `listenHttp` (http.ts) takes and gives back: the endpoint's options and its handle.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Era, LegacyMode } from '../core/options.js';
import type { Principal } from '../core/policy.js';
import type { BrowserLogin } from './http-browser.js';
import type { ScopeCheck, StepUpRefused } from './http-auth.js';
import type { Identity, IdentityOptions } from './identity.js';
import type { HealthReport } from './http-probes.js';
import type { SocketLimits } from './http-sockets.js';

/** Options of `listenHttp`. */
export interface HttpOptions {
  /**
   * Interface to bind. Only loopback by default: the proxy can start local processes.
   * @default '127.0.0.1'
   */
  readonly host: string;
  /**
   * TCP port; `0` picks a free one (tests).
   * @default 3333
   */
  readonly port: number;
  /** Bearer token required on `/mcp` and `/healthz`; undefined or empty: none (U2). */
  readonly token?: string;
  /**
   * Host names accepted in `Host`/`Origin`, compared without the port (U2). The bound host is
   * added when it is a concrete address (not `0.0.0.0` / `::`).
   * @example ['localhost', '127.0.0.1']
   */
  readonly allowedHosts: readonly string[];
  /**
   * Largest accepted request body; larger → 413.
   * @default 4194304 (4 MiB)
   */
  readonly maxBodyBytes?: number;
  /**
   * A session with no request open (no call, no GET stream) for this long is closed, like a
   * client's DELETE: a client that vanishes without one would otherwise keep its `Server` and
   * transport for the process's lifetime. Its id then gets 404, which tells a client that is
   * still there to initialize again (spec). `0`: never.
   * @default 1800000 (30 minutes)
   */
  readonly sessionIdleMs?: number;
  /**
   * Most legacy sessions open at once: a new one beyond it closes the session idle the longest
   * (no request open); when every session has a request open, the initialize gets 503. Without
   * a cap, clients that initialize and vanish (3,000 in 15 s) grew the heap by 163 MB and kept
   * it for `sessionIdleMs`.
   * @default 1000
   */
  readonly maxSessions?: number;
  /**
   * Most connections open at once; past it, the oldest that has not sent a request is closed.
   * @default from the descriptor limit (http-sockets.ts)
   */
  readonly maxConnections?: number;
  /** The socket bounds (`SOCKET_LIMITS`), for tests that cannot wait 10 s. */
  readonly socketLimits?: Partial<SocketLimits>;
  /**
   * 2025-era clients: `sessions` (today) or `stateless` (the SDK's per-request legacy serving:
   * no session, no GET stream, nothing pushed; any replica answers).
   * @default 'sessions'
   */
  readonly legacy?: LegacyMode;
  /** Put in front of every session id (`<replicaId>.<uuid>`) for session-aware load balancing. */
  readonly replicaId?: string;
  /** Liveness (`/livez`): 200 while the process serves; `/healthz` is readiness. */
  readonly live?: () => HealthReport;
  /** O1: the Prometheus exposition for `GET /metrics`; undefined: no such path. */
  readonly metrics?: () => Promise<{ contentType: string; body: string }>;
  /** O1: each request of a POST body, by era and method (`initialize` and `ping` included). */
  readonly onRequest?: (era: Era, method: string) => void;
  /** Builds the `/healthz` answer on each request. */
  readonly health: () => HealthReport;
  /**
   * I1: the endpoint as an OAuth resource server (the resource is `<publicUrl>/mcp`, or the URL
   * served); absent: `token` alone, or nothing on loopback.
   */
  readonly auth?: Omit<IdentityOptions, 'resource'> & { readonly publicUrl?: string };
  /** I4: the scope a call needs and its caller lacks (403 `insufficient_scope`). */
  readonly scopeCheck?: ScopeCheck;
  /** I4, O1, O4: a call was answered 403 `insufficient_scope`. */
  readonly stepUpRefused?: StepUpRefused;
  /** O4: the principal of a status page session cookie (a sign-in in the browser), if any. */
  readonly statusSession?: (
    cookie: string | undefined,
  ) => Principal | undefined | Promise<Principal | undefined>;
  /** I6: the profiles served at `/mcp/<name>`. */
  readonly profiles?: readonly string[];
  /** O4: principal patterns allowed to read the status page when `auth` is on. */
  readonly admins?: readonly string[];
  /**
   * O4: the status page (`/`, `/status`, `/status/*`); false for another path. `access` is this
   * endpoint's verdict: Host/Origin passed, then the token (or, with `auth`, an admin principal).
   */
  readonly status?: (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    access: 'ok' | 'unauthorized' | 'forbidden',
  ) => boolean;
  /**
   * D3, D4: the paths a caller's browser comes to while logging in to a downstream server (a
   * browser: no token; past Host/Origin), and their answers: a page or a redirect.
   */
  readonly browserLogin?: BrowserLogin;
}

/** A listening HTTP endpoint. */
export interface HttpHandle {
  /** Where MCP clients connect, e.g. `http://127.0.0.1:3333/mcp`. */
  readonly url: string;
  /** The health endpoint, e.g. `http://127.0.0.1:3333/healthz`. */
  readonly healthUrl: string;
  /** Number of open MCP sessions. */
  sessionCount(): number;
  /** I1: the endpoint's resource server (with `auth`): its resource and its bearer check. */
  readonly identity?: Pick<Identity, 'authenticate'> & { readonly resource: string };
  /** Stops accepting connections, closes every session, and resolves once the socket is closed. */
  close(): Promise<void>;
}
