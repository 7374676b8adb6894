/**
 * Replicas behind a real load balancer (issue 17): three `serve --http` replicas from one config
 * behind nginx (deploy/nginx/mcp-normalizer.conf, the config docs/deployment.md shows), 2026
 * clients spread over every replica with no affinity, 2025 sessions sent home by their
 * `replica_id` tag, identical catalogs, and a replica killed mid-run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { fixtureServer, ROOT } from '../helpers/fixtures.js';
import { freePort, startNginx, type Nginx } from '../../bench/nginx.js';
import type { HttpServe } from './cli-process.js';
import { childEnv, CLI, fixtureEntry, runCli, serveHttp, writeConfig } from './cli-process.js';

/** Skipped, naming the install command, where nginx is missing (a failure under CI). */
const suite = describeWith(['nginx']);

const MODERN = { mode: { pin: '2026-07-28' } } as const;
const IDS = ['r1', 'r2', 'r3'] as const;

let config: string;
let replicas: HttpServe[] = [];
let nginx: Nginx;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  config = writeConfig(
    [
      'log_level: warn',
      'input_required:',
      '  state_key: replicas-share-this-key-of-32-characters-or-more',
      'http:',
      '  replica_id: ${MCP_NORMALIZER_REPLICA:-}',
      'servers:',
      fixtureEntry('echo', 'echo'),
      fixtureEntry('slow', 'slow'),
    ].join('\n'),
  );
  replicas = await Promise.all(IDS.map((id) => serveHttp(config, { MCP_NORMALIZER_REPLICA: id })));
  nginx = await startNginx(
    replicas.map((replica, i) => ({ id: IDS[i]!, address: new URL(replica.url).host })),
  );
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await nginx?.stop();
  for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
});

async function modern(url: string): Promise<Client> {
  const client = new Client({ name: 'replica-test', version: '1.0.0' }, { versionNegotiation: MODERN });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

async function legacy(url: string): Promise<{ client: LegacyClient; session: string }> {
  const transport = new LegacyHttpTransport(new URL(url));
  const client = new LegacyClient({ name: 'replica-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, session: transport.sessionId ?? '' };
}

/** Runs `count` calls of `call` with `workers` at a time; resolves with the failures. */
async function load(
  count: number,
  workers: number,
  call: (i: number) => Promise<unknown>,
): Promise<unknown[]> {
  const failures: unknown[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < count) {
        const i = next++;
        try {
          await call(i);
        } catch (error) {
          failures.push(error);
        }
      }
    }),
  );
  return failures;
}

/** Upstream address → statuses nginx logged for it (one `$upstream_addr $status` line per request). */
function upstreamLog(): Map<string, string[]> {
  const byUpstream = new Map<string, string[]>();
  for (const line of readFileSync(nginx.accessLog, 'utf8').split('\n')) {
    const [address, status] = line.split(' ');
    if (address === undefined || status === undefined || address === '-') continue;
    const list = byUpstream.get(address) ?? [];
    list.push(status);
    byUpstream.set(address, list);
  }
  return byUpstream;
}

const text = (result: unknown): unknown =>
  (result as { structuredContent?: { results?: unknown } }).structuredContent?.results;

