/**
 * `npm run bench:start`: how soon a host that spawns the gateway over stdio is answered (issue 27
 * items 4 and 15), with eight downstream servers that each take 3 s to start (the echo fixture
 * behind `sleep 3`), as a host like Claude Code spawns it:
 *
 * - spawn → the answer to `server/discover` (Claude Code waits ~2.6 s, then falls back to
 *   `initialize` and the 2025 protocol);
 * - spawn → the answer to `initialize`;
 * - a `server/discover` written 300 ms after the spawn, while the gateway loads → its answer;
 * - spawn → a working server's tool listed and called, beside one that never starts: two Node
 *   servers on the SDK (the echo fixture; each takes ~0.5 s of CPU to load, on the gateway's
 *   cores), and a hand-written server beside a silent process, which leaves the gateway's own
 *   start; each pair with a 2025 and a 2026 host.
 *
 * Runs each `--runs` times (default 5) and prints one JSON line with the medians (ms).
 * `BENCH_CLI=<path to main.js>` times another build (a worktree's) the same way, side by side.
 * Loopback only (stdio); every run is bounded in time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = process.env['BENCH_CLI'] ?? join(ROOT, 'dist', 'src', 'cli', 'main.js');
const ECHO = join(ROOT, 'dist', 'fixtures', 'servers', 'echo.js');
const RAW = join(ROOT, 'dist', 'fixtures', 'servers', 'raw.js');
const RUN_BOUND_MS = 20_000;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);

function config(entries: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-bench-start-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, ['servers:', ...entries].join('\n'));
  return file;
}

/** An echo server that starts after `sleep <seconds>`, or never (`gate` never created). */
function echoEntry(name: string, start: { sleep: number } | 'never'): string {
  const command =
    start === 'never'
      ? `${JSON.stringify(process.execPath)} ${JSON.stringify(ECHO)} --start-after=/nonexistent/gate`
      : `sleep ${start.sleep}; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(ECHO)}`;
  return `  ${name}:\n    command: sh\n    args: [-c, ${JSON.stringify(command)}]\n    protocol: legacy`;
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * Spawns `serve` on `file`, sends `requests` in order (each after the previous answer), times each
 * answer from the spawn. `firstAfterMs`: the first request is written that long after the spawn.
 */
async function timeAnswers(
  file: string,
  requests: { method: string; params: Record<string, unknown>; until?: (result: unknown) => boolean }[],
  firstAfterMs = 0,
): Promise<number[]> {
  const began = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const times: number[] = [];
  try {
    let buffer = '';
    const waiting = new Map<number, (message: { result?: unknown }) => void>();
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, end)) as { id?: number; result?: unknown };
        buffer = buffer.slice(end + 1);
        if (message.id !== undefined) waiting.get(message.id)?.(message);
      }
    });
    let id = 0;
    const ask = (method: string, params: Record<string, unknown>): Promise<{ result?: unknown }> => {
      const mine = ++id;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: mine, method, params })}\n`);
      return new Promise((resolve) => waiting.set(mine, resolve));
    };
    const deadline = began + RUN_BOUND_MS;
    if (firstAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, firstAfterMs));
    for (const request of requests) {
      for (;;) {
        if (performance.now() > deadline) throw new Error(`no answer to ${request.method} in time`);
        const answer = await ask(request.method, request.params);
        if (request.until === undefined || request.until(answer.result)) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      times.push(performance.now() - began);
      if (request.method === 'initialize')
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    }
  } finally {
    // End it the way a host does (stdin closed), so that its children are gone before the next
    // run: an orphan starting later would weigh on the next run's figures.
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin.end();
    const bound = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(bound);
  }
  return times;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN);
}

/** A hand-written server (`fixtures/servers/raw.ts`, ~40 ms to load), as servers in most languages start. */
const rawEntry = (name: string): string =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(RAW)}]\n    protocol: legacy`;
/** A process that never answers anything (a server waiting on something that never comes). */
const silentEntry = (name: string): string =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [-e, "setInterval(() => {}, 1e9)"]\n    protocol: legacy`;

const INITIALIZE = {
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
};
const DISCOVER = { method: 'server/discover', params: { _meta: ENVELOPE } };

/** spawn → `name` listed (lists repeated until it is) and called once, in `era`. */
async function timeCallable(file: string, name: string, era: '2025' | '2026'): Promise<number> {
  const meta = era === '2026' ? { _meta: ENVELOPE } : {};
  const [, , called] = await timeAnswers(file, [
    era === '2026' ? DISCOVER : INITIALIZE,
    {
      method: 'tools/list',
      params: { ...meta },
      until: (result) =>
        ((result as { tools?: { name: string }[] }).tools ?? []).some((t) => t.name === name),
    },
    { method: 'tools/call', params: { name, arguments: { text: 'x' }, ...meta } },
  ]);
  return called ?? Number.NaN;
}

const slow = config(Array.from({ length: 8 }, (_, i) => echoEntry(`slow${i}`, { sleep: 3 })));
// Two Node servers on the SDK (each ~0.5 s of CPU to load, on the same 2 cores as the gateway)...
const stuckSdk = config([echoEntry('stuck', 'never'), echoEntry('ok', { sleep: 0 })]);
// ...and a hand-written one beside a silent one: what is left is the gateway's own start.
const stuckRaw = config([silentEntry('stuck'), rawEntry('ok')]);
const discover: number[] = [];
const initialize: number[] = [];
/** A host that writes its opening while the gateway loads (P1: the front answers between steps). */
const LATE_MS = 300;
const lateDiscover: number[] = [];
const callable = {
  sdk2025: [] as number[],
  sdk2026: [] as number[],
  raw2025: [] as number[],
  raw2026: [] as number[],
};
for (let run = 0; run < RUNS; run++) {
  discover.push(...(await timeAnswers(slow, [DISCOVER])));
  initialize.push(...(await timeAnswers(slow, [INITIALIZE])));
  lateDiscover.push(...(await timeAnswers(slow, [DISCOVER], LATE_MS)).map((ms) => ms - LATE_MS));
  callable.sdk2025.push(await timeCallable(stuckSdk, 'ok_echo', '2025'));
  callable.sdk2026.push(await timeCallable(stuckSdk, 'ok_echo', '2026'));
  callable.raw2025.push(await timeCallable(stuckRaw, 'ok_echo', '2025'));
  callable.raw2026.push(await timeCallable(stuckRaw, 'ok_echo', '2026'));
}
process.stdout.write(
  `${JSON.stringify({
    bench: 'fast-start',
    runs: RUNS,
    slowServers: 8,
    serverStartMs: 3000,
    spawnToDiscoverMs: median(discover),
    spawnToInitializeMs: median(initialize),
    [`discoverWritten${LATE_MS}msAfterSpawnAnsweredAfterMs`]: median(lateDiscover),
    workingServerCalledMs: {
      sdkServers2025: median(callable.sdk2025),
      sdkServers2026: median(callable.sdk2026),
      handWritten2025: median(callable.raw2025),
      handWritten2026: median(callable.raw2026),
    },
    all: {
      discover: discover.map(Math.round),
      initialize: initialize.map(Math.round),
      lateDiscover: lateDiscover.map(Math.round),
      callable: Object.fromEntries(Object.entries(callable).map(([k, v]) => [k, v.map(Math.round)])),
    },
  })}\n`,
);
