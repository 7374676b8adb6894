/**
 * `npm run bench:core`: throughput of the hot path, normalize → render, on three typical results.
 *
 * Each case is warmed up, then measured in several rounds, each bounded in time and in count; the
 * median round is reported. JSON.parse / JSON.stringify are counted per call by wrapping the
 * globals for a separate, short pass (the wrapping would skew the timings, so it is not timed).
 */
import { normalizeCallToolResult } from '../src/core/normalize.js';
import type { NormalizeOptions } from '../src/core/normalize.js';
import type { Result } from '../src/core/result.js';
import { renderCallToolResult } from '../src/upstream/render.js';
import type { RenderOptions } from '../src/upstream/render.js';

/** Rounds per case; the median is reported. */
const ROUNDS = 7;
/** Upper bounds of one round. */
const ROUND_MS = 250;
const ROUND_MAX_OPS = 200_000;
const WARMUP_MS = 300;
/** Calls of the counting pass. */
const COUNT_CALLS = 20;

const normalizeOptions: NormalizeOptions = {
  server: 'bench',
  tool: 'case',
  elapsedMs: 1,
  maxInlineBytes: 65536,
  inbandErrors: true,
};
const renderOptions: RenderOptions = { format: 'results', media: 'artifacts' };

/** About 1 KB of JSON, as an SDK server sends it: structuredContent plus the same JSON as text. */
function structured1k(): unknown {
  const rows = Array.from({ length: 12 }, (_v, i) => ({
    id: i,
    name: `item-${i}`,
    price: i * 1.25,
    ok: i % 2 === 0,
  }));
  const value = { count: rows.length, rows };
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** About 1 MB of JSON in one text block, no structuredContent. */
function jsonText1m(): unknown {
  const row = { id: 0, name: 'a name of some length', tags: ['alpha', 'beta', 'gamma'], score: 0.123456 };
  const rows = Array.from({ length: 11_000 }, (_v, i) => ({ ...row, id: i }));
  return { content: [{ type: 'text', text: JSON.stringify({ rows }) }] };
}

/** 200 small blocks: text, image, embedded resource and resource_link, 50 of each. */
function mixed200(): unknown {
  const png =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';
  const content = Array.from({ length: 200 }, (_v, i) => {
    switch (i % 4) {
      case 0:
        return { type: 'text', text: `line ${i}` };
      case 1:
        return { type: 'image', data: png, mimeType: 'image/png' };
      case 2:
        return {
          type: 'resource',
          resource: { uri: `file:///r/${i}.txt`, mimeType: 'text/plain', text: `body ${i}` },
        };
      default:
        return { type: 'resource_link', uri: `file:///l/${i}.txt`, name: `${i}.txt`, mimeType: 'text/plain' };
    }
  });
  return { content };
}

interface Timing {
  readonly usPerOp: number;
  readonly opsPerSec: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Median of ROUNDS time- and count-bounded rounds of `fn`, after a bounded warm-up. */
function measure(fn: () => unknown): Timing {
  const warmupEnd = performance.now() + WARMUP_MS;
  for (let i = 0; i < ROUND_MAX_OPS && performance.now() < warmupEnd; i++) fn();
  const perOp: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    const end = start + ROUND_MS;
    let ops = 0;
    do {
      fn();
      ops++;
    } while (ops < ROUND_MAX_OPS && performance.now() < end);
    perOp.push(((performance.now() - start) * 1000) / ops);
  }
  const usPerOp = median(perOp);
  return { usPerOp, opsPerSec: 1e6 / usPerOp };
}

/** JSON.parse and JSON.stringify calls per normalize+render, counted by wrapping the globals. */
function countJsonCalls(fn: () => unknown): { parses: number; stringifies: number } {
  const { parse, stringify } = JSON;
  let parses = 0;
  let stringifies = 0;
  JSON.parse = ((...args: Parameters<typeof parse>) => {
    parses++;
    return parse(...args);
  }) as typeof parse;
  JSON.stringify = ((...args: Parameters<typeof stringify>) => {
    stringifies++;
    return stringify(...args);
  }) as typeof stringify;
  try {
    for (let i = 0; i < COUNT_CALLS; i++) fn();
  } finally {
    JSON.parse = parse;
    JSON.stringify = stringify;
  }
  return { parses: parses / COUNT_CALLS, stringifies: stringifies / COUNT_CALLS };
}

const cases: Array<[string, unknown]> = [
  ['1 KB structured (+ same JSON as text)', structured1k()],
  ['1 MB JSON in one text block', jsonText1m()],
  ['200 mixed blocks', mixed200()],
];

const rows: string[][] = [
  ['case', 'total µs/op', 'ops/s', 'normalize µs', 'render µs', 'parses/call', 'stringifies/call'],
];
for (const [name, raw] of cases) {
  const normalized: Result = normalizeCallToolResult(raw, normalizeOptions);
  const total = measure(() =>
    renderCallToolResult(normalizeCallToolResult(raw, normalizeOptions), renderOptions),
  );
  const normalizeOnly = measure(() => normalizeCallToolResult(raw, normalizeOptions));
  const renderOnly = measure(() => renderCallToolResult(normalized, renderOptions));
  const counts = countJsonCalls(() =>
    renderCallToolResult(normalizeCallToolResult(raw, normalizeOptions), renderOptions),
  );
  rows.push([
    name,
    total.usPerOp.toFixed(1),
    Math.round(total.opsPerSec).toLocaleString('en-US'),
    normalizeOnly.usPerOp.toFixed(1),
    renderOnly.usPerOp.toFixed(1),
    String(counts.parses),
    String(counts.stringifies),
  ]);
}

const widths = rows[0]?.map((_h, col) => Math.max(...rows.map((row) => (row[col] ?? '').length))) ?? [];
const lines = rows.map((row) =>
  row.map((cell, col) => (col === 0 ? cell.padEnd : cell.padStart).call(cell, widths[col] ?? 0)).join('  '),
);
lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
process.stdout.write(
  `normalize+render, format results, media artifacts, Node ${process.version}, median of ${ROUNDS} rounds\n${lines.join('\n')}\n`,
);
