/**
 * O1 for `serve` over stdio: `GET /metrics` on 127.0.0.1 alone (`--metrics-port`), since stdout
 * is the protocol and there is no HTTP server otherwise. Loopback only, no other path.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves `scrape` at `http://127.0.0.1:<port>/metrics`; port 0 picks a free one. */
export function listenMetrics(
  port: number,
  scrape: () => Promise<{ contentType: string; body: string }>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
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
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${bound}/metrics`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
