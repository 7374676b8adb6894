/**
 * Issue 59's measurement: the context a multi-step task costs the model in each expose mode.
 * The task, in front of two real servers (server-everything and server-memory, over stdio):
 * add 20 and 22, keep the sum as an entity in memory, read the graph back and report it.
 * Each mode runs it as an agent would, through `serve` over stdio with the SDK v1 client:
 *
 * - `all`: tools/list (every definition), then three calls;
 * - `search`: the pair listed, three searches (one per tool), three calls through `call_tool`;
 * - `code`: three tools listed, the same three searches (for the declarations), one `run_code`.
 *
 * Counted: the bytes the model reads (the listed definitions as JSON, and every answer's content
 * blocks, which is what a host hands the model) and writes (each call's name and arguments).
 * `node dist/bench/code-context.js` (~20 s); nothing is asserted.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from './targets.js';

const require = createRequire(import.meta.url);

/** The absolute path of an installed package's first bin. */
function binOf(name: string): string {
  const manifestPath = require.resolve(`${name}/package.json`);
  const manifest = require(manifestPath) as { bin: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0];
  return join(dirname(manifestPath), bin ?? '');
}

type Mode = 'all' | 'search' | 'code';

function config(mode: Mode, dir: string): string {
  const file = join(dir, `${mode}.yaml`);
  writeFileSync(
    file,
    [
      'log_level: warn',
      `expose: ${mode}`,
      'list_wait_ms: 60000',
      'servers:',
      '  everything:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(binOf('@modelcontextprotocol/server-everything'))}, "stdio"]`,
      '  memory:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(binOf('@modelcontextprotocol/server-memory'))}]`,
      `    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(dir, `${mode}-memory.jsonl`))} }`,
      '',
    ].join('\n'),
  );
  return file;
}

const SNIPPET = `const sum = await tools["everything_get-sum"]({ a: 20, b: 22 });
await tools.memory_create_entities({ entities: [{ name: "answer", entityType: "number", observations: [String(sum)] }] });
const graph = await tools.memory_read_graph({});
return graph.entities.map((entity) => entity.name + ": " + entity.observations.join(", "));`;

const STEPS: readonly (readonly [string, Record<string, unknown>])[] = [
  ['everything_get-sum', { a: 20, b: 22 }],
  [
    'memory_create_entities',
    { entities: [{ name: 'answer', entityType: 'number', observations: ['The sum of 20 and 22 is 42.'] }] },
  ],
  ['memory_read_graph', {}],
];
const QUERIES = ['add two numbers', 'create entities in the knowledge graph', 'read the whole graph'];

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

async function measure(mode: Mode, dir: string) {
  const client = new Client({ name: 'context-bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, 'dist/src/cli/main.js'), 'serve', '--config', config(mode, dir)],
      stderr: 'ignore',
    }),
  );
  let read = 0;
  let written = 0;
  /** Bytes read by phase: the listing, the searches, the work's answers. */
  const phases = { list: 0, search: 0, work: 0 };
  const call = async (name: string, args: Record<string, unknown>): Promise<void> => {
    written += bytes({ name, arguments: args });
    const result = await client.callTool({ name, arguments: args });
    if (result.isError === true)
      throw new Error(`${mode}: ${name} failed: ${JSON.stringify(result).slice(0, 300)}`);
    read += bytes(result.content);
    phases[name === 'search_tools' ? 'search' : 'work'] += bytes(result.content);
  };
  try {
    const { tools } = await client.listTools();
    read += bytes(tools);
    phases.list = bytes(tools);
    if (mode !== 'all') for (const query of QUERIES) await call('search_tools', { query });
    if (mode === 'all') for (const [name, args] of STEPS) await call(name, args);
    if (mode === 'search')
      for (const [name, args] of STEPS) await call('call_tool', { name, arguments: args });
    if (mode === 'code') await call('run_code', { code: SNIPPET });
    return { mode, listed: tools.length, ...phases, read, written, total: read + written };
  } finally {
    await client.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-code-context-'));
const rows = [];
for (const mode of ['all', 'search', 'code'] as const) rows.push(await measure(mode, dir));
const plain = rows[0]?.total ?? 1;
console.log(
  '| mode | tools listed | listing | searches | answers | bytes read | bytes written | total | ÷ plain |',
);
console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
for (const row of rows)
  console.log(
    `| ${row.mode} | ${row.listed} | ${row.list.toLocaleString('en-US')} | ${row.search.toLocaleString('en-US')} | ${row.work.toLocaleString('en-US')} | ${row.read.toLocaleString('en-US')} | ${row.written.toLocaleString('en-US')} | ${row.total.toLocaleString('en-US')} | ${(row.total / plain).toFixed(2)}× |`,
  );
