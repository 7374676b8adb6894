/**
 * The yardstick proxy: the thinnest TypeScript MCP proxy there is. A bare SDK `Server` whose
 * tools/list and tools/call handlers forward the request to one SDK `Client` connected to one
 * downstream, and hand back whatever came: no catalog, no prefixing, no validation of our own,
 * no normalization, no logging. Anything mcp-normalizer costs beyond this is its own doing.
 *
 * Usage: `node dist/bench/passthrough.js [--http] [--progress] -- <command> [args...]`
 * (the downstream over stdio; upstream over stdio, or Streamable HTTP on 127.0.0.1 with `--http`;
 * `--progress`: calls carry a progress token as P3's do, `passthrough-server.ts`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serveHttp } from './http-host.js';
import { makePassthroughServer } from './passthrough-server.js';

const separator = process.argv.indexOf('--');
const [command, ...args] = separator === -1 ? [] : process.argv.slice(separator + 1);
if (command === undefined) throw new Error('Expected `-- <command> [args...]` for the downstream');
const flags = process.argv.slice(2, separator);
const http = flags.includes('--http');
const progress = flags.includes('--progress');

// Downstream connect and upstream serve start together, as a proxy should (cold start).
const client = new Client({ name: 'bench-passthrough', version: '1.0.0' });
const ready = client.connect(new StdioClientTransport({ command, args, stderr: 'inherit' }));

const makeServer = () => makePassthroughServer(client, ready, { progress });

async function shutdown(): Promise<void> {
  await client.close();
  process.exit(0);
}

if (http) {
  const { url } = await serveHttp(makeServer);
  process.stderr.write(`listening ${url}\n`);
  process.on('SIGTERM', () => void shutdown());
} else {
  process.stdin.on('end', () => void shutdown());
  await makeServer().connect(new StdioServerTransport());
}
await ready;
