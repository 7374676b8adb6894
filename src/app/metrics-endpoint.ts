/**
 * O1 for `serve` over stdio: `GET /metrics` on 127.0.0.1 alone (`--metrics-port`), since stdout
 * is the protocol and there is no HTTP server otherwise. Loopback only, no other path; its
 * loopback listener also serves `--status-port` (status-http.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP server on 127.0.0.1:`port` alone (0 picks a free one) for the side endpoints of stdio
 * serving (`--metrics-port`, `--status-port`); `url` is its address with `path`.
 */
export function listenLoopback(
  port: number,
  path: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handle);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${bound}${path}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Keep-alive sockets (a status page's polls) would hold close() open.
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** Serves `scrape` at `http://127.0.0.1:<port>/metrics`; port 0 picks a free one. */
export function listenMetrics(
  port: number,
  scrape: () => Promise<{ contentType: string; body: string }>,
): Promise<{ url: string; close(): Promise<void> }> {
  return listenLoopback(port, '/metrics', (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    scrape().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
}
