/**
 * What two features cost on every call, each measured side by side with itself turned off, in
 * one run, rounds alternating between the two gateways:
 *
 * 1. status (issue 31): echo p50 over stdio (a 2025 host, SDK 1.x) with the status page's ring
 *    and windows (`status_page: true`, the default) against `status_page: false`.
 * 2. jwt (issue 29): 2026-07-28 echo calls over HTTP (SDK v2 clients, `--in-flight` at once)
 *    with `http.auth` and a JWT from a real authorization server (oidc-provider) on every
 *    request, against the same gateway without auth: calls per second, and the gateway's CPU
 *    per call.
 *
 * 3. ratelimit (issue 48, I7): echo p50 over stdio with a rate limit that counts every call
 *    (and is never reached) against none.
 *
 * 4. ratelimit-store (issue 48): the same, the limit counted in a local Redis (`store.url`),
 *    against no limit and no store; skipped, naming the install command, without redis-server.
 *
 * Run: `npm run bench:overhead` (`--rounds R --calls N --in-flight F --only status|jwt|ratelimit|ratelimit-store`).
 * Prints one JSON line per part: the median of the per-round ratios and their middle half.
 */
import './scratch.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startAuthServer } from '../fixtures/servers/oauth.js';
import { CLI, config, ROOT } from './gateway.js';
import { cpuTimeOf } from './machine.js';
import { median, quartiles } from './stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    calls: { type: 'string', default: '500' },
    'in-flight': { type: 'string', default: '16' },
    only: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const IN_FLIGHT = Number(values['in-flight']);
const ECHO = join(ROOT, 'dist', 'bench', 'servers', 'echo.js');

const echoEntry = `servers:\n  e:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(ECHO)}]\n    protocol: legacy\n`;

function summary(part: string, ratios: number[], extra: Record<string, unknown>): void {
  const [low, high] = quartiles(ratios) ?? [NaN, NaN];
  console.log(
    JSON.stringify({
      part,
      rounds: ratios.length,
      ratio_median: Number(median(ratios).toFixed(3)),
      ratio_middle_half: [Number(low.toFixed(3)), Number(high.toFixed(3))],
      ...extra,
    }),
  );
}

/**
 * Parts 1 and 3: sequential echo calls over stdio, p50 per round, a gateway with `onExtra` in its
 * config and one with `offExtra`, alternating.
 */
async function stdioPair(part: string, onExtra: string, offExtra: string): Promise<void> {
  const open = async (extra: string) => {
    const client = new LegacyClient({ name: 'bench-status', version: '1' });
    await client.connect(
      new LegacyStdio({
        command: process.execPath,
        args: [CLI, 'serve', '--config', config(extra + echoEntry)],
        stderr: 'ignore',
      }),
    );
    // Warm up: the first calls compile the path.
    for (let i = 0; i < 200; i++) await client.callTool({ name: 'e_echo', arguments: { message: 'warm' } });
    return client;
  };
  const on = await open(onExtra);
  const off = await open(offExtra);
  const round = async (client: LegacyClient): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const start = process.hrtime.bigint();
      await client.callTool({ name: 'e_echo', arguments: { message: `call ${i}` } });
      times.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    return median(times);
  };
  const ratios: number[] = [];
  const p50s: { on: number[]; off: number[] } = { on: [], off: [] };
  /** Calls/s with `IN_FLIGHT` calls at a time (issue 48: a store's round trip is latency). */
  const rate = async (client: LegacyClient): Promise<number> => {
    let sent = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (sent < CALLS) {
          sent++;
          await client.callTool({ name: 'e_echo', arguments: { message: 'x' } });
        }
      }),
    );
    return CALLS / (Number(process.hrtime.bigint() - start) / 1e9);
  };
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const first = r % 2 === 0 ? on : off;
    const a = await rate(first);
    const b = await rate(first === on ? off : on);
    rates.push(first === on ? a / b : b / a);
  }
  for (let r = 0; r < ROUNDS; r++) {
    // Alternating which goes first cancels a drift within the pair.
    const first = r % 2 === 0 ? 'on' : 'off';
    const a = await round(first === 'on' ? on : off);
    const b = await round(first === 'on' ? off : on);
    const withPage = first === 'on' ? a : b;
    const without = first === 'on' ? b : a;
    p50s.on.push(withPage);
    p50s.off.push(without);
    ratios.push(withPage / without);
  }
  await on.close();
  await off.close();
  summary(part, ratios, {
    p50_us_with: Math.round(median(p50s.on)),
    p50_us_without: Math.round(median(p50s.off)),
    in_flight: IN_FLIGHT,
    calls_per_s_ratio_median: Number(median(rates).toFixed(3)),
    calls_per_s_ratio_middle_half: (quartiles(rates) ?? []).map((q) => Number(q.toFixed(3))),
  });
}

