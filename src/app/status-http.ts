/**
 * The status page on HTTP (O4): `GET /` and `/status` (the page), `/status/data` (its JSON),
 * `/status/app.js` and `/status/app.css` (its code, from the package's `assets/status`). The page
 * holds no data of its own: it reads `/status/data` every two seconds while it is open, so a
 * gateway with no page open does nothing for it. A strict Content-Security-Policy allows the
 * gateway's own origin only; nothing comes from anywhere else.
 *
 * Who may read it is decided by the endpoint (upstream/http.ts: Host/Origin, the token, an
 * admin principal) and handed in as {@link StatusAccess}: the page's code is served to anyone
 * who passes Host/Origin (it is the same for everyone), the data only to an allowed caller, and
 * the page itself answers 401/403 to the others, who see a prompt for a token and nothing else.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listenLoopback } from './metrics-endpoint.js';
import type { Status } from './status.js';

/** What the endpoint decided about a status request. */
export type StatusAccess = 'ok' | 'unauthorized' | 'forbidden';

/** Serves one status request; false when `path` is not the page's. */
export type StatusHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  access: StatusAccess,
) => boolean;

/** The paths of the page. */
export function isStatusPath(path: string): boolean {
  return path === '/' || path === '/status' || path.startsWith('/status/');
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** The package's `assets/status`, from dist/src/app or src/app alike. */
function assetsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      readFileSync(join(dir, 'assets', 'status', 'index.html'));
      return join(dir, 'assets', 'status');
    } catch {
      dir = dirname(dir);
    }
  }
  throw new Error('the status page assets (assets/status) are missing from the package');
}

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * `signIn`: where the page sends a person to sign in in the browser (O4, `http.auth` with an
 * issuer), told to the page in the 401 answer of its data; absent, the page asks for a token.
 * @example const handler = createStatusHandler(status); handler(req, res, '/status', 'ok');
 */
export function createStatusHandler(status: Status, signIn?: string): StatusHandler {
  const dir = assetsDir();
  // Read once: a few kilobytes, served from memory.
  const assets = new Map(Object.keys(TYPES).map((name) => [name, readFileSync(join(dir, name))]));

  const send = (
    res: ServerResponse,
    code: number,
    type: string,
    body: Buffer | string,
    cache: string,
  ): void => {
    res.writeHead(code, { ...HEADERS, 'content-type': type, 'cache-control': cache });
    res.end(body);
  };

  return (req, res, path, access) => {
    if (!isStatusPath(path)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...HEADERS, allow: 'GET, HEAD' }).end();
      return true;
    }
    const refused = access === 'unauthorized' ? 401 : access === 'forbidden' ? 403 : 200;
    if (path === '/' || path === '/status' || path === '/status/') {
      if (refused === 401) res.setHeader('www-authenticate', 'Bearer realm="mcp-normalizer status"');
      send(res, refused, TYPES['index.html'] as string, assets.get('index.html') as Buffer, 'no-store');
      return true;
    }
    if (path === '/status/data') {
      if (refused !== 200) {
        if (refused === 401) res.setHeader('www-authenticate', 'Bearer realm="mcp-normalizer status"');
        const body = { error: access, ...(signIn !== undefined ? { sign_in: signIn } : {}) };
        send(res, refused, 'application/json', JSON.stringify(body), 'no-store');
        return true;
      }
      send(res, 200, 'application/json', JSON.stringify(status.snapshot()), 'no-store');
      return true;
    }
    const name = path.slice('/status/'.length);
    const asset = assets.get(name);
    if (asset === undefined || name === 'index.html') {
      send(res, 404, 'text/plain; charset=utf-8', 'Not found\n', 'no-store');
      return true;
    }
    send(res, 200, TYPES[name] as string, asset, 'no-cache');
    return true;
  };
}

/**
 * O4 for `serve` over stdio: the page on 127.0.0.1 alone (`--status-port`), for the local user,
 * with the DNS-rebinding check of U2 (Host and Origin must name the loopback).
 */
export function listenStatus(
  port: number,
  handler: StatusHandler,
): Promise<{ url: string; close(): Promise<void> }> {
  const loopback = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;
  return listenLoopback(port, '/status', (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const origin = req.headers.origin;
    const originOk = origin === undefined || loopback.test(origin.replace(/^https?:\/\//, ''));
    if (!loopback.test(req.headers.host ?? '') || !originOk) {
      res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end('Forbidden: Host or Origin is not the loopback\n');
      return;
    }
    if (!handler(req, res, path, 'ok'))
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
  });
}
