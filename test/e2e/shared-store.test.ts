/**
 * Issue 48 with a real Redis: two replicas (`serve --http`) with one `store.url` count one
 * principal's calls together (I7), and when the store goes away the calls that need it fail with
 * an error that names it while the rest go on.
 */
import type { ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, expect, it } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { awayFromWindowEnd, startRedis, type RedisPeer } from '../helpers/redis.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { fixtureServer } from '../helpers/fixtures.js';
import { fixtureEntry, modernHttpClient, runCli, serveHttp, serveStdio, writeConfig } from './cli-process.js';

const children: ChildProcess[] = [];
const clients: Client[] = [];
const redises: RedisPeer[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const redis of redises.splice(0)) await redis.stop();
});

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef0';
const DAY_S = 86_400;

async function client(url: string, token: string): Promise<Client> {
  const made = await modernHttpClient(url, token);
  clients.push(made);
  return made;
}

/** Waits (bounded) until each replica's servers are up: its /healthz says `ok`. */
async function ready(...replicas: { healthUrl: string }[]): Promise<void> {
  for (const replica of replicas)
    await expect
      .poll(async () => ((await (await fetch(replica.healthUrl)).json()) as { status: string }).status, {
        timeout: 15_000,
      })
      .toBe('ok');
}

type Answer = { meta_data?: { error_type?: string; error_data?: Record<string, unknown> } };
const echo = async (who: Client): Promise<Answer> =>
  (await who.callTool({ name: 'e_echo', arguments: { text: 'x' } })).structuredContent as Answer;

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

