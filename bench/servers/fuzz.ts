/**
 * Bench server for `bench/chaos.ts`: a raw JSON-RPC stdio server (2025 era) whose one tool,
 * `fuzz {seed}`, answers at once with a result drawn from `seed`: valid, odd and malformed
 * CallToolResults of every kind a buggy server writes (wrong types, missing fields, huge and
 * empty values, bad base64, prototype keys, deep nesting, in-band conventions, non-objects).
 */
import { createInterface } from 'node:readline';

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

function deep(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const VALUES: readonly unknown[] = [
  null,
  0,
  -1,
  1e308,
  '',
  'text',
  '{"json": true}',
  '[1,2',
  true,
  [],
  {},
  { success: false, error: 'in-band' },
  { status: 'ERROR', error: { code: 'X', message: 'm' } },
  { results: { ok: 1 }, meta_data: { is_error: true, error_type: 'x' } },
  { ['__proto__']: { polluted: true } },
  { constructor: 'c' },
  'x'.repeat(100_000),
  deep(40),
];

const BLOCKS: readonly ((next: () => number) => unknown)[] = [
  (next) => ({ type: 'text', text: String(pick(next, VALUES)) }),
  (next) => ({ type: 'text', text: JSON.stringify(pick(next, VALUES)) ?? 'undefined' }),
  (next) => ({
    type: 'image',
    data: pick(next, ['iVBORw0KGgo=', '!!notbase64', '', 42]),
    mimeType: pick(next, ['image/png', 'constructor', '', undefined]),
  }),
  (next) => ({ type: 'audio', data: 'UklGRg==', mimeType: pick(next, ['audio/wav', '__proto__']) }),
  (next) => ({
    type: 'resource',
    resource: pick(next, [{ uri: 'file:///../../etc/passwd', text: 'x' }, { uri: 42 }, null]),
  }),
  (next) => ({ type: 'resource_link', uri: pick(next, ['file:///a', '', 7]), name: 'n' }),
  (next) => ({ type: pick(next, ['unknown', '', 7, null]) }),
  (next) => pick(next, VALUES),
];

/** One result for `seed`. */
function result(seed: number): unknown {
  const next = random(seed);
  const shape = Math.floor(next() * 10);
  if (shape === 0) return pick(next, VALUES); // not an object at all, often
  const out: Record<string, unknown> = {};
  const count = Math.floor(next() * 4);
  out['content'] =
    next() < 0.1 ? pick(next, VALUES) : Array.from({ length: count }, () => pick(next, BLOCKS)(next));
  if (next() < 0.5) out['structuredContent'] = pick(next, VALUES);
  if (next() < 0.3) out['isError'] = pick(next, [true, false, 'yes', 1]);
  if (next() < 0.2)
    out['_meta'] = pick(next, [
      { ui: { resourceUri: 'ui://x/y' } },
      { 'io.modelcontextprotocol/related-task': 1 },
      { 'io.modelcontextprotocol/related-task': { taskId: 7 } },
      // Keys a host's schema types: a progress token must be a string or an integer.
      { progressToken: {} },
      { progressToken: 1.5 },
      { progressToken: 'p-1' },
      { ui: 5, nested: deep(40) },
      'bad',
    ]);
  if (next() < 0.1) out['extra'] = pick(next, VALUES);
  return out;
}

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line) as {
    id?: number | string;
    method?: string;
    params?: Record<string, unknown>;
  };
  if (message.id === undefined || message.method === undefined) return;
  switch (message.method) {
    case 'initialize':
      return send({
        jsonrpc: '2.0',
        id: message.id,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'fuzz', version: '1' },
        },
      });
    case 'tools/list':
      return send({
        jsonrpc: '2.0',
        id: message.id,
        result: {
          tools: [
            { name: 'fuzz', inputSchema: { type: 'object', properties: { seed: { type: 'number' } } } },
          ],
        },
      });
    case 'tools/call': {
      const seed = Number((message.params?.['arguments'] as { seed?: number } | undefined)?.seed ?? 0);
      return send({ jsonrpc: '2.0', id: message.id, result: result(seed) });
    }
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
  }
});
