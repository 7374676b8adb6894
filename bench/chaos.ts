/**
 * Chaos figures (issue 13's acceptance): the gateway as a real process, driven hard.
 *
 * 1. kills/stdio: N calls at 64 in flight over stdio while the downstream child is SIGKILLed
 *    every 300 ms; every call must be answered exactly once (a result or an error answer).
 * 2. kills/http: the same over Streamable HTTP (2025 sessions, raw JSON responses).
 * 3. fuzz: M calls to a server answering malformed and odd results (bench/servers/fuzz.ts), 8 in
 *    flight; the gateway must stay up, and no answer may come later than 100 ms after the call
 *    was sent (the fuzz server answers at once, so that is the gateway's own time). Every answer
 *    must parse as a CallToolResult for SDK 1.x and v2 hosts, and stderr must hold log lines only.
 * 4. fuzz/http: the same over Streamable HTTP (`--fuzz-http`, default 5000).
 * 5. downstream: D calls to the bench echo server over stdio, then over Streamable HTTP (16 in
 *    flight): warnings on stderr, and the gateway's RSS after each (HTTP within 1.2x of stdio).
 * 6. store: S calls through two replicas sharing one Redis that is killed and restarted empty
 *    again and again (bench/chaos-store.ts, issue 55); needs redis-server.
 *
 * Run: `npm run bench:chaos` (defaults N=10000, M=20000, D=30000, S=20000; `--calls N --fuzz M
 * --fuzz-http H --downstream D --store S` to change, `--only stdio|http|fuzz|fuzz-http|downstream|store`
 * for one).
 * `--jwt`: the HTTP parts run with `http.auth` in front, a real authorization server
 * (oidc-provider, fixtures/servers/oauth.ts) and a JWT on every request (I1).
 * Prints one JSON line per part. Loopback only; every loop is bounded in count and time.
 */
import './scratch.js';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { CallToolResultSchema as V2CallToolResultSchema } from '@modelcontextprotocol/core';
import { CallToolResultSchema as V1CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startAuthServer } from '../fixtures/servers/oauth.js';
import { CLI, config, httpServe, openSession, postCall, ROOT, setBearer } from './gateway.js';
import { drive, percentile, summary } from './chaos-drive.js';
import { storeChaos } from './chaos-store.js';
import { cpuTimeOf, memoryOf } from './machine.js';

const FIXTURE = join(ROOT, 'dist', 'fixtures', 'servers', 'crash.js');
const FUZZ = join(ROOT, 'dist', 'bench', 'servers', 'fuzz.js');
const ECHO = join(ROOT, 'dist', 'bench', 'servers', 'echo.js');
/** After the last call is sent, how long answers may still take before the rest count as lost. */
const DRAIN_MS = 60_000;

const USAGE = `Usage: node dist/bench/chaos.js [--calls N] [--fuzz M] [--fuzz-http H] [--downstream D]
                                [--store S] [--only stdio|http|fuzz|fuzz-http|downstream|store] [--jwt]

Drives the gateway hard (kills, fuzzed results, load, a store that dies) and prints one JSON line
per part. Defaults: --calls 10000 --fuzz 20000 --fuzz-http 5000 --downstream 30000 --store 20000.`;

/** The command line, or the usage and exit 2 on an option it does not take (no stack). */
function options() {
  try {
    return parseArgs({
      options: {
        calls: { type: 'string', default: '10000' },
        fuzz: { type: 'string', default: '20000' },
        'fuzz-http': { type: 'string', default: '5000' },
        downstream: { type: 'string', default: '30000' },
        store: { type: 'string', default: '20000' },
        only: { type: 'string' },
        jwt: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    process.exit(2);
  }
}
const { values } = options();
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

/** I1 (`--jwt`): the HTTP gateways' `http.auth`, and a JWT for every request. */
let httpAuth = '';
let issuer: { close(): Promise<void> } | undefined;
if (values.jwt) {
  const AUDIENCE = 'urn:mcp-normalizer:chaos';
  const host = { id: 'chaos-host', secret: 'chaos-host-secret-0123456789', scope: 'mcp' };
  const server = await startAuthServer({ resources: [AUDIENCE], clients: [host], ttlSeconds: 7200 });
  issuer = server;
  setBearer(await server.token(host));
  httpAuth = [
    'http:',
    '  auth:',
    `    issuer: ${server.issuer}`,
    `    audience: ${AUDIENCE}`,
    '    required_scopes: [mcp]',
    '',
  ].join('\n');
}
const CALLS = Number(values.calls);
const FUZZ_CALLS = Number(values.fuzz);
const FUZZ_HTTP_CALLS = Number(values['fuzz-http']);
const DOWNSTREAM_CALLS = Number(values.downstream);

function serverEntry(name: string, script: string, extra = ''): string {
  return `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(script)}]\n    protocol: legacy\n${extra}`;
}

/**
 * Live children of `parent` whose command line contains `needle`: the gateway's own downstream,
 * never another's (a test suite running beside the bench starts the same fixture).
 */
function pidsWith(needle: string, parent: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle))
        out.push(Number(entry));
    } catch {
      // gone
    }
  }
  return out;
}

