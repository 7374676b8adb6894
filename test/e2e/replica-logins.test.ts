/**
 * Issue 48: callers' downstream logins (D2, D3) across replicas that share one Redis. Everything
 * is real: an authorization server (oidc-provider), a protected downstream B (a gateway with
 * `http.auth` in front of the counter fixture, logging each call's principal), two replicas
 * r1 and r2 of gateway A, each with a token file of its own, one `store.url` and one public URL
 * served by nginx, and Chromium playing each person. nginx sends the browser to r2 only, so a
 * login started by a call on r1 has every browser leg land on the other replica. Then the
 * logins serve calls on either replica, a replica killed mid-run loses nothing, and a replica
 * started later has them all.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, startNginx, type Nginx } from '../../bench/nginx.js';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { cliLogin, signIn } from '../helpers/browser-login.js';
import { envelope, modernHost, type Answers } from '../helpers/hosts.js';
import { describeWith } from '../helpers/peers.js';
import { startRedis, type RedisPeer } from '../helpers/redis.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const suite = describeWith(['chromium', 'nginx', 'redis-server']);

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'];
const ALICE: AuthClient = { id: 'alice-host', secret: 'alice-host-secret-0123456789', scope: 'mcp' };
const BOB: AuthClient = { id: 'bob-host', secret: 'bob-host-secret-0123456789', scope: 'mcp' };

let as: AuthServer;
let browser: Browser;
let redis: RedisPeer;
let nginx: Nginx;
let b: HttpServe;
let file: string;
let publicUrl: string;
const replicas = new Map<string, HttpServe>();
const stops: (() => unknown)[] = [];

/** Replica `id` of A, on `port` (its own token file, `tokens-<id>.json`). */
async function replica(id: string, port: number): Promise<HttpServe> {
  const started = await serveHttp(file, { MCP_NORMALIZER_REPLICA: id }, 20_000, ['--port', String(port)]);
  stops.push(() => started.child.kill('SIGKILL'));
  replicas.set(id, started);
  return started;
}

/** A host's answers: a URL elicitation is `user` signing in with Chromium. */
function person(user: string, pages: string[]): Answers {
  return async (method, params) => {
    if (method === 'elicitation/create' && params['mode'] === 'url') {
      pages.push(await signIn(browser, String(params['url']), user));
      return { action: 'accept' };
    }
    return { action: 'decline' };
  };
}

/** A 2026 host of `client` at replica `id`, answering URL elicitations as `pages`' person. */
async function host(client: AuthClient, id: string, pages: string[]) {
  const made = modernHost(person(client.id, pages), stops, { elicitation: {} });
  const token = await as.token(client, { resource: `${publicUrl}/mcp` });
  const url = new URL(replicas.get(id)?.url ?? '');
  await made.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return made;
}

/** B's calls that reached its tool for `principal`. */
const callsBy = (principal: string): number =>
  b
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"call_end"') && line.includes(`#${principal}"`)).length;

/** The principals a token file holds a login to B for. */
function loginsIn(id: string): string[] {
  try {
    const stored = JSON.parse(readFileSync(join(dirname(file), `tokens-${id}.json`), 'utf8')) as {
      logins: Record<string, Record<string, unknown>>;
    };
    return Object.keys(stored.logins['b'] ?? {}).sort();
  } catch {
    return [];
  }
}

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [ALICE, BOB],
    people: true,
  });
  redis = await startRedis();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  b = await serveHttp(
    writeConfig(
      [
        'log_level: debug',
        'http:',
        '  auth:',
        `    issuer: ${as.issuer}`,
        '    required_scopes: [mcp]',
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    ),
  );
  stops.push(() => b.child.kill('SIGKILL'));
  const [p1, p2] = [await freePort(), await freePort()];
  // nginx in front of r2 only: the browser's every leg lands there.
  nginx = await startNginx([{ id: 'r2', address: `127.0.0.1:${p2}` }]);
  publicUrl = nginx.url;
  file = writeConfig(
    [
      'log_level: info',
      `store: { url: "${redis.url}" }`,
      'token_store: tokens-${MCP_NORMALIZER_REPLICA:-cli}.json',
      'http:',
      `  public_url: ${publicUrl}`,
      '  auth:',
      `    issuer: ${as.issuer}`,
      'servers:',
      '  b:',
      `    url: ${b.url}`,
      '    auth: oauth',
    ].join('\n'),
  );
  // The operator's login, made on the command line: shared through the store to every replica.
  const operator = await cliLogin(browser, { file, server: 'b', user: 'operator', stops });
  if (operator.code !== 0) throw new Error(`operator login failed:\n${operator.stderr}`);
  await replica('r1', p1);
  await replica('r2', p2);
}, 120_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await browser?.close();
  await nginx?.stop();
  await redis?.stop();
  await as?.close();
});

