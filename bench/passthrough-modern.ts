/**
 * The modern yardstick: the thinnest 2026-07-28 proxy SDK v2 allows. The SDK's `createMcpHandler`
 * (modern only, `legacy: 'reject'`) builds a low-level `Server` per request whose tools/list and
 * tools/call handlers forward to one SDK v2 `Client` connected to the downstream over stdio: no
 * catalog, no validation, no normalization, no logging. What mcp-normalizer's modern HTTP leg
 * costs beyond this is its own doing.
 *
 * Usage: `node dist/bench/passthrough-modern.js -- <command> [args...]`; prints
 * `listening http://127.0.0.1:<port>/mcp` on stderr.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';

const separator = process.argv.indexOf('--');
const [command, ...args] = separator === -1 ? [] : process.argv.slice(separator + 1);
if (command === undefined) throw new Error('Expected `-- <command> [args...]` for the downstream');

// The bench downstream speaks 2025 (SDK v1): no probe, as mcp-normalizer after its first one.
const client = new Client({ name: 'bench-passthrough-modern', version: '1.0.0' });
const ready = client.connect(new StdioClientTransport({ command, args, stderr: 'inherit' }));

function makeServer(): Server {
  const server = new Server(
    { name: 'bench-passthrough-modern', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler('tools/list', async (request, ctx) => {
    await ready;
    return client.request(request, { signal: ctx.mcpReq.signal });
  });
  server.setRequestHandler('tools/call', async (request, ctx) => {
    await ready;
    return client.request(request, { signal: ctx.mcpReq.signal });
  });
  return server;
}

const handler = toNodeHandler(createMcpHandler(makeServer, { legacy: 'reject' }));
const http = createServer((req, res) => void handler(req, res));
http.listen(0, '127.0.0.1', () => {
  const { port } = http.address() as AddressInfo;
  process.stderr.write(`listening http://127.0.0.1:${port}/mcp\n`);
});
process.on('SIGTERM', () => {
  void client.close().finally(() => process.exit(0));
});
await ready;