/** Kills the gateway `parent`'s downstream running `script` every `everyMs` until stopped. */
function killer(script: string, everyMs: number, parent: number): { stop(): number } {
  let kills = 0;
  const timer = setInterval(() => {
    for (const pid of pidsWith(script, parent)) {
      try {
        process.kill(pid, 'SIGKILL');
        kills++;
      } catch {
        // already gone
      }
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return kills;
    },
  };
}

/** `serve` over stdio with a raw JSON-RPC host; answers are matched by id. */
async function stdioHost(file: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'serve', '--config', file], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Issue 27 item 22: stderr carries log lines only; anything else (a runtime warning) counts.
  const extra: { duplicated: number; nonJsonStderr: number; stderrSample: string[] } = {
    duplicated: 0,
    nonJsonStderr: 0,
    stderrSample: [],
  };
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (line.startsWith('{')) return;
    extra.nonJsonStderr++;
    if (extra.stderrSample.length < 3) extra.stderrSample.push(line.slice(0, 160));
  });
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    const id = message['id'];
    if (typeof id !== 'number' || message['method'] !== undefined) return;
    const resolve = waiting.get(id);
    if (resolve === undefined) extra.duplicated++;
    else {
      waiting.delete(id);
      resolve(message);
    }
  });
  const request = (id: number, method: string, params: unknown, timeoutMs = DRAIN_MS) =>
    new Promise<Record<string, unknown> | undefined>((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(undefined);
      }, timeoutMs);
      waiting.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request(-1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'chaos', version: '1' },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  await request(-2, 'tools/list', {});
  return { child, request, extra };
}

async function killsOverStdio(): Promise<void> {
  const file = config(
    ['servers:', serverEntry('c', FIXTURE, '    timeout_ms: 10000\n    concurrency: 64\n')].join('\n'),
  );
  const host = await stdioHost(file);
  const kill = killer(FIXTURE, 300, host.child.pid as number);
  const result = await drive(CALLS, 64, (id) =>
    host.request(id, 'tools/call', { name: 'c_echo', arguments: { text: `call ${id}` } }),
  );
  const kills = kill.stop();
  host.child.kill('SIGTERM');
  summary('kills/stdio', { ...result, duplicated: result.duplicated + host.extra.duplicated }, { kills });
}

async function killsOverHttp(): Promise<void> {
  const file = config(
    [httpAuth + 'servers:', serverEntry('c', FIXTURE, '    timeout_ms: 10000\n    concurrency: 64\n')].join(
      '\n',
    ),
  );
  const { child, url } = await httpServe(file);
  const session = await openSession(url);
  const kill = killer(FIXTURE, 300, child.pid as number);
  const result = await drive(CALLS, 64, (id) =>
    postCall(url, session, id, { name: 'c_echo', arguments: { text: `call ${id}` } }),
  );
  const kills = kill.stop();
  child.kill('SIGTERM');
  summary('kills/http', result, { kills });
}

/** Hosts' own schemas: what an SDK 1.x and an SDK v2 host accept as a tools/call result. */
const HOST_SCHEMAS = { sdk1: V1CallToolResultSchema, sdk2: V2CallToolResultSchema } as const;

/** Counts the answers each host's schema would reject (issue 27 item 17), with a few examples. */
function hostCheck(): {
  check(id: number, message: Record<string, unknown> | undefined): void;
  report(): Record<string, unknown>;
} {
  const rejected: Record<string, number> = { sdk1: 0, sdk2: 0 };
  const examples: string[] = [];
  return {
    check(id, message) {
      const result = message?.['result'];
      if (result === undefined) return;
      for (const [host, schema] of Object.entries(HOST_SCHEMAS)) {
        const parsed = schema.safeParse(result);
        if (parsed.success) continue;
        rejected[host] = (rejected[host] ?? 0) + 1;
        if (examples.length < 5) {
          const issue = parsed.error.issues[0];
          examples.push(`${host} seed ${id}: ${issue?.path.join('.')}: ${issue?.message}`);
        }
      }
    },
    report: () => ({ rejected_by_host: rejected, rejected_examples: examples }),
  };
}

async function fuzz(): Promise<void> {
  const file = config(['servers:', serverEntry('f', FUZZ, '    timeout_ms: 10000\n')].join('\n'));
  const host = await stdioHost(file);
  const hosts = hostCheck();
  const result = await drive(FUZZ_CALLS, 8, async (id) => {
    const answer = await host.request(id, 'tools/call', { name: 'f_fuzz', arguments: { seed: id } });
    hosts.check(id, answer);
    return answer;
  });
  const alive = host.child.exitCode === null;
  host.child.kill('SIGTERM');
  const late = result.latencies.filter((ms) => ms > 100).length;
  const after = [...result.afterDownstream].sort((a, b) => a - b);
  summary('fuzz', result, {
    gateway_alive: alive,
    ...hosts.report(),
    non_json_stderr_lines: host.extra.nonJsonStderr,
    non_json_stderr_sample: host.extra.stderrSample,
    later_than_100ms_after_sending: late,
    // The gateway's own share: from the downstream's answer (meta_data.elapsed_ms) to the host.
    after_downstream_p99_ms: Number(percentile(after, 0.99).toFixed(1)),
    after_downstream_max_ms: Number((after.at(-1) ?? 0).toFixed(1)),
    later_than_100ms_after_downstream: after.filter((ms) => ms > 100).length,
    with_elapsed: after.length,
    slow_calls: result.slow.slice(0, 10),
  });
}