suite('callers’ downstream logins across replicas sharing a store', () => {
  it('issue 48, D3: a login asked for by a call on r1 completes with every browser leg on r2; the login then serves calls on either replica', async () => {
    // The operator's login reached both replicas' token files through the store.
    expect([loginsIn('r1'), loginsIn('r2')]).toEqual([['local'], ['local']]);
    const alicePages: string[] = [];
    const alice1 = await host(ALICE, 'r1', alicePages);
    expect((await alice1.listTools()).tools.map((tool) => tool.name)).toContain('b_c_hit');
    const first = await alice1.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(envelope(first).error_type, JSON.stringify(first)).toBeUndefined();
    expect(alicePages).toEqual([expect.stringContaining('Logged in to b')]);
    // Each leg came to r2 and was answered by r1, which owns the login.
    expect(replicas.get('r2')?.stderr()).toContain('login leg answered by the replica that owns it');
    // nginx sent them (the link's redirect, the sign-in's, the callback's page) to r2.
    const r2 = new URL(replicas.get('r2')?.url ?? '').host;
    const legs = readFileSync(nginx.accessLog, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith(r2));
    expect(legs).toEqual([`${r2} 302`, `${r2} 302`, `${r2} 200`]);
    await expect.poll(() => callsBy('alice-host')).toBe(1);

    // Alice's login is in r2's file too: a call there needs no page.
    await expect.poll(() => loginsIn('r2')).toContain(`${as.issuer}#alice-host`);
    const alice2 = await host(ALICE, 'r2', alicePages);
    const second = await alice2.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(envelope(second).error_type, JSON.stringify(second)).toBeUndefined();
    expect(alicePages).toHaveLength(1);
    await expect.poll(() => callsBy('alice-host')).toBe(2);

    // Bob starts on r2 (the browser's replica); his login serves him on r1.
    const bobPages: string[] = [];
    const bob2 = await host(BOB, 'r2', bobPages);
    const bobs = await bob2.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(envelope(bobs).error_type, JSON.stringify(bobs)).toBeUndefined();
    await expect.poll(() => loginsIn('r1')).toContain(`${as.issuer}#bob-host`);
    const bob1 = await host(BOB, 'r1', bobPages);
    await bob1.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(bobPages).toHaveLength(1);
    await expect.poll(() => callsBy('bob-host')).toBe(2);
    expect(callsBy('operator')).toBe(0);
  }, 180_000);

  it('issue 48: a replica killed mid-run loses no login; a replica started later has every one at once', async () => {
    replicas.get('r1')?.child.kill('SIGKILL');
    const pages: string[] = [];
    const before = callsBy('alice-host');
    const alice2 = await host(ALICE, 'r2', pages);
    await alice2.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    await replica('r3', await freePort());
    expect(loginsIn('r3')).toEqual([`${as.issuer}#alice-host`, `${as.issuer}#bob-host`, 'local'].sort());
    const alice3 = await host(ALICE, 'r3', pages);
    const late = await alice3.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(envelope(late).error_type, JSON.stringify(late)).toBeUndefined();
    expect(pages).toEqual([]);
    await expect.poll(() => callsBy('alice-host')).toBe(before + 2);
    // No token reaches any replica's log.
    const tokens = JSON.stringify(JSON.parse(readFileSync(join(dirname(file), 'tokens-r3.json'), 'utf8')));
    for (const access of tokens.match(/"access_token":"[^"]+"/g) ?? [])
      for (const served of replicas.values()) expect(served.stderr()).not.toContain(access.split('"')[3]);
  }, 120_000);
});
