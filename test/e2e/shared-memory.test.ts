/**
 * K2, issue 48 with a real Redis and real processes: what the replicas remember through the store
 * (catalogs, pins) as a replica meets it: listed on the very first start, taken by a replica
 * started later (its server stuck, or failing at once), taken once the store is back, and given
 * again to a Redis restarted empty.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createClient } from 'redis';
import { afterEach, expect, it } from 'vitest';
import { fixtureServer } from '../helpers/fixtures.js';
import { describeWith } from '../helpers/peers.js';
import { startRedis, type RedisPeer } from '../helpers/redis.js';
import { fixtureEntry, serveHttp, serveStdio, storeConfig, writeConfig } from './cli-process.js';

const children: ChildProcess[] = [];
const clients: Client[] = [];
const redises: RedisPeer[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const redis of redises.splice(0)) await redis.stop();
});

/** A server `e` that starts only while `gate` exists (see the callers). */
type GatedEntry = (gate: string) => { command: string; args: string[] };

/** The echo fixture behind a shell that exits at once while the gate is shut. */
const failsAtOnce: GatedEntry = (gate) => {
  const { command, args } = fixtureServer('echo');
  return { command: 'sh', args: ['-c', 'test -e "$0" || exit 1; exec "$@"', gate, command, ...args] };
};

/** A replica on `url` (its own Streamable HTTP client): the names it lists. */
async function listedBy(url: string): Promise<() => Promise<string[]>> {
  const made = new Client({ name: 'replica-client', version: '1.0.0' });
  clients.push(made);
  await made.connect(new StreamableHTTPClientTransport(new URL(url)));
  return async () => (await made.listTools()).tools.map((tool) => tool.name);
}

/**
 * K2: replica one, on `redis`, lists server `e` (its gate open) and remembers it in the store.
 * Returns the config of a replica with a state folder `state` of its own, and the gate.
 */
async function replicaOneRemembers(redis: RedisPeer, entry: GatedEntry) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-shared-'));
  const gate = join(dir, 'gate');
  const { command, args } = entry(gate);
  const config = (state: string): string =>
    writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        `state_dir: ${JSON.stringify(join(dir, state))}`,
        'servers:',
        '  e:',
        `    command: ${JSON.stringify(command)}`,
        `    args: ${JSON.stringify(args)}`,
        // serve --http listens once the first connection round is over: a second, for the stuck one.
        '    startup_timeout_ms: 1000',
      ].join('\n'),
    );
  writeFileSync(gate, '');
  const first = await serveHttp(config('one'));
  children.push(first.child);
  expect(await (await listedBy(first.url))()).toEqual(['e_echo']);
  // The first replica stored what it listed.
  const reader = createClient({ url: redis.url });
  reader.on('error', () => undefined);
  await reader.connect();
  try {
    await expect.poll(async () => (await reader.keys('mcp-normalizer:state:*')).length).toBe(2);
  } finally {
    reader.destroy();
  }
  return { config, gate };
}

/** K2: replica two, with a state folder of its own and the gate shut, lists `e` from the store. */
async function laterReplicaLists(entry: GatedEntry): Promise<void> {
  const redis = await startRedis();
  redises.push(redis);
  const { config, gate } = await replicaOneRemembers(redis, entry);
  rmSync(gate);
  const second = await serveHttp(config('two'));
  children.push(second.child);
  // Its server cannot be up (the gate is shut) and its folder is empty: the store's catalog.
  expect(await (await listedBy(second.url))()).toEqual(['e_echo']);
}

describeWith(['redis-server'])('what the replicas remember, through the store', () => {
  it('K2, issue 55: a Redis restarted empty is given the catalogs and pins again by the replica that knows them', async () => {
    let redis = await startRedis();
    redises.push(redis);
    const file = writeConfig(
      [`store: { url: "${redis.url}" }`, 'servers:', fixtureEntry('e', 'echo')].join('\n'),
    );
    const one = await serveHttp(file);
    children.push(one.child);
    const keys = async (): Promise<string[]> => {
      const raw = createClient({ url: redis.url });
      await raw.connect();
      const found = (await raw.keys('mcp-normalizer:state:*')).sort();
      await raw.quit();
      return found;
    };
    await expect.poll(keys, { timeout: 10_000 }).toHaveLength(2);
    const before = await keys();
    await redis.stop();
    redis = await startRedis(Number(new URL(redis.url).port));
    redises.push(redis);
    expect(await keys()).toEqual([]);
    // The replica reconnects (its backoff is at most 5 s) and gives the store what it knows.
    await expect.poll(keys, { timeout: 15_000, interval: 250 }).toEqual(before);
  });

  it('P1, K2: with a store, a host that lists once on the very first start gets every tool', async () => {
    const redis = await startRedis();
    redises.push(redis);
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-shared-'));
    const file = storeConfig(redis.url, dir);
    const host = new Client({ name: 'lists-once', version: '1.0.0' });
    clients.push(host);
    await host.connect(new StdioClientTransport({ ...serveStdio(file), stderr: 'ignore' }));
    // Nothing is remembered anywhere: the list waits for the server (after the store's read).
    expect((await host.listTools()).tools.map((tool) => tool.name)).toEqual(['e_echo']);
  });

  it('K2: a replica started later, with a state folder of its own, lists the catalog another replica remembered in the store, before its server is up', async () => {
    const { command, args } = fixtureServer('echo');
    // The server waits for the gate: shut, it is stuck starting.
    await laterReplicaLists((gate) => ({ command, args: [...args, `--start-after=${gate}`] }));
  });

  it('K2, issue 48: a replica whose server fails at once, before the store is read, lists the catalog another replica remembered there', async () => {
    // The server exits at once while the gate is shut (a stand-in "listing nothing" is made then).
    await laterReplicaLists(failsAtOnce);
  });

  it('K2, K5, issue 48: a replica started while the store was away takes what it remembers once it is back', async () => {
    let redis = await startRedis();
    redises.push(redis);
    const { config, gate } = await replicaOneRemembers(redis, failsAtOnce);
    // What replica one stored is kept aside, and the store goes away.
    const raw = createClient({ url: redis.url });
    await raw.connect();
    const stored = new Map<string, string>();
    for (const key of await raw.keys('mcp-normalizer:state:*')) stored.set(key, (await raw.get(key)) ?? '');
    await raw.quit();
    await redis.stop();

    // Replica two starts with the store away and its server failing at once: it lists nothing.
    rmSync(gate);
    const second = await serveHttp(config('two'));
    children.push(second.child);
    const listed = await listedBy(second.url);
    expect(await listed()).toEqual([]);
    // The store comes back with what replica one remembered; replica two reconnects (its backoff
    // is at most 5 s) and lists it.
    redis = await startRedis(Number(new URL(redis.url).port));
    redises.push(redis);
    const writer = createClient({ url: redis.url });
    await writer.connect();
    for (const [key, value] of stored) await writer.set(key, value);
    await writer.quit();
    await expect.poll(listed, { timeout: 15_000, interval: 250 }).toEqual(['e_echo']);
  });
});