/** The fuzz server behind `serve --http`, called by a 2025 session with JSON answers. */
async function fuzzOverHttp(): Promise<void> {
  const file = config([httpAuth + 'servers:', serverEntry('f', FUZZ, '    timeout_ms: 10000\n')].join('\n'));
  const { child, url, stderr } = await httpServe(file);
  const session = await openSession(url);
  const hosts = hostCheck();
  const result = await drive(FUZZ_HTTP_CALLS, 8, async (id) => {
    const answer = await postCall(url, session, id, { name: 'f_fuzz', arguments: { seed: id } });
    hosts.check(id, answer);
    return answer;
  });
  child.kill('SIGTERM');
  summary('fuzz/http', result, {
    ...hosts.report(),
    non_json_stderr_lines: stderr().filter((line) => !line.startsWith('{')).length,
  });
}

/** The bench echo server over Streamable HTTP; its URL and a stop. */
async function echoOverHttp(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [ECHO, '--http'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const found = /listening (http:\/\/\S+)/.exec(text)?.[1];
      if (found === undefined) return;
      clearInterval(poll);
      resolve(found);
    }, 20);
    child.once('exit', () => {
      clearInterval(poll);
      reject(new Error(`echo --http exited: ${text}`));
    });
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/**
 * Issue 27 item 22: `--downstream N` calls (16 in flight, over stdio) to the bench echo server
 * behind the gateway, over stdio and then over Streamable HTTP: every runtime warning on stderr
 * counts, and the gateway's RSS after each run is compared (target: HTTP within 1.2x of stdio).
 */
/** How long the gateway idles before its RSS is read a second time (the downstream part). */
const SETTLE_MS = 20_000;

async function downstreamHttp(): Promise<void> {
  const rss: Record<string, number> = {};
  const rssSettled: Record<string, number> = {};
  for (const wire of ['stdio', 'http'] as const) {
    const echo = wire === 'http' ? await echoOverHttp() : undefined;
    const entry =
      echo === undefined
        ? serverEntry('e', ECHO)
        : `  e:\n    url: ${JSON.stringify(echo.url)}\n    protocol: legacy\n`;
    const host = await stdioHost(config(['servers:', entry].join('\n')));
    const cpuBefore = cpuTimeOf(host.child.pid as number);
    const result = await drive(DOWNSTREAM_CALLS, 16, (id) =>
      host.request(id, 'tools/call', { name: 'e_echo', arguments: { message: `call ${id}` } }),
    );
    const cpuMs = cpuTimeOf(host.child.pid as number) - cpuBefore;
    const memory = memoryOf(host.child.pid as number);
    rss[wire] = memory.rssMiB;
    // And once idle for a while: V8's memory reducer gives back what was garbage by then.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settled = memoryOf(host.child.pid as number);
    rssSettled[wire] = settled.rssMiB;
    host.child.kill('SIGTERM');
    echo?.stop();
    summary(`downstream/${wire}`, result, {
      gateway_rss_mib: Number(memory.rssMiB.toFixed(1)),
      gateway_hwm_mib: Number(memory.hwmMiB.toFixed(1)),
      // The gateway's CPU (user + system) per call while driven.
      gateway_cpu_us_per_call: Math.round((cpuMs * 1000) / DOWNSTREAM_CALLS),
      [`gateway_rss_after_${SETTLE_MS / 1000}s_idle_mib`]: Number(settled.rssMiB.toFixed(1)),
      non_json_stderr_lines: host.extra.nonJsonStderr,
      non_json_stderr_sample: host.extra.stderrSample,
    });
  }
  console.log(
    JSON.stringify({
      part: 'downstream/ratio',
      rss_http_over_stdio: Number(((rss['http'] ?? NaN) / (rss['stdio'] ?? NaN)).toFixed(2)),
      rss_http_over_stdio_idle: Number(
        ((rssSettled['http'] ?? NaN) / (rssSettled['stdio'] ?? NaN)).toFixed(2),
      ),
    }),
  );
}

const only = values.only;
if (only === undefined || only === 'stdio') await killsOverStdio();
if (only === undefined || only === 'http') await killsOverHttp();
if (only === undefined || only === 'fuzz') await fuzz();
if (only === undefined || only === 'fuzz' || only === 'fuzz-http') await fuzzOverHttp();
if (only === undefined || only === 'downstream') await downstreamHttp();
if (only === undefined || only === 'store') await storeChaos(Number(values.store));
await issuer?.close();
