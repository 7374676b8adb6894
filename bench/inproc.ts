/**
 * In-process echo: the JavaScript cost of one call through mcp-normalizer against the bare
 * passthrough, with no processes, pipes or system calls in the way (the SDK's InMemoryTransport
 * links every hop). It isolates what the stdio suite cannot: which part of the per-call CPU is
 * ours. Targets alternate per round (passthrough, normalizer, ...) in one process, so machine
 * drift cancels in the per-round ratio.
 *
 * Both targets sit in front of the same in-memory echo server (the bench server's `echo`: one
 * text block with the message), are called by the same SDK `Client` with
 * `client.request(tools/call, CallToolResultSchema)`, and run with mcp-normalizer's defaults
 * (config loaded from YAML by the real loader, log level info).
 *
 * Usage: `npm run bench:inproc` or `node dist/bench/inproc.js [--rounds 10] [--calls 2000]`;
 * add `--cpu-prof` to node for a profile of both targets in one file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createProxy } from '../src/app/proxy.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/log/logger.js';
import { makePassthroughServer } from './passthrough-server.js';
import { makeEchoServer } from './servers/echo-server.js';
import { median } from './stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    calls: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '3000' },
    // One target only (`passthrough` or `normalizer`), e.g. for a CPU profile of it alone.
    only: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
/** No round may take longer than this: the run stops with an error instead (bounded loops). */
const ROUND_BUDGET_MS = 60_000;

async function linkedClient(connect: (transport: InMemoryTransport) => Promise<unknown>): Promise<Client> {
  const [near, far] = InMemoryTransport.createLinkedPair();
  await connect(far);
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  await client.connect(near);
  return client;
}

/** bench/passthrough.ts, in memory: its `Server` forwarding to a `Client`. */
async function passthrough(): Promise<Client> {
  const downstream = await linkedClient((transport) => makeEchoServer().connect(transport));
  const server = makePassthroughServer(downstream, Promise.resolve());
  return linkedClient((transport) => server.connect(transport));
}

/** mcp-normalizer with its defaults, its one downstream in memory. */
async function normalizer(): Promise<Client> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-inproc-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, 'servers:\n  s00:\n    command: node\n    args: [echo.js]\n');
  const loaded = await loadConfig(file).finally(() => rmSync(dir, { recursive: true, force: true }));
  if (loaded.config === undefined) throw new Error(`bench config: ${JSON.stringify(loaded.errors)}`);
  const proxy = createProxy(loaded.config, {
    logger: createLogger({ level: loaded.config.logLevel }),
    pool: {
      transports: {
        create: () => {
          const [near, far] = InMemoryTransport.createLinkedPair();
          void makeEchoServer().connect(far);
          return near;
        },
      },
    },
  });
  await proxy.start();
  // As `serve` connects a 2025 stdio client: plain calls take the direct path.
  return linkedClient((transport) => proxy.upstream.connect(transport, { direct: true }));
}

async function callEcho(client: Client, name: string, i: number): Promise<void> {
  const result = await client.request(
    { method: 'tools/call', params: { name, arguments: { message: `hello ${i}` } } },
    CallToolResultSchema,
  );
  if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result)}`);
}

/** µs per call over `calls` sequential calls (one process, nothing waits on I/O: CPU time). */
async function round(client: Client, name: string, calls: number): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < calls; i++) {
    await callEcho(client, name, i);
    if (performance.now() - began > ROUND_BUDGET_MS) throw new Error(`round over ${ROUND_BUDGET_MS} ms`);
  }
  return ((performance.now() - began) * 1000) / calls;
}

const targets = [
  ...(values.only !== 'normalizer'
    ? [{ label: 'passthrough', name: 'echo', client: await passthrough() }]
    : []),
  ...(values.only !== 'passthrough'
    ? [{ label: 'mcp-normalizer', name: 's00_echo', client: await normalizer() }]
    : []),
];
for (const target of targets) await round(target.client, target.name, WARMUP);

const walls: Record<string, number[]> = {};
const ratios: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const perRound: number[] = [];
  for (const target of targets) {
    const wall = await round(target.client, target.name, CALLS);
    (walls[target.label] ??= []).push(wall);
    perRound.push(wall);
  }
  if (perRound.length === 2) ratios.push(perRound[1]! / perRound[0]!);
}

process.stdout.write(
  `in-process echo, ${ROUNDS} rounds × ${CALLS} calls, Node ${process.version}\n` +
    targets.map((t) => `${t.label}: ${median(walls[t.label]!).toFixed(1)} µs/call`).join('\n') +
    (ratios.length > 0
      ? `\nmcp-normalizer ÷ passthrough (median of per-round ratios): ${median(ratios).toFixed(2)}×\n`
      : '\n'),
);
for (const target of targets) await target.client.close();
process.exit(0);