suite('three replicas behind nginx', { timeout: 180_000 }, () => {
  it('U7/E2: every replica lists the same tools/list bytes, through nginx and directly, and check prints one catalog hash', async () => {
    const lists = await Promise.all(
      [...replicas.map((replica) => replica.url), `${nginx.url}/mcp`, `${nginx.url}/mcp`].map(async (url) =>
        JSON.stringify((await (await modern(url)).listTools()).tools),
      ),
    );
    expect(new Set(lists).size).toBe(1);
    const hashes = await Promise.all(
      [1, 2].map(
        async () =>
          /Catalog: sha256 ([0-9a-f]{64})/.exec((await runCli(['check', '--config', config])).stdout)?.[1],
      ),
    );
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes[1]).toBe(hashes[0]);
  });

  it('U7: 2,000 calls of 2026 clients spread over all three replicas with no affinity, none failed', async () => {
    const workers = await Promise.all(Array.from({ length: 8 }, () => modern(`${nginx.url}/mcp`)));
    const before = upstreamLog();
    const failures = await load(2000, 8, async (i) => {
      const result = await workers[i % 8]!.callTool({ name: 'echo_echo', arguments: { text: `m${i}` } });
      if (text(result) !== `m${i}`) throw new Error(`call ${i} answered ${JSON.stringify(result)}`);
    });
    expect(failures).toEqual([]);
    const served = [...upstreamLog()].map(
      ([address, statuses]) => statuses.length - (before.get(address)?.length ?? 0),
    );
    expect(served.filter((n) => n > 0)).toHaveLength(3);
  });

  it('U7: 500 calls in ten 2025 sessions, each session sent to the replica that holds it by its replica_id tag, none failed', async () => {
    const sessions = await Promise.all(Array.from({ length: 10 }, () => legacy(`${nginx.url}/mcp`)));
    expect(new Set(sessions.map(({ session }) => session.split('.')[0])).size).toBe(3);
    const failures = await load(500, 10, async (i) => {
      const result = await sessions[i % 10]!.client.callTool({
        name: 'echo_echo',
        arguments: { text: `l${i}` },
      });
      if (text(result) !== `l${i}`) throw new Error(`call ${i} answered ${JSON.stringify(result)}`);
    });
    expect(failures).toEqual([]);
  });

  it('U7/P4: a replica killed mid-run fails its own calls in flight at once (502), and only those; every later call succeeds and tools/list is unchanged', async () => {
    const listBefore = JSON.stringify((await (await modern(`${nginx.url}/mcp`)).listTools()).tools);
    const workers = await Promise.all(Array.from({ length: 9 }, () => modern(`${nginx.url}/mcp`)));
    // No progress token: each answer is one JSON body, so nothing of it has left a replica yet.
    const calls = workers.map((client) =>
      client.callTool({ name: 'slow_slow', arguments: { duration_ms: 3000 } }, { timeout: 60_000 }),
    );
    // Every call is running on some replica (its /healthz counts it) before one replica dies.
    const inFlight = async (replica: HttpServe): Promise<number> => {
      const body = (await (await fetch(replica.healthUrl)).json()) as {
        servers: { name: string; in_flight: number }[];
      };
      return body.servers.find((server) => server.name === 'slow')?.in_flight ?? 0;
    };
    await expect
      .poll(async () => (await Promise.all(replicas.map(inFlight))).reduce((a, b) => a + b, 0), {
        timeout: 20_000,
      })
      .toBe(9);
    const doomed = await inFlight(replicas[1]!);
    replicas[1]!.child.kill('SIGKILL');
    const outcomes = await Promise.allSettled(calls);
    const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(doomed).toBeGreaterThan(0);
    expect(failed).toHaveLength(doomed);
    for (const failure of failed) expect(String((failure as PromiseRejectedResult).reason)).toMatch(/502/);
    const failures = await load(200, 8, async (i) => {
      const result = await workers[i % 9]!.callTool({ name: 'echo_echo', arguments: { text: `a${i}` } });
      if (text(result) !== `a${i}`) throw new Error(`call ${i} answered ${JSON.stringify(result)}`);
    });
    expect(failures).toEqual([]);
    expect(JSON.stringify((await (await modern(`${nginx.url}/mcp`)).listTools()).tools)).toBe(listBefore);
  });
});

suite('what a replica needs from its process', { timeout: 60_000 }, () => {
  it('U7/U4: /healthz is readiness (503 "starting" until the first connection round is over, then 200) and /livez answers 200 from the start', async () => {
    // A server that starts when the test says (a gate file), not after a sleep a busy machine
    // can outlast: the first /healthz is asked while it is surely still starting.
    const gate = join(mkdtempSync(join(tmpdir(), 'late-')), 'gate');
    const { command, args } = fixtureServer('echo', [`--start-after=${gate}`]);
    const file = writeConfig(
      [
        'servers:',
        '  late:',
        `    command: ${JSON.stringify(command)}`,
        `    args: ${JSON.stringify(args)}`,
      ].join('\n'),
    );
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--http', '--port', String(port), '--config', file],
      {
        cwd: ROOT,
        env: childEnv(),
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    );
    try {
      const get = async (path: string): Promise<{ status: number; body: { status?: string } }> => {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        return { status: response.status, body: (await response.json()) as { status?: string } };
      };
      const first = await vi.waitFor(() => get('/healthz'), { timeout: 10_000, interval: 50 });
      expect(first).toEqual({ status: 503, body: expect.objectContaining({ status: 'starting' }) });
      expect(await get('/livez')).toEqual({ status: 200, body: { status: 'alive' } });
      writeFileSync(gate, '');
      await vi.waitFor(async () => expect((await get('/healthz')).status).toBe(200), {
        timeout: 20_000,
        interval: 100,
      });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('U7: with http.legacy: stateless a 2025 client gets no session and is answered by any replica', async () => {
    const file = writeConfig(
      ['http:', '  legacy: stateless', 'servers:', fixtureEntry('echo', 'echo')].join('\n'),
    );
    const [one, two] = await Promise.all([serveHttp(file), serveHttp(file)]);
    try {
      const transport = new LegacyHttpTransport(new URL(one.url));
      const client = new LegacyClient({ name: 'stateless', version: '1.0.0' });
      await client.connect(transport);
      clients.push(client);
      expect(transport.sessionId).toBeUndefined();
      expect(text(await client.callTool({ name: 'echo_echo', arguments: { text: 'one' } }))).toBe('one');
      // Another replica answers a 2025 request it never saw an initialize for.
      const other = new LegacyClient({ name: 'stateless', version: '1.0.0' });
      await other.connect(new LegacyHttpTransport(new URL(two.url)));
      clients.push(other);
      expect(text(await other.callTool({ name: 'echo_echo', arguments: { text: 'two' } }))).toBe('two');
      expect((await fetch(one.url, { method: 'GET', headers: { accept: 'text/event-stream' } })).status).toBe(
        405,
      );
    } finally {
      for (const serve of [one, two]) serve.child.kill('SIGKILL');
    }
  });
});
