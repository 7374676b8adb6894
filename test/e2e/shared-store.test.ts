/**
 * Issue 48 with a real Redis: two replicas (`serve --http`) with one `store.url` count one
 * principal's calls together (I7), and when the store goes away the calls that need it fail with
 * an error that names it while the rest go on.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, expect, it } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { awayFromWindowEnd, startRedis, type RedisPeer } from '../helpers/redis.js';
import { fixtureEntry, modernHttpClient, serveHttp, writeConfig } from './cli-process.js';

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
