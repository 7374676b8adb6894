/**
 * In-process downstream servers for pool and connection tests: a {@link TransportFactory} that
 * links each connection attempt to a fresh server over the SDK's InMemoryTransport, a
 * hand-written raw JSON-RPC server (to send what SDK servers refuse to: unknown blocks,
 * malformed tools), and a pino logger whose lines a test can read.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LATEST_PROTOCOL_VERSION, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import type { ServerConfig } from '../../src/config/types.js';
import type { TransportFactory } from '../../src/downstream/transport.js';

/** An McpServer with one tool, `echo {text}`, answering its text as one text block. */
export function echoServer(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo.', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

/** Anything that serves MCP on a transport: McpServer, low-level Server, {@link rawServer}. */
export interface Connectable {
  connect(transport: Transport): Promise<void>;
}

/**
 * Builds a new server per connection attempt (a restart gets a fresh one, like a respawned
 * child). A builder that throws makes the attempt fail, like a command that cannot start.
 */
export class MemoryTransports implements TransportFactory {
  readonly #builders: Readonly<Record<string, () => Connectable>>;
  readonly #attempts = new Map<string, number>();
  readonly #live = new Map<string, InMemoryTransport>();

  constructor(builders: Readonly<Record<string, () => Connectable>>) {
    this.#builders = builders;
  }

  create(server: ServerConfig): Transport {
    this.#attempts.set(server.name, this.attempts(server.name) + 1);
    const build = this.#builders[server.name];
    if (!build) throw new Error(`No in-memory server named "${server.name}"`);
    const peer = build();
    const [client, side] = InMemoryTransport.createLinkedPair();
    void peer.connect(side);
    this.#live.set(server.name, side);
    return client;
  }

  /** How many transports were created for `name` (connection attempts). */
  attempts(name: string): number {
    return this.#attempts.get(name) ?? 0;
  }

  /** Drops the live connection of `name` as a crashed process would. */
  async drop(name: string): Promise<void> {
    await this.#live.get(name)?.close();
  }
}

/** One `tools/list` page of a {@link rawServer}. */
export interface RawPage {
  readonly tools: unknown;
  readonly nextCursor?: unknown;
}

/** What a {@link rawServer} answers. */
export interface RawScript {
  /** Pages in order: the first request gets page 0, a request with cursor `"<n>"` gets page n. */
  readonly pages?: readonly RawPage[];
  /** tools/list answers with a JSON-RPC error instead. */
  readonly listFails?: boolean;
  /** The raw `result` of a tools/call (anything, even what the spec forbids). */
  readonly call?: (params: Record<string, unknown>) => unknown;
}

/** A hand-written MCP server: answers initialize, ping, tools/list and tools/call verbatim. */
export interface RawServer extends Connectable {
  /** Every message it received, in order. */
  readonly received: JSONRPCMessage[];
  /** Sends a notification to the client (e.g. `notifications/tools/list_changed`). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** Sends an answer to request `id` whenever asked, whether or not the client waits for it. */
  answerLate(id: number, result: unknown): Promise<void>;
}

/** A {@link RawServer} following `script`; `script` is read on every request, so tests may mutate a copy. */
export function rawServer(script: () => RawScript): RawServer {
  const received: JSONRPCMessage[] = [];
  let transport: Transport | undefined;
  const answer = (id: string | number, result: unknown): Promise<void> =>
    transport!.send({ jsonrpc: '2.0', id, result } as JSONRPCMessage);
  const fail = (id: string | number, code: number, message: string): Promise<void> =>
    transport!.send({ jsonrpc: '2.0', id, error: { code, message } });
  return {
    received,
    async notify(method, params) {
      await transport?.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) });
    },
    answerLate: (id, result) => answer(id, result),
    async connect(t) {
      transport = t;
      t.onmessage = (message) => {
        received.push(message);
        if (!('id' in message) || !('method' in message)) return;
        const { id, method } = message;
        const params = (message.params ?? {}) as Record<string, unknown>;
        const s = script();
        if (method === 'initialize') {
          void answer(id, {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: 'raw', version: '0.0.0' },
          });
        } else if (method === 'ping') {
          void answer(id, {});
        } else if (method === 'tools/list') {
          if (s.listFails) return void fail(id, -32603, 'listing is broken');
          const index = typeof params['cursor'] === 'string' ? Number(params['cursor']) : 0;
          const page = s.pages?.[index];
          void (page ? answer(id, page) : fail(id, -32602, `no page ${index}`));
        } else if (method === 'tools/call') {
          void answer(id, s.call?.(params) ?? { content: [] });
        } else {
          void fail(id, -32601, `Method not found: ${method}`);
        }
      };
      await t.start();
    },
  };
}

/** A pino logger at trace level whose records land, parsed, in `lines`. */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}
