/**
 * `node dist/bench/host-parse.js`: what one echo answer costs a 2025 host to read, the SDK v1
 * client's way (`JSON.parse`, its JSON-RPC message schema, then `CallToolResultSchema`), for the
 * passthrough's answer (the downstream's bare text block) and for mcp-normalizer's (the default
 * `results` envelope as `structuredContent` and as text, and `isError`, contract F), rendered by
 * the product's own normalizer and renderer. Also the envelope without `isError` and without
 * `structuredContent`, to show which part costs what (neither is a format the product sends).
 *
 * "cold" touches 8 MiB between two parses, as the other processes on the machine do between two
 * sequential calls of the echo bench (the host sleeps ~150 µs while they run); "warm" parses in a
 * tight loop. Variants take turns within each iteration, so drift hits all alike. Bounded: a
 * fixed number of iterations.
 *
 *   node dist/bench/host-parse.js [--iterations 4000]
 */
import { parseArgs } from 'node:util';
import { CallToolResultSchema, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { normalizeCallToolResult } from '../src/core/normalize.js';
import { renderCallToolResult } from '../src/upstream/render.js';
import { median } from './stats.js';

const { values } = parseArgs({ options: { iterations: { type: 'string', default: '4000' } } });
const ITERATIONS = Number(values.iterations);

/** The bench echo server's answer to `echo {message: "m1"}`. */
const echoed = { content: [{ type: 'text', text: 'm1' }] };
const envelope = renderCallToolResult(
  normalizeCallToolResult(echoed, {
    server: 's00',
    tool: 'echo',
    elapsedMs: 6,
    maxInlineBytes: 65536,
    inbandErrors: true,
  }),
  { format: 'results', media: 'artifacts' },
) as Record<string, unknown>;
const { isError: _isError, ...withoutIsError } = envelope;
const { structuredContent: _structured, ...withoutStructured } = envelope;

const line = (result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id: 1, result });
const VARIANTS: ReadonlyArray<readonly [string, string]> = [
  ['passthrough: bare text block', line(echoed)],
  ['mcp-normalizer: results envelope', line(envelope)],
  ['the envelope, less isError', line(withoutIsError)],
  ['the envelope, less structuredContent', line(withoutStructured)],
];

function read(text: string): void {
  const message = JSONRPCMessageSchema.parse(JSON.parse(text)) as { result: unknown };
  CallToolResultSchema.parse(message.result);
}

/** Writes one byte per cache line of 8 MiB, so the next parse finds little of its data and code in the near caches. */
const scratch = new Uint8Array(8 << 20);
function evict(): void {
  for (let i = 0; i < scratch.length; i += 64) scratch[i] = (scratch[i] ?? 0) + 1;
}

const cold = VARIANTS.map((): number[] => []);
const warm = VARIANTS.map((): number[] => []);
for (let i = 0; i < ITERATIONS; i++) {
  VARIANTS.forEach(([, text], k) => {
    evict();
    let start = process.hrtime.bigint();
    read(text);
    cold[k]?.push(Number(process.hrtime.bigint() - start) / 1000);
    start = process.hrtime.bigint();
    for (let j = 0; j < 10; j++) read(text);
    warm[k]?.push(Number(process.hrtime.bigint() - start) / 10_000);
  });
}

const rows = VARIANTS.map(
  ([name, text], k) =>
    `| ${name} | ${Buffer.byteLength(text)} | ${median(cold[k] ?? []).toFixed(1)} | ${median(warm[k] ?? []).toFixed(2)} |`,
);
process.stdout.write(
  [
    `The SDK v1 client reading one echo answer, median µs over ${ITERATIONS} iterations:`,
    '',
    '| answer | bytes | cold | warm |',
    '| :--- | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n'),
);
