/**
 * Issue 48 on the in-process store (app/state/local.ts; the Redis paths are the e2e tests'),
 * two replicas in one process (each its own token file and its own connection): a login
 * about to expire is refreshed by one replica only, the other taking its tokens (a rotated
 * refresh token is good once); a logout on one is a logout on both; a browser's leg of a login
 * started on one replica is answered by that replica when it lands on the other, and a login
 * whose replica is gone says so.
 */
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLoginRelay } from '../../src/app/logins/login-relay.js';
import { shareLogins } from '../../src/app/logins/shared-logins.js';
import { createLocalStore, localBacking } from '../../src/app/state/local.js';
import { KEYS, type SharedStore } from '../../src/app/state/store.js';
import type { ServerConfig } from '../../src/config/types.js';
import { StoredLoginProvider } from '../../src/downstream/oauth-login.js';
import { tokenStore } from '../../src/downstream/token-store.js';

const logger = pino({ level: 'silent' });
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** `count` connections to one in-process store, as replicas each have their own to Redis. */
function sharedStores(count: number): SharedStore[] {
  const backing = localBacking();
  return Array.from({ length: count }, () => {
    const store = createLocalStore(backing);
    cleanup.push(() => store.close());
    return store;
  });
}

/** A token endpoint that rotates its refresh token: each is good once. */
async function tokenEndpoint(): Promise<{ url: string; refreshes: () => number }> {
  let current = 'rt-0';
  let refreshes = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const given = new URLSearchParams(body).get('refresh_token');
      response.setHeader('content-type', 'application/json');
      if (given !== current) {
        response.writeHead(400).end(JSON.stringify({ error: 'invalid_grant' }));
        return;
      }
      refreshes++;
      current = `rt-${refreshes}`;
      // Slow enough for the other replica to ask while this one refreshes.
      setTimeout(() => {
        response.end(
          JSON.stringify({
            access_token: `at-${refreshes}`,
            token_type: 'bearer',
            expires_in: 3600,
            refresh_token: current,
          }),
        );
      }, 300);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, refreshes: () => refreshes };
}

const SERVER_URL = 'http://127.0.0.1:9/mcp';

function replica(store: SharedStore, self: string, loggedIn: string[] = []) {
  const path = join(mkdtempSync(join(tmpdir(), 'mcp-normalizer-logins-')), 'tokens.json');
  const auth = { type: 'oauth' as const, tokenStore: path };
  const server = {
    name: 'b',
    enabled: true,
    transport: { type: 'http', url: SERVER_URL, auth },
  } as unknown as ServerConfig;
  const shared = shareLogins({
    store,
    logger,
    self,
    loggedIn: (name, principal) => loggedIn.push(`${name}/${principal}`),
  });
  return { path, auth, server, shared, file: tokenStore(path) };
}

