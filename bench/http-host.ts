/**
 * Hosts an SDK `Server` over Streamable HTTP at `/mcp` on 127.0.0.1 (a free port), the way the
 * SDK's own examples do: one transport and one `Server` per session (a `Server` connects to one
 * transport only). Shared by the bench echo server and the bare passthrough so that both
 * baselines use the same HTTP hosting.
 *
 * Responses stream as SSE, the SDK's default and what mcp-normalizer serves (it needs SSE for
 * progress), so an HTTP comparison measures the proxy and not the response mode. With
 * `BENCH_JSON_RESPONSE=1` in the environment (`npm run bench -- --json-response`) the baselines
 * answer with plain JSON bodies (`enableJsonResponse: true`) instead, the cheaper mode.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** A running HTTP host. */
export interface HttpHost {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serve `makeServer()` per session on 127.0.0.1 at a free port.
 * @example const { url } = await serveHttp(() => makeServer());
 */
export async function serveHttp(makeServer: () => Server): Promise<HttpHost> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (id !== undefined) {
        res.writeHead(404).end();
        return;
      }
      // A request without a session: the transport itself rejects anything but initialize.
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: process.env['BENCH_JSON_RESPONSE'] === '1',
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) sessions.delete(created.sessionId);
      };
      await makeServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(`http host: ${String(error)}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
