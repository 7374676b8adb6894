/**
 * Streamable HTTP hosting at `/mcp` on node:http (CONTRACT U1, U2, U4, E1).
 *
 * Every request passes the U2 guard (Host/Origin allow-list, then the bearer token) before
 * anything else is read. Then each request goes to the leg of its own era, decided by the SDK's
 * own classification (`classifyInboundRequest`, the step `createMcpHandler` and
 * `isLegacyRequest` use, so the branch never disagrees with the handler; a body that claims the
 * 2026 envelope, which it can never call legacy, skips it: http-era.ts):
 *
 * - **modern** (2026-07-28: the `_meta` envelope on every request, no session): the SDK's
 *   `createMcpHandler` with `legacy: 'reject'`, which builds one upstream `Server` per request
 *   from {@link UpstreamServer.factory} (O(1) in the number of tools: the handlers read the
 *   catalog), reached through fetch-bridge.ts. It answers plain JSON unless the call sends
 *   progress first, then SSE; a client cancels by closing the response stream.
 *   `subscriptions/listen` streams read the upstream's one change bus.
 * - **legacy** (2025: `initialize`, then `Mcp-Session-Id`): stateful sessions, one SDK transport
 *   and one upstream `Server` per session (pushed notifications, the GET stream), all sharing the
 *   catalog and the pool. These responses stream as SSE, not as plain JSON
 *   (`enableJsonResponse` stays off): in JSON-response mode the SDK transport drops every
 *   notification tied to a request, so a client that sent a progress token would never see
 *   progress (P3); docs/cli.md records the trade-off.
 */
import type { Era } from '../core/options.js';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as NodeHttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isInitializeRequest } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { raceTimeout } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';
import { bridgeFetchHandler } from './fetch-bridge.js';
import { answerBrowser } from './http-browser.js';
import { eraOfRequest, isLegacy, requestsOf } from './http-era.js';
import { createRequestGuard } from './http-guard.js';
import { createHttpAuth, ownerOf, withProfile, type HttpAuth } from './http-auth.js';
import { createIdentity } from './identity.js';
import { answerProbe, sendJson, sendJsonRpcError, type ProbeSources } from './http-probes.js';
import { LegacySessions } from './sessions.js';
import { connectionBudget, SOCKET_LIMITS, watchSockets } from './http-sockets.js';

export { SOCKET_LIMITS, type SocketLimits } from './http-sockets.js';
import type { UpstreamServer } from './server.js';
import type { HttpHandle, HttpOptions } from './http-options.js';

export type { HealthReport } from './http-probes.js';

export type { HttpHandle, HttpOptions } from './http-options.js';

const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 1000;
/**
 * Serves `upstream` over Streamable HTTP and resolves once listening.
 * @example const http = await listenHttp(upstream, { host: '127.0.0.1', port: 0, allowedHosts: ['127.0.0.1'], health }, logger);
 */
