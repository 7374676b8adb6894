/**
 * The modern leg (`npm run bench:modern`): echo throughput at 64 calls in flight over Streamable
 * HTTP from an SDK v2 client pinned to 2026-07-28, through mcp-normalizer (`serve --http`,
 * `concurrency: 64`) and through the bare v2 passthrough (`passthrough-modern.ts`), each in front
 * of the same bench echo server over stdio. Run with 10 and with 2,000 tools behind each target,
 * so the table shows whether a request's cost depends on the size of the catalog (the modern
 * leg builds one server per request: it must stay O(1) in the number of tools).
 *
 * Rounds alternate between the targets (never all of one, then all of the other), so a noisy
 * neighbour hits both alike; each figure is the median of the per-round ratios with the range the
 * middle half of the rounds fell in. Every loop is bounded in count and by a deadline.
 *
 *   node dist/bench/modern.js [--rounds 5] [--calls 2000]
 */
import './scratch.js';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { BENCH, echoThroughput, pinnedClient, processCpuMs, spawnHttp } from './modern-http.js';
import { median, pairedRatios, quartiles } from './stats.js';
import { ROOT } from './targets.js';

const ROUNDS = BENCH.rounds;
const CALLS = BENCH.calls;
const IN_FLIGHT = BENCH.inFlight;
const ECHO_SERVER = join(ROOT, 'dist/bench/servers/echo.js');

interface Target {
  readonly name: 'normalizer' | 'passthrough';
  readonly child: ChildProcess;
  readonly client: Client;
  readonly echo: string;
}

/** Starts a target, waits for its URL on stderr, connects a pinned v2 client, checks one echo. */
async function start(name: Target['name'], tools: number): Promise<Target> {
  const downstream = [process.execPath, ECHO_SERVER, '--tools', String(tools - 2)];
  let args: string[];
  if (name === 'passthrough') {
    args = [join(ROOT, 'dist/bench/passthrough-modern.js'), '--', ...downstream];
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-bench-modern-'));
    const config = join(dir, 'bench.yaml');
    writeFileSync(
      config,
      [
        'servers:',
        '  s00:',
        `    command: ${JSON.stringify(downstream[0])}`,
        `    args: ${JSON.stringify(downstream.slice(1))}`,
        `    concurrency: ${IN_FLIGHT}`,
        '',
      ].join('\n'),
    );
    args = [join(ROOT, 'dist/src/cli/main.js'), 'serve', '--http', '--port', '0', '--config', config];
  }
  const { child, url } = await spawnHttp(name, args);
  const client = await pinnedClient('bench-modern', url);
  const echo = name === 'normalizer' ? 's00_echo' : 'echo';
  const listed = await client.listTools();
  if (!listed.tools.some((tool) => tool.name === echo)) throw new Error(`${name}: no ${echo} in tools/list`);
  const answer = JSON.stringify(
    await client.callTool({ name: echo, arguments: { message: 'bench-marker' } }),
  );
  if (!answer.includes('bench-marker'))
    throw new Error(`${name}: echo did not come back: ${answer.slice(0, 200)}`);
  return { name, child, client, echo };
}

/**
 * Echo calls per second through one target's client, and the target process's own CPU time per
 * 1,000 calls (ms; NaN without /proc). The CPU figure is what the target costs, apart from the
 * client and the echo server it shares the two cores with, and varies far less between runs.
 */
async function throughput(target: Target): Promise<{ rate: number; cpu: number; host: number }> {
  const before = processCpuMs(target.child.pid);
  const hostBefore = process.cpuUsage();
  const rate = await echoThroughput([target.client], target.echo, target.name);
  const host = process.cpuUsage(hostBefore);
  const after = processCpuMs(target.child.pid);
  const cpu = before === undefined || after === undefined ? NaN : ((after - before) * 1000) / CALLS;
  return { rate, cpu, host: (host.user + host.system) / CALLS };
}

async function stop(target: Target): Promise<void> {
  await target.client.close().catch(() => {});
  target.child.kill('SIGTERM');
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);
const rows: string[] = [];
/** The bench process's own CPU per 1,000 calls: the host's side (the client parses each answer). */
const hostRows: string[] = [];
const perTools = new Map<number, number[]>();
for (const tools of [10, 2000]) {
  const normalizer = await start('normalizer', tools);
  const passthrough = await start('passthrough', tools);
  try {
    // Warm-up: JIT, sockets, the first-round wait.
    await throughput(normalizer);
    await throughput(passthrough);
    const n: number[] = [];
    const p: number[] = [];
    const nCpu: number[] = [];
    const pCpu: number[] = [];
    const nHost: number[] = [];
    const pHost: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [normalizer, passthrough] : [passthrough, normalizer];
      for (const target of order) {
        const { rate, cpu, host } = await throughput(target);
        (target === normalizer ? n : p).push(rate);
        (target === normalizer ? nCpu : pCpu).push(cpu);
        (target === normalizer ? nHost : pHost).push(host);
      }
    }
    perTools.set(tools, n);
    const ratios = pairedRatios(n, p);
    const range = quartiles(ratios);
    const cpuRatios = pairedRatios(nCpu, pCpu);
    const cpuRange = quartiles(cpuRatios);
    hostRows.push(
      `| ${tools} | ${fmt(median(nHost), 0)} | ${fmt(median(pHost), 0)} | ${fmt(median(pairedRatios(nHost, pHost)))}× |`,
    );
    rows.push(
      `| ${tools} | ${fmt(median(n), 0)} | ${fmt(median(p), 0)} | ${fmt(median(ratios))}× ${range === undefined ? '' : `(${fmt(range[0])}–${fmt(range[1])})`} | ${fmt(median(nCpu), 0)} | ${fmt(median(pCpu), 0)} | ${fmt(median(cpuRatios))}× ${cpuRange === undefined ? '' : `(${fmt(cpuRange[0])}–${fmt(cpuRange[1])})`} |`,
    );
  } finally {
    await Promise.all([stop(normalizer), stop(passthrough)]);
  }
}
const small = perTools.get(10) ?? [];
const large = perTools.get(2000) ?? [];
process.stdout.write(
  [
    `Modern HTTP (2026-07-28), echo at ${IN_FLIGHT} in flight, ${CALLS} calls × ${ROUNDS} alternating rounds (calls/s, median)`,
    '',
    '| tools | mcp-normalizer | bare v2 passthrough | ratio (middle half) | CPU ms / 1,000 calls: mcp-normalizer | passthrough | ratio (middle half) |',
    '| ---: | ---: | ---: | :--- | ---: | ---: | :--- |',
    ...rows,
    '',
    'The host (this bench process, the SDK v2 client), CPU ms per 1,000 calls while it drove each target:',
    '',
    '| tools | through mcp-normalizer | through the passthrough | ratio |',
    '| ---: | ---: | ---: | :--- |',
    ...hostRows,
    '',
    `mcp-normalizer at 2,000 tools vs 10 tools: ${fmt(median(large) / median(small))}×`,
    '',
  ].join('\n'),
);
