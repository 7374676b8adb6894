/**
 * The paths beside `/mcp` (U4, U7, O1): `/healthz` (readiness), `/livez` (liveness) and
 * `/metrics` (Prometheus), and the JSON answers the HTTP server sends. An orchestrator's probes
 * and a scraper send a pod address as Host and, for probes, no token: liveness and the readiness
 * status answer them; the per-server report only behind the U2 checks; metrics behind the token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GuardHeaders, GuardVerdict } from './http-guard.js';

/** The `/healthz` answer: HTTP status and JSON body. */
export interface HealthReport {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
}

/** What the probes read. */
export interface ProbeSources {
  readonly health: () => HealthReport;
  readonly live?: () => HealthReport;
  readonly metrics?: () => Promise<{ contentType: string; body: string }>;
  /**
   * I5: with `http.auth`, whether the request's token is an admin's: `/metrics` and the
   * per-server report of `/healthz` need one. Absent: the U2 token alone decides.
   */
  readonly admin?: (req: IncomingMessage) => Promise<'ok' | 'unauthorized' | 'forbidden'>;
}

/** `/livez` when the composition root gives none: the process answers, so it is alive. */
const LIVE: HealthReport = { status: 200, body: { status: 'alive' } };

/**
 * Answers `path` when it is a probe or the metrics; false for every other request. `verdict` is
 * the U2 check of the request, `guard` checks its token alone.
 */
export async function answerProbe(
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
  verdict: GuardVerdict,
  guard: (headers: GuardHeaders) => GuardVerdict,
  sources: ProbeSources,
): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (path === '/metrics' && sources.metrics !== undefined) {
    const allowed = guard({ tokenOnly: true, authorization: req.headers.authorization });
    const admin = sources.admin === undefined ? 'ok' : await sources.admin(req);
    if (!allowed.ok || admin !== 'ok') {
      const status = !allowed.ok ? allowed.status : admin === 'unauthorized' ? 401 : 403;
      if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="mcp-normalizer"');
      const message = !allowed.ok
        ? allowed.message
        : 'Forbidden: the metrics need a principal listed in http.auth.admins';
      sendJsonRpcError(res, status, -32000, message);
      return true;
    }
    const { contentType, body } = await sources.metrics();
    res.writeHead(200, { 'content-type': contentType });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }
  if (path !== '/healthz' && path !== '/livez') return false;
  const report = path === '/livez' ? (sources.live?.() ?? LIVE) : sources.health();
  const full =
    path === '/livez' || (verdict.ok && (sources.admin === undefined || (await sources.admin(req)) === 'ok'));
  if (full) sendJson(res, report.status, report.body);
  else sendJson(res, report.status, { status: (report.body as { status?: unknown }).status });
  return true;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}
