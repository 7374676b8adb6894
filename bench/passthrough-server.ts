/**
 * The yardstick proxy's `Server`: tools/list and tools/call forwarded to one SDK `Client` as they
 * are, nothing else. `passthrough.ts` runs it as a process; `inproc.ts` links it in memory.
 *
 * `progress` (the bench's `--passthrough-progress`): a tools/call goes out as P3 sends ours, with
 * a progress token, its timeout restarted by the downstream's progress, which reaches the host
 * under the host's own token when it gave one. The downstream reads the token on every call
 * (docs/performance-log.md), so this is the like-for-like yardstick for what P3 promises.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** How the passthrough forwards (see the module comment). */
export interface PassthroughOptions {
  readonly progress?: boolean;
}

/** A `Server` forwarding to `client` once `ready` (its connection) has resolved. */
export function makePassthroughServer(
  client: Client,
  ready: Promise<void>,
  { progress = false }: PassthroughOptions = {},
): Server {
  const server = new Server({ name: 'bench-passthrough', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    await ready;
    return client.request(request, ListToolsResultSchema, { signal: extra.signal });
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    await ready;
    if (!progress) return client.request(request, CallToolResultSchema, { signal: extra.signal });
    const token = request.params._meta?.progressToken;
    return client.request(request, CallToolResultSchema, {
      signal: extra.signal,
      resetTimeoutOnProgress: true,
      onprogress: (update) => {
        if (token === undefined) return;
        void extra
          .sendNotification({ method: 'notifications/progress', params: { ...update, progressToken: token } })
          .catch(() => undefined);
      },
    });
  });
  return server;
}
