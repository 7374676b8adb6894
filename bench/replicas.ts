/**
 * Replicas behind nginx (`npm run bench:replicas`, issue 17): echo throughput at 64 calls in
 * flight from SDK v2 clients pinned to 2026-07-28, through nginx in front of ONE replica and
 * through nginx in front of THREE (the shipped `deploy/nginx/mcp-normalizer.conf`), each replica
 * a `serve --http` in front of the bench echo server over stdio. Both nginx instances run at
 * once and the rounds alternate between them, so a noisy neighbour hits both alike; the figure
 * is the median of the per-round ratios (three / one) with the middle half of the rounds. Every
 * loop is bounded in count and by a deadline.
 *
 *   node dist/bench/replicas.js [--rounds 5] [--calls 2000] [--in-flight 64]
 */
import './scratch.js';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { BENCH, echoThroughput, pinnedClient, spawnHttp } from './modern-http.js';
import { startNginx, type Nginx } from './nginx.js';
import { median, pairedRatios, quartiles } from './stats.js';
import { ROOT } from './targets.js';

const ROUNDS = BENCH.rounds;
const CALLS = BENCH.calls;
const IN_FLIGHT = BENCH.inFlight;

interface Replica {
  readonly child: ChildProcess;
  readonly address: string;
}

/** One `serve --http` replica in front of the bench echo server; resolves with its address. */
async function replica(config: string, id: string): Promise<Replica> {
  const { child, url } = await spawnHttp(
    `replica ${id}`,
    [join(ROOT, 'dist/src/cli/main.js'), 'serve', '--http', '--port', '0', '--config', config],
    { ...process.env, MCP_NORMALIZER_REPLICA: id },
  );
  return { child, address: new URL(url).host };
}

/** `IN_FLIGHT` pinned clients, one request each at a time: 2026 requests need no affinity. */
function clients(url: string): Promise<Client[]> {
  return Promise.all(Array.from({ length: IN_FLIGHT }, () => pinnedClient('bench-replicas', url)));
}

/** Echo calls per second over `pool`, one in flight per client. */
function throughput(pool: readonly Client[]): Promise<number> {
  return echoThroughput(pool, 's00_echo', 'replicas');
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-bench-replicas-'));
const config = join(dir, 'bench.yaml');
writeFileSync(
  config,
  [
    'log_level: warn',
    'http:',
    '  replica_id: ${MCP_NORMALIZER_REPLICA:-}',
    'servers:',
    '  s00:',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ${JSON.stringify([join(ROOT, 'dist/bench/servers/echo.js'), '--tools', '8'])}`,
    `    concurrency: ${IN_FLIGHT}`,
    '',
  ].join('\n'),
);
const replicas = await Promise.all(['r1', 'r2', 'r3'].map((id) => replica(config, id)));
const fronts: Nginx[] = [];
try {
  const one = await startNginx([{ id: 'r1', address: replicas[0]!.address }]);
  fronts.push(one);
  const three = await startNginx(replicas.map((r, i) => ({ id: `r${i + 1}`, address: r.address })));
  fronts.push(three);
  const viaOne = await clients(`${one.url}/mcp`);
  const viaThree = await clients(`${three.url}/mcp`);
  // Warm-up: JIT, sockets, the first-round wait, nginx's keepalive pool.
  await throughput(viaOne);
  await throughput(viaThree);
  const o: number[] = [];
  const t: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['one', 'three'] : ['three', 'one'];
    for (const which of order)
      (which === 'one' ? o : t).push(await throughput(which === 'one' ? viaOne : viaThree));
  }
  const ratios = pairedRatios(t, o);
  const range = quartiles(ratios);
  const fmt = (n: number, digits = 2): string => n.toFixed(digits);
  process.stdout.write(
    [
      `Replicas behind nginx, 2026-07-28 echo at ${IN_FLIGHT} in flight, ${CALLS} calls × ${ROUNDS} alternating rounds, ${cpus().length} cores (calls/s, median)`,
      '',
      '| nginx in front of | calls/s |',
      '| :--- | ---: |',
      `| 1 replica | ${fmt(median(o), 0)} |`,
      `| 3 replicas | ${fmt(median(t), 0)} |`,
      '',
      `3 replicas / 1 replica: ${fmt(median(ratios))}× ${range === undefined ? '' : `(middle half ${fmt(range[0])}–${fmt(range[1])})`}`,
      '',
    ].join('\n'),
  );
  await Promise.all([...viaOne, ...viaThree].map((client) => client.close().catch(() => {})));
} finally {
  await Promise.all(fronts.map((front) => front.stop()));
  for (const r of replicas) r.child.kill('SIGTERM');
}
