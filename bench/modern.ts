/**
 * The modern leg (`npm run bench:modern`): echo throughput at 64 calls in flight over Streamable
 * HTTP from an SDK v2 client pinned to 2026-07-28, through mcp-normalizer (`serve --http`,
 * `concurrency: 64`) and through the bare v2 passthrough (`passthrough-modern.ts`), each in front
 * of the same bench echo server over stdio. Run with 10 and with 2,000 tools behind each target,
 * so the table shows whether a request's cost depends on the size of the catalog (the modern
 * leg builds one server per request: it must stay O(1) in the number of tools). The passthrough's
 * own 2,000 ÷ 10 stands beside it as the control: it holds no catalog, so it reads noise alone.
 *
 * All four targets (two per catalog size) run side by side, and each round visits every one of
 * them, starting with the next each time (never all of one, then all of another), so a noisy
 * neighbour hits all alike; each figure is the median of the per-round ratios with the range the
 * middle half of the rounds fell in. Beside throughput: each target process's own CPU per call
 * (/proc) and the host's. Every loop is bounded in count and by a deadline.
 *
 *   node dist/bench/modern.js [--rounds 5] [--calls 2000]
 */
import './scratch.js';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { cpuTimeOf } from './machine.js';
import { BENCH, echoThroughput, pinnedClient, spawnHttp } from './modern-http.js';
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
 * Echo calls per second through one target's client; the target process's own CPU time and the
 * host's (this process, the SDK client), each in ms per 1,000 calls. The target's CPU is what it
 * costs apart from the client and the echo server it shares the two cores with, and varies far
 * less between runs than throughput.
 */
async function throughput(target: Target): Promise<{ rate: number; cpu: number; host: number }> {
  const pid = target.child.pid as number;
  const before = cpuTimeOf(pid);
  const hostBefore = process.cpuUsage();
  const rate = await echoThroughput([target.client], target.echo, target.name);
  const host = process.cpuUsage(hostBefore);
  const cpu = ((cpuTimeOf(pid) - before) * 1000) / CALLS;
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
/** Each target at 2,000 tools ÷ at 10 tools, paired per round. */
const sizeRows: string[] = [];

/** The median of the per-round ratios `a[i] / b[i]`, with the middle half in brackets. */
function ratio(a: readonly number[], b: readonly number[]): string {
  const ratios = pairedRatios(a, b);
  const range = quartiles(ratios);
  return `${fmt(median(ratios))}×${range === undefined ? '' : ` (${fmt(range[0])}–${fmt(range[1])})`}`;
}
/** One target's figures, one entry per round. */
interface Series {
  readonly rate: number[];
  readonly cpu: number[];
  readonly host: number[];
}
const SIZES = [10, 2000] as const;
// Both catalog sizes run in the same rounds, so "2,000 vs 10 tools" is paired per round too (two
// sizes started minutes apart would carry the machine's drift between them).
const targets: { tools: number; normalizer: Target; passthrough: Target }[] = [];
try {
  for (const tools of SIZES) {
    targets.push({
      tools,
      normalizer: await start('normalizer', tools),
      passthrough: await start('passthrough', tools),
    });
  }
  const all = targets.flatMap(({ normalizer, passthrough }) => [normalizer, passthrough]);
  const series = new Map<Target, Series>(all.map((target) => [target, { rate: [], cpu: [], host: [] }]));
  // Warm-up: JIT, sockets, the first-round wait.
  for (const target of all) await throughput(target);
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with the next target, so none always runs first or last.
    const order = all.map((_, k) => all[(k + round) % all.length] as Target);
    for (const target of order) {
      const { rate, cpu, host } = await throughput(target);
      const figures = series.get(target) as Series;
      figures.rate.push(rate);
      figures.cpu.push(cpu);
      figures.host.push(host);
    }
  }
  for (const { tools, normalizer, passthrough } of targets) {
    const n = series.get(normalizer) as Series;
    const p = series.get(passthrough) as Series;
    hostRows.push(
      `| ${tools} | ${fmt(median(n.host), 0)} | ${fmt(median(p.host), 0)} | ${ratio(n.host, p.host)} |`,
    );
    rows.push(
      `| ${tools} | ${fmt(median(n.rate), 0)} | ${fmt(median(p.rate), 0)} | ${ratio(n.rate, p.rate)} | ${fmt(median(n.cpu), 0)} | ${fmt(median(p.cpu), 0)} | ${ratio(n.cpu, p.cpu)} |`,
    );
  }
  const bySize = (name: Target['name']): [Series, Series] =>
    targets.map((sized) => series.get(sized[name]) as Series) as [Series, Series];
  const [small, large] = bySize('normalizer');
  // The control: the passthrough holds no catalog, so its own 2,000 ÷ 10 is what this machine's
  // noise alone reads in the same rounds.
  const [bareSmall, bareLarge] = bySize('passthrough');
  sizeRows.push(
    `| throughput | ${ratio(large.rate, small.rate)} | ${ratio(bareLarge.rate, bareSmall.rate)} |`,
    `| CPU per call | ${ratio(large.cpu, small.cpu)} | ${ratio(bareLarge.cpu, bareSmall.cpu)} |`,
  );
} finally {
  await Promise.all(targets.flatMap(({ normalizer, passthrough }) => [stop(normalizer), stop(passthrough)]));
}
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
    '| tools | through mcp-normalizer | through the passthrough | ratio (middle half) |',
    '| ---: | ---: | ---: | :--- |',
    ...hostRows,
    '',
    '2,000 tools ÷ 10 tools, the two sizes in the same rounds (median, middle half); the passthrough holds no catalog, so its column is the noise floor:',
    '',
    '| figure | mcp-normalizer | bare v2 passthrough |',
    '| :--- | :--- | :--- |',
    ...sizeRows,
    '',
  ].join('\n'),
);