describeWith(['redis-server'])('state shared by replicas in Redis', () => {
  it('I7: with one store.url, 10 calls per window for one principal hold across two replicas; another principal is not limited; a store gone fails only what needs it, by name', async () => {
    const redis = await startRedis();
    redises.push(redis);
    const file = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        'http:',
        '  auth:',
        '    tokens:',
        `      alice: { token: ${ALICE} }`,
        `      bob: { token: ${BOB} }`,
        "    admins: ['token:bob']",
        'rate_limits:',
        "  - principals: ['token:alice']",
        "    tools: ['e_*']",
        '    calls: 10',
        `    per_s: ${DAY_S}`,
        'servers:',
        fixtureEntry('e', 'echo'),
      ].join('\n'),
    );
    const [one, two] = await Promise.all([serveHttp(file), serveHttp(file)]);
    children.push(one.child, two.child);
    const alice = [await client(one.url, ALICE), await client(two.url, ALICE)];
    const bob = [await client(one.url, BOB), await client(two.url, BOB)];
    await awayFromWindowEnd(DAY_S * 1000);
    const types: (string | undefined)[] = [];
    for (let i = 0; i < 12; i++) types.push((await echo(alice[i % 2]!)).meta_data?.error_type);
    expect(types).toEqual([...Array<undefined>(10).fill(undefined), 'rate_limited', 'rate_limited']);
    for (let i = 0; i < 12; i++) expect((await echo(bob[i % 2]!)).meta_data?.error_type).toBeUndefined();

    await redis.stop();
    const refused = await echo(alice[0]!);
    expect(refused.meta_data?.error_type).toBe('downstream_unavailable');
    expect(refused.meta_data?.error_data).toMatchObject({ reason: 'store_unavailable' });
    expect(JSON.stringify(refused)).toContain(redis.url);
    expect((await echo(bob[1]!)).meta_data?.error_type).toBeUndefined();
    const health = (await (
      await fetch(one.healthUrl, { headers: { authorization: `Bearer ${BOB}` } })
    ).json()) as { status: string; store: { ok: boolean; where: string } };
    expect(health).toMatchObject({ status: 'degraded', store: { ok: false, where: redis.url } });
    // Issue 55: the refusal names the store and says the tool's server is fine; the status page
    // shows the store down, with since when.
    expect(refused.meta_data?.error_data).toMatchObject({ store: redis.url });
    expect(JSON.stringify(refused)).toContain("the gateway's operator must restore its store");
    const page = (await (
      await fetch(one.healthUrl.replace('/healthz', '/status/data'), {
        headers: { authorization: `Bearer ${BOB}` },
      })
    ).json()) as { store?: { ok: boolean; where: string; since?: number } };
    expect(page.store).toMatchObject({ ok: false, where: redis.url });
    expect(typeof page.store?.since).toBe('number');
  });

  /**
   * Two replicas sharing one Redis, alice limited to `limit` calls a day, their servers up and the
   * window far from its end; alice's client on each.
   */
  async function limitedReplicas(limit: number): Promise<Client[]> {
    const redis = await startRedis();
    redises.push(redis);
    const file = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        'http:',
        '  auth:',
        '    tokens:',
        `      alice: { token: ${ALICE} }`,
        'rate_limits:',
        "  - principals: ['token:alice']",
        `    calls: ${limit}`,
        `    per_s: ${DAY_S}`,
        'servers:',
        fixtureEntry('e', 'echo'),
      ].join('\n'),
    );
    const [one, two] = await Promise.all([serveHttp(file), serveHttp(file)]);
    children.push(one.child, two.child);
    const callers = [await client(one.url, ALICE), await client(two.url, ALICE)];
    // Both replicas' servers up first: the calls must meet the limit, not a start.
    await ready(one, two);
    await awayFromWindowEnd(DAY_S * 1000);
    return callers;
  }

  /** What is neither a result nor the limit's refusal, with its reason; and how many were allowed. */
  function tally(answers: readonly Answer[]): { allowed: number; others: unknown[] } {
    const metas = answers.map(({ meta_data }) => meta_data);
    return {
      allowed: metas.filter((meta) => meta?.error_type === undefined).length,
      others: metas.filter((meta) => meta?.error_type !== undefined && meta.error_type !== 'rate_limited'),
    };
  }

  it('I7: two replicas, one store, 32 calls in flight on each: at least 98 percent of a limit of 640 allowed, never above it', async () => {
    const callers = await limitedReplicas(640);
    const answers: Answer[] = [];
    // Waves of 64 calls (32 on each replica) until one is refused: bounded at 15 waves.
    for (let wave = 0; wave < 15 && !answers.some((a) => a.meta_data?.error_type === 'rate_limited'); wave++)
      answers.push(...(await Promise.all(Array.from({ length: 64 }, (_, i) => echo(callers[i % 2]!)))));
    const { allowed, others } = tally(answers);
    expect(others).toEqual([]);
    expect(allowed).toBeLessThanOrEqual(640);
    expect(allowed).toBeGreaterThanOrEqual(628);
  });

  it('I7, issue 55: two replicas, one store, 200 calls at once against a limit of 160: at least 98 percent allowed, never above it', async () => {
    const callers = await limitedReplicas(160);
    const { allowed, others } = tally(
      await Promise.all(Array.from({ length: 200 }, (_, i) => echo(callers[i % 2]!))),
    );
    expect(others).toEqual([]);
    expect(allowed).toBeLessThanOrEqual(160);
    expect(allowed).toBeGreaterThanOrEqual(157);
  });

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
    const file = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        `state_dir: ${JSON.stringify(dir)}`,
        'servers:',
        fixtureEntry('e', 'echo'),
      ].join('\n'),
    );
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

  it('K2, issue 48: a replica started while the store was away takes what it remembers once it is back', async () => {
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

  it('K4, issue 48: `pins` says when the store could not be read, and `pins approve` approves nothing until it can put the approval there', async () => {
    let redis = await startRedis();
    redises.push(redis);
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-pins-'));
    const file = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        `state_dir: ${JSON.stringify(dir)}`,
        'pinning: hold',
        'servers:',
        fixtureEntry('e', 'echo'),
      ].join('\n'),
    );
    // The gateway lists e once (catalog and pins, in the folder and the store) ...
    expect((await runCli(['tools', '--config', file])).code).toBe(0);
    await redis.stop();
    // ... and remembers a changed description of it (as a later listing would have).
    const [catalogFile] = readdirSync(join(dir, 'catalogs'));
    const catalogPath = join(dir, 'catalogs', catalogFile!);
    const catalog = JSON.parse(readFileSync(catalogPath, 'utf8')) as { tools: { description?: string }[] };
    catalog.tools[0]!.description = 'Changed.';
    writeFileSync(catalogPath, JSON.stringify(catalog));
    const [pinsName] = readdirSync(join(dir, 'pins'));
    const pinsBefore = readFileSync(join(dir, 'pins', pinsName!), 'utf8');

    const listed = await runCli(['pins', '--config', file]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('+ description: "Changed."');
    expect(listed.stderr).toContain(
      `note: the store at ${redis.url} could not be read (unreachable: connect ECONNREFUSED`,
    );
    const digest = /--digest (\S+)/.exec(listed.stdout)![1]!;
    const refused = await runCli(['pins', 'approve', 'e', '--digest', digest, '--config', file]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      `Nothing approved: the store at ${redis.url} could not be read (unreachable: connect ECONNREFUSED`,
    );
    expect(refused.stderr).toContain(
      'every replica takes approvals from it. Run this again once it is reachable.',
    );
    expect(readFileSync(join(dir, 'pins', pinsName!), 'utf8')).toBe(pinsBefore);

    // Back (and empty): the approval goes to the store and to the folder.
    redis = await startRedis(Number(new URL(redis.url).port));
    redises.push(redis);
    const approved = await runCli(['pins', 'approve', 'e', '--digest', digest, '--config', file]);
    expect([approved.code, approved.stderr.trim()]).toEqual([0, 'Approved: e tool echo (changed)']);
    expect(readFileSync(join(dir, 'pins', pinsName!), 'utf8')).toContain('Changed.');
    const raw = createClient({ url: redis.url });
    await raw.connect();
    expect(await raw.get(`mcp-normalizer:state:pins/${pinsName!}`)).toContain('Changed.');
    await raw.quit();
  });

  it("F7, I5: with one store.url, a 2026 client's file link made on one replica reads on the other for the same principal, and never for another", async () => {
    const redis = await startRedis();
    redises.push(redis);
    const file = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        'output:',
        '  files: resource',
        'http:',
        '  auth:',
        '    tokens:',
        `      alice: { token: ${ALICE} }`,
        `      bob: { token: ${BOB} }`,
        'servers:',
        fixtureEntry('g', 'files'),
      ].join('\n'),
    );
    const [one, two] = await Promise.all([serveHttp(file), serveHttp(file)]);
    children.push(one.child, two.child);
    const made = await (await client(one.url, ALICE)).callTool({ name: 'g_big_image', arguments: {} });
    const link = (made.content as { type: string; uri?: string }[]).find(
      (block) => block.type === 'resource_link',
    );
    expect(link?.uri).toMatch(/^mcp-normalizer:\/\/files\//);
    const read = await (await client(two.url, ALICE)).readResource({ uri: link?.uri ?? '' });
    expect(read.contents).toHaveLength(1);
    expect((read.contents[0] as { blob?: string }).blob?.length).toBeGreaterThan(0);
    await expect((await client(two.url, BOB)).readResource({ uri: link?.uri ?? '' })).rejects.toThrow(
      /belongs to another caller/,
    );
  });
});