/** `serve --http` on `file`; its URL and child. */
async function serveHttp(file: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', '--config', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const found = /MCP endpoint[^:]*:\s*(http:\/\/\S+\/mcp)/.exec(text)?.[1];
      if (found === undefined) return;
      clearInterval(poll);
      resolve(found);
    }, 20);
    child.once('exit', () => reject(new Error(`serve --http exited:\n${text}`)));
  });
  return { child, url };
}

/** Part 2: 2026 echo calls over HTTP with and without a JWT on each request. */
async function jwt(): Promise<void> {
  const client = { id: 'bench', secret: 'bench-secret-0123456789', scope: 'mcp' };
  const as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [client],
  });
  const withAuth = await serveHttp(config(`http:\n  auth:\n    issuer: ${as.issuer}\n${echoEntry}`));
  const without = await serveHttp(config(echoEntry));
  const token = await as.token(client, { resource: withAuth.url });
  const clients = async (url: string, headers: Record<string, string>) =>
    Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        const c = new Client(
          { name: 'bench-jwt', version: '1' },
          { versionNegotiation: { mode: { pin: '2026-07-28' } } },
        );
        await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
        return c;
      }),
    );
  const authed = await clients(withAuth.url, { Authorization: `Bearer ${token}` });
  const plain = await clients(without.url, {});
  const round = async (pool: Client[], pid: number): Promise<{ rate: number; cpuUs: number }> => {
    let sent = 0;
    const cpu = cpuTimeOf(pid);
    const start = process.hrtime.bigint();
    await Promise.all(
      pool.map(async (c) => {
        while (sent < CALLS) {
          sent++;
          await c.callTool({ name: 'e_echo', arguments: { message: 'x' } });
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    // cpuTimeOf is in ms.
    return { rate: CALLS / seconds, cpuUs: ((cpuTimeOf(pid) - cpu) * 1000) / CALLS };
  };
  // Warm up both (and the JWKS cache).
  await round(authed, withAuth.child.pid as number);
  await round(plain, without.child.pid as number);
  const ratios: number[] = [];
  const cpu: { auth: number[]; plain: number[] } = { auth: [], plain: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['auth', 'plain'] : ['plain', 'auth'];
    const results: Record<string, { rate: number; cpuUs: number }> = {};
    for (const which of order) {
      results[which] =
        which === 'auth'
          ? await round(authed, withAuth.child.pid as number)
          : await round(plain, without.child.pid as number);
    }
    const a = results['auth'] as { rate: number; cpuUs: number };
    const p = results['plain'] as { rate: number; cpuUs: number };
    ratios.push(a.rate / p.rate);
    cpu.auth.push(a.cpuUs);
    cpu.plain.push(p.cpuUs);
  }
  for (const c of [...authed, ...plain]) await c.close();
  withAuth.child.kill('SIGTERM');
  without.child.kill('SIGTERM');
  await as.close();
  summary('jwt: 2026 HTTP calls/s with a JWT on every request ÷ without auth', ratios, {
    in_flight: IN_FLIGHT,
    gateway_cpu_us_per_call_with: Math.round(median(cpu.auth)),
    gateway_cpu_us_per_call_without: Math.round(median(cpu.plain)),
  });
}

if (values.only === undefined || values.only === 'status')
  await stdioPair('status: echo p50 with the page ÷ without', '', 'status_page: false\n');
if (values.only === undefined || values.only === 'jwt') await jwt();
// I7: a rate limit that counts every call (never reached) against none.
if (values.only === undefined || values.only === 'ratelimit')
  await stdioPair(
    'ratelimit: echo p50 with a rate limit on every call ÷ without',
    "rate_limits:\n  - principals: ['*']\n    calls: 1000000000\n    per_s: 3600\n",
    '',
  );

/** A local redis-server on a free port, nothing saved; undefined where it is not installed. */
async function localRedis(): Promise<{ url: string; stop(): void } | undefined> {
  const { createServer } = await import('node:net');
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const ready = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('Ready to accept connections')) resolve(true);
    });
  });
  return ready ? { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') } : undefined;
}

// Issue 48: the same limit, counted in Redis (one round trip per call) against no limit, no store.
if (values.only === undefined || values.only === 'ratelimit-store') {
  const redis = await localRedis();
  if (redis === undefined)
    process.stdout.write(
      `${JSON.stringify({ part: 'ratelimit-store', skipped: 'redis-server is not installed: apt-get install -y redis-server' })}\n`,
    );
  else
    try {
      await stdioPair(
        'ratelimit-store: echo p50 with a rate limit counted in Redis on every call ÷ without',
        `store: { url: "${redis.url}" }\nrate_limits:\n  - principals: ['*']\n    calls: 1000000000\n    per_s: 3600\n`,
        '',
      );
    } finally {
      redis.stop();
    }
}