export async function listenHttp(
  upstream: UpstreamServer,
  options: HttpOptions,
  logger: Logger,
): Promise<HttpHandle> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const wildcard = options.host === '0.0.0.0' || options.host === '::' || options.host === '';
  const guard = createRequestGuard({
    allowedHosts: wildcard ? options.allowedHosts : [...options.allowedHosts, options.host],
    ...(options.token !== undefined ? { token: options.token } : {}),
  });
  const onerror = (error: Error): void => logger.debug({ err: error }, 'modern HTTP request');
  // E1: the modern leg. `legacy: 'reject'`: 2025 traffic never reaches it (the sessions leg below
  // serves it); the bus is the upstream's, so listen streams see every list change (E4).
  // With `http.legacy: stateless` the SDK's handler serves 2025 requests too, one Server per
  // request (no session: nothing pushed, no GET stream; any replica can answer).
  const stateless = options.legacy === 'stateless';
  const modern = createMcpHandler(upstream.factory, {
    legacy: stateless ? 'stateless' : 'reject',
    bus: upstream.bus,
    onerror,
  });
  const sessions = new LegacySessions({
    upstream,
    idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    max: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    newId:
      options.replicaId === undefined ? randomUUID : (): string => `${options.replicaId}.${randomUUID()}`,
    logger,
  });
  const serveModern = bridgeFetchHandler(modern, onerror);
  let httpAuth: HttpAuth | undefined;
  /** What the probes read; with `auth`, also who is an admin (set once listening). */
  let probeSources: ProbeSources = options;

  /** O1: counts each request of `body` in the era `eraOf` gives it. */
  function count(body: unknown, eraOf: (request: Record<string, unknown>) => Era): void {
    const onRequest = options.onRequest;
    if (onRequest === undefined) return;
    for (const request of requestsOf(body)) onRequest(eraOf(request), request['method'] as string);
  }

  /**
   * P5: the answers being written now (POSTs other than listen streams): a shutdown lets them
   * finish before it closes the connections (a drained call's answer was cut off before).
   */
  const answering = new Set<ServerResponse>();
  function answeringUntilDone(res: ServerResponse, body: unknown): void {
    if (requestsOf(body).some((request) => request['method'] === 'subscriptions/listen')) return;
    answering.add(res);
    res.once('close', () => answering.delete(res));
  }

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (stateless) {
      const body = req.method === 'POST' ? await readJsonBody(req, maxBodyBytes) : undefined;
      if (body?.kind === 'too_large') {
        return sendJsonRpcError(
          res,
          413,
          -32000,
          `Payload Too Large: request body must not exceed ${maxBodyBytes} bytes`,
        );
      }
      if (body?.kind === 'invalid') return sendJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
      count(body?.value, (request) => eraOfRequest(request));
      if (httpAuth !== undefined && !(await httpAuth.stepUp(req, res, body?.value))) return;
      answeringUntilDone(res, body?.value);
      return serveModern(req, res, body?.value);
    }
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    // I5: a session belongs to the principal that opened it.
    const owner = ownerOf(req);
    const transport = sessionId === undefined ? undefined : sessions.transportFor(sessionId, res, owner);
    if (req.method === 'POST') {
      const body = await readJsonBody(req, maxBodyBytes);
      if (body.kind === 'too_large') {
        return sendJsonRpcError(
          res,
          413,
          -32000,
          `Payload Too Large: request body must not exceed ${maxBodyBytes} bytes`,
        );
      }
      if (body.kind === 'invalid') return sendJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
      if (httpAuth !== undefined && !(await httpAuth.stepUp(req, res, body.value))) return;
      answeringUntilDone(res, body.value);
      if (transport !== undefined) {
        count(body.value, () => 'legacy');
        return transport.handleRequest(req, res, body.value);
      }
      if (sessionId !== undefined) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      const legacy = isLegacy(req, body.value);
      count(body.value, () => (legacy ? 'legacy' : 'modern'));
      if (logger.isLevelEnabled('debug')) {
        logger.debug({ era: legacy ? 'legacy' : 'modern', method: methodOf(body.value) }, 'HTTP request');
      }
      if (!legacy) return serveModern(req, res, body.value);
      if (isInitializeRequest(body.value)) return sessions.open(req, res, body.value, owner);
      return sendJsonRpcError(
        res,
        400,
        -32000,
        'Bad Request: no valid Mcp-Session-Id header; initialize first',
      );
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (transport !== undefined) return transport.handleRequest(req, res);
      if (sessionId !== undefined) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    res.setHeader('Allow', 'GET, POST, DELETE');
    return sendJsonRpcError(res, 405, -32000, 'Method not allowed.');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // U2: Host/Origin before anything else, then the token.
    const verdict = guard({
      host: req.headers.host,
      origin: req.headers.origin,
      authorization: req.headers.authorization,
    });
    const path = (req.url ?? '/').split('?')[0];
    // U7, O1: the paths an orchestrator and a scraper ask for.
    if (await answerProbe(req, res, path, verdict, guard, probeSources)) return;
    // O4: the page answers 401/403 itself (its prompt for a token), only past Host/Origin.
    if (options.status !== undefined && path !== undefined && (verdict.ok || verdict.status === 401)) {
      const access = !verdict.ok ? 'unauthorized' : httpAuth === undefined ? 'ok' : await httpAuth.admin(req);
      if (options.status(req, res, path, access)) return;
    }
    if ((verdict.ok || verdict.status === 401) && (await answerBrowser(options.browserLogin, req, res, path)))
      return;
    if (!verdict.ok) {
      logger.warn(
        { status: verdict.status, host: req.headers.host, origin: req.headers.origin },
        verdict.message,
      );
      if (verdict.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="mcp-normalizer"');
      return sendJsonRpcError(res, verdict.status, -32000, verdict.message);
    }
    if (path !== undefined && httpAuth?.answerMetadata(req, res, path) === true) return;
    // I6: a profile's own endpoint, `/mcp/<name>`.
    const profile = path?.startsWith('/mcp/') === true ? path.slice('/mcp/'.length) : undefined;
    if (path === '/mcp' || (profile !== undefined && options.profiles?.includes(profile) === true)) {
      // I1: who is calling, before anything of the request is read.
      if (httpAuth !== undefined && !(await httpAuth.authenticate(req, res))) return;
      if (profile !== undefined) withProfile(req, profile);
      return handleMcp(req, res);
    }
    const served = ['/mcp', ...(options.profiles ?? []).map((name) => `/mcp/${name}`)].join(', ');
    const what = profile !== undefined ? `no profile "${profile}" here` : 'Not found';
    return sendJson(res, 404, { error: `${what}: MCP is served at ${served}, health at /healthz` });
  }

  const server: NodeHttpServer = createServer({ ...SOCKET_LIMITS, ...options.socketLimits }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (clientGone(req, error)) {
        // Not our failure: the client closed its connection before the answer (info, not error).
        logger.info({ reason: describeHangUp(error) }, 'HTTP client hung up before the answer');
        if (!res.writableEnded) res.destroy();
        return;
      }
      logger.error({ err: error }, 'HTTP request failed');
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });

  // U1: a connection sends its first request in time, and connections never take every
  // descriptor (http-sockets.ts).
  watchSockets(server, {
    headersTimeoutMs: options.socketLimits?.headersTimeout ?? SOCKET_LIMITS.headersTimeout,
    budget: options.maxConnections ?? connectionBudget(),
    logger,
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const base = `http://${formatHost(options.host)}:${address.port}`;
  // I1: the resource is known once the port is.
  let identity: HttpHandle['identity'];
  if (options.auth !== undefined) {
    const { publicUrl, ...identityOptions } = options.auth;
    const resource = new URL(`${publicUrl ?? base}/mcp`);
    const validator = createIdentity({ ...identityOptions, resource });
    identity = {
      resource: resource.href,
      authenticate: (authorization) => validator.authenticate(authorization),
    };
    httpAuth = createHttpAuth(
      validator,
      logger,
      options.scopeCheck,
      options.admins,
      options.stepUpRefused,
      options.statusSession,
    );
    const admin = httpAuth.admin.bind(httpAuth);
    probeSources = { ...options, admin };
  }

  let closing: Promise<void> | undefined;
  return {
    url: `${base}/mcp`,
    healthUrl: `${base}/healthz`,
    sessionCount: () => sessions.size,
    ...(identity !== undefined ? { identity } : {}),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // P5: answers still being written (the drain saw their calls end) go out first, bounded.
        await allClosed([...answering], ANSWER_FLUSH_MS);
        await Promise.allSettled([modern.close(), sessions.close()]);
        // Open SSE streams and keep-alive sockets would hold close() forever.
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

/** How long a shutdown waits for answers still being written before it closes every socket. */
const ANSWER_FLUSH_MS = 2000;

/** Resolves once every response of `responses` closed, or after `ms`. */
async function allClosed(responses: readonly ServerResponse[], ms: number): Promise<void> {
  const open = responses.filter((res) => !res.writableFinished && !res.destroyed);
  if (open.length === 0) return;
  const closed = Promise.all(
    open.map((res) => new Promise<void>((resolve) => res.once('close', () => resolve()))),
  );
  await raceTimeout(closed, ms, systemTimers);
}

/** Node's and the socket's ways of saying that the client went away mid-request. */
const HANG_UP_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

function clientGone(req: IncomingMessage, error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (typeof code === 'string' && HANG_UP_CODES.has(code)) || message === 'aborted' || req.socket.destroyed
  );
}

function describeHangUp(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? code : typeof message === 'string' ? message : 'socket closed';
}

/** The JSON-RPC method of a request body, for the debug log. */
function methodOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
}

type BodyRead = { kind: 'ok'; value: unknown } | { kind: 'too_large' } | { kind: 'invalid' };

/**
 * Reads and parses a JSON body, refusing more than `limit` bytes without buffering them. Event
 * listeners, not `for await`: leaving an async iterator early destroys the socket, and the 413
 * answer could not be sent.
 */
function readJsonBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > limit) {
      req.resume();
      resolve({ kind: 'too_large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let overflow = false;
    req.on('data', (chunk: Buffer) => {
      if (overflow) return;
      size += chunk.length;
      if (size > limit) {
        overflow = true;
        chunks.length = 0;
        resolve({ kind: 'too_large' });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (overflow) return;
      try {
        resolve({ kind: 'ok', value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        resolve({ kind: 'invalid' });
      }
    });
    req.on('error', reject);
  });
}

function formatHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
