/**
 * The bench downstream's MCP server, built on the SDK's low-level `Server` so that its own cost is
 * as small as the SDK allows (the physical limit the issue measures against).
 *
 * Tools:
 * - `echo {message}` → one text block with the message;
 * - `big {}` → one text block holding a ~1 MiB JSON document (built once, on first use);
 * - `extraTools` more tools `tool_000 … ` with realistic descriptions and schemas, for tools/list.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { BIG_RESULT_BYTES } from './echo-constants.js';

/**
 * The bench downstream's `Server`: `echo`, `big`, and `extraTools` catalog tools. The stdio and
 * HTTP entry point is `echo.ts`; `bench/inproc.ts` links this same server in memory.
 */
export function makeEchoServer(extraTools = 0): Server {
  const tools = echoTools(extraTools);
  const server = new Server({ name: 'bench-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => {
    const { name, arguments: args } = request.params;
    if (name === 'echo') return { content: [{ type: 'text', text: String(args?.['message'] ?? '') }] };
    if (name === 'big') return { content: [{ type: 'text', text: big() }] };
    if (tools.some((tool) => tool.name === name)) {
      return { content: [{ type: 'text', text: JSON.stringify({ id: args?.['id'] ?? null }) }] };
    }
    return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
  });
  return server;
}

/** One list per size, shared by every server built with it (each HTTP session builds one). */
const toolLists = new Map<number, Tool[]>();

function echoTools(extraTools: number): Tool[] {
  let tools = toolLists.get(extraTools);
  if (tools === undefined) {
    tools = listTools(extraTools);
    toolLists.set(extraTools, tools);
  }
  return tools;
}

function listTools(extraTools: number): Tool[] {
  return [
    {
      name: 'echo',
      description: 'Return the message unchanged.',
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'Text to send back.' } },
        required: ['message'],
      },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'big',
      description: 'Return a JSON document of about 1 MiB as one text block.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
    },
    ...Array.from({ length: extraTools }, (_, i) => catalogTool(i)),
  ];
}

/** A tool shaped like a real one (a paragraph of description, three typed arguments). */
function catalogTool(i: number): Tool {
  const id = String(i).padStart(3, '0');
  return {
    name: `tool_${id}`,
    description:
      `Look up record ${id} in the bench catalog and return it with its history. ` +
      'Use the filter to narrow the fields and the limit to bound the number of history entries.',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'Record identifier.' },
        filter: { type: 'array', items: { type: 'string' }, description: 'Fields to keep.' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'History entries.' },
      },
      required: ['id'],
    },
    annotations: { readOnlyHint: i % 2 === 0, title: `Record ${id}` },
  };
}

let bigText: string | undefined;

/** Records until the JSON text reaches BIG_RESULT_BYTES (ASCII, so length = bytes). */
function big(): string {
  if (bigText !== undefined) return bigText;
  const records: unknown[] = [];
  let size = 2;
  for (let i = 0; size < BIG_RESULT_BYTES; i += 1) {
    const record = { id: i, name: `record-${i}`, tags: ['alpha', 'beta'], text: 'x'.repeat(64) };
    size += JSON.stringify(record).length + 1;
    records.push(record);
  }
  bigText = JSON.stringify(records);
  return bigText;
}
