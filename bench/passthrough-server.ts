/**
 * The yardstick proxy's `Server`: tools/list and tools/call forwarded to one SDK `Client` as they
 * are, nothing else. `passthrough.ts` runs it as a process; `inproc.ts` links it in memory.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** A `Server` forwarding to `client` once `ready` (its connection) has resolved. */
export function makePassthroughServer(client: Client, ready: Promise<void>): Server {
  const server = new Server({ name: 'bench-passthrough', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    await ready;
    return client.request(request, ListToolsResultSchema, { signal: extra.signal });
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    await ready;
    return client.request(request, CallToolResultSchema, { signal: extra.signal });
  });
  return server;
}