describe('logins shared by replicas', () => {
  it('issue 48, D2: a login about to expire is refreshed once across replicas; the other takes its tokens', async () => {
    const [one, two] = sharedStores(2);
    const as = await tokenEndpoint();
    const r1 = replica(one!, 'r1');
    const r2 = replica(two!, 'r2');
    await r1.shared.attach([r1.server]);
    await r2.shared.attach([r2.server]);
    // A login made an hour ago that lasted an hour, written on r1: both files have it.
    r1.file.write('b', SERVER_URL, {
      client: { client_id: 'gateway' },
      tokens: { access_token: 'at-0', token_type: 'bearer', expires_in: 3600, refresh_token: 'rt-0' },
      savedAt: Date.now() - 3_600_000,
      discovery: {
        authorizationServerUrl: as.url,
        authorizationServerMetadata: {
          issuer: as.url,
          authorization_endpoint: `${as.url}/authorize`,
          token_endpoint: `${as.url}/token`,
          response_types_supported: ['code'],
        },
      },
    });
    await expect.poll(() => r2.file.read('b', SERVER_URL)?.tokens?.access_token).toBe('at-0');
    const target = (auth: typeof r1.auth) => ({ server: 'b', url: SERVER_URL, auth });
    const tokens = await Promise.all([
      new StoredLoginProvider(target(r1.auth)).tokens(),
      new StoredLoginProvider(target(r2.auth)).tokens(),
    ]);
    expect(tokens.map((got) => got?.access_token)).toEqual(['at-1', 'at-1']);
    expect(as.refreshes()).toBe(1);
    expect(r1.file.read('b', SERVER_URL)?.tokens?.refresh_token).toBe('rt-1');
    expect(r2.file.read('b', SERVER_URL)?.tokens?.refresh_token).toBe('rt-1');
  });

  it('issue 48, D2: a login on one replica reaches the other (its copy renewed); a logout there is a logout everywhere; a replica starting takes the store’s', async () => {
    const [one, two, three] = sharedStores(3);
    const renewed: string[] = [];
    const r1 = replica(one!, 'r1');
    const r2 = replica(two!, 'r2', renewed);
    await r1.shared.attach([r1.server]);
    await r2.shared.attach([r2.server]);
    r1.file.write(
      'b',
      SERVER_URL,
      { tokens: { access_token: 'a', token_type: 'bearer' }, savedAt: Date.now() },
      'iss#alice',
    );
    await expect.poll(() => r2.file.read('b', SERVER_URL, 'iss#alice')?.tokens?.access_token).toBe('a');
    expect(renewed).toEqual(['b/iss#alice']);
    const r3 = replica(three!, 'r3');
    await r3.shared.attach([r3.server]);
    expect(r3.file.read('b', SERVER_URL, 'iss#alice')?.tokens?.access_token).toBe('a');
    expect(r1.file.remove('b', 'iss#alice')).toBe(true);
    await expect.poll(() => r2.file.read('b', SERVER_URL, 'iss#alice')).toBeUndefined();
    const r4 = replica(three!, 'r4');
    await r4.shared.attach([r4.server]);
    expect(r4.file.read('b', SERVER_URL, 'iss#alice')).toBeUndefined();
  });

  it('issue 48, D3: a browser’s leg claimed by one replica is answered by it when it lands on another; a login whose replica is gone says so', async () => {
    const [one, two] = sharedStores(2);
    const owner = createLoginRelay({ store: one!, self: 'r1', logger });
    const other = createLoginRelay({ store: two!, self: 'r2', logger });
    const seen: string[] = [];
    owner.serve(async (path, url, cookie) => {
      seen.push(`${path}?${url.searchParams.toString()} ${cookie ?? ''}`);
      return { status: 302, headers: { location: 'https://issuer.example/auth', 'set-cookie': 'c=1' } };
    });
    other.serve(async () => ({ status: 500 }));
    await owner.claim('flow-1', 60_000);
    const leg = new URL('http://gateway.example/oauth/login?flow=flow-1');
    await expect
      .poll(() => other.forward('/oauth/login', leg, 'mcpn=x'))
      .toEqual({
        status: 302,
        headers: { location: 'https://issuer.example/auth', 'set-cookie': 'c=1' },
      });
    expect(seen[0]).toBe('/oauth/login?flow=flow-1 mcpn=x');
    // Its owner answers its own legs itself; a key nobody claimed is answered where it lands.
    expect(await owner.forward('/oauth/login', leg, undefined)).toBeUndefined();
    expect(
      await other.forward(
        '/oauth/callback',
        new URL('http://g.example/oauth/callback?state=nobody'),
        undefined,
      ),
    ).toBeUndefined();
    await one!.close();
    await owner.claim('flow-2', 60_000);
    await two!.put(KEYS.loginOwner('flow-2'), 'r1', { ttlMs: 60_000 });
    const gone = await other.forward(
      '/oauth/login',
      new URL('http://g.example/oauth/login?flow=flow-2'),
      undefined,
    );
    expect(gone?.status).toBe(502);
    expect(gone?.page).toContain('no longer running');
  });
});
