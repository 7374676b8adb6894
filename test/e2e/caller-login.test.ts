/**
 * D3: each caller of a running gateway logs in to a remote server behind OAuth with its own
 * account, through its host's URL elicitation. Everything is real: an authorization server
 * (oidc-provider with its development login pages), a protected downstream B (a gateway with
 * `http.auth` in front of the counter fixture, logging each call's principal), gateway A with
 * `http.auth` (hosts' tokens from the same authorization server) and B as `auth: oauth`, an SDK
 * 1.x client as a 2025 host and an SDK v2 client pinned to 2026-07-28, and Chromium playing each
 * person: it opens the URL the host was asked to open, signs in, consents, and is sent back to
 * A's own `/oauth/callback`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { cliLogin, signIn } from '../helpers/browser-login.js';
import { envelope, legacyHost, modernHost, type Answers } from '../helpers/hosts.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

/** Skipped, naming the install command, where chromium is missing (a failure under CI). */
const suite = describeWith(['chromium']);

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'];
const ALICE: AuthClient = { id: 'alice-host', secret: 'alice-host-secret-0123456789', scope: 'mcp' };
const BOB: AuthClient = { id: 'bob-host', secret: 'bob-host-secret-0123456789', scope: 'mcp' };
const CAROL: AuthClient = { id: 'carol-host', secret: 'carol-host-secret-0123456789', scope: 'mcp' };
const DAVE: AuthClient = { id: 'dave-host', secret: 'dave-host-secret-0123456789', scope: 'mcp' };
const ERIN: AuthClient = { id: 'erin-host', secret: 'erin-host-secret-0123456789', scope: 'mcp' };
// I2: an issuer's client whose tokens' sub is "local", the operator's name.
const LOCAL_NAMED: AuthClient = { id: 'local', secret: 'local-named-secret-0123456789', scope: 'mcp' };
const MALLORY: AuthClient = { id: 'mallory-host', secret: 'mallory-host-secret-0123456789', scope: 'mcp' };

let as: AuthServer;
let browser: Browser;
let b: HttpServe;
let a: HttpServe;
let store: string;
const stops: (() => unknown)[] = [];

/** The operator's own login (`local`): A lists B's tools with it. */
async function operatorLogin(file: string): Promise<void> {
  const done = await cliLogin(browser, { file, server: 'b', user: 'operator', stops });
  if (done.code !== 0) throw new Error(`operator login failed (${String(done.code)}):\n${done.stderr}`);
}

/** A host's answers: a URL elicitation is `user` signing in with Chromium (what a person does). */
function person(user: string, pages: string[]): Answers {
  return async (method, params) => {
    if (method === 'elicitation/create' && params['mode'] === 'url') {
      pages.push(await signIn(browser, String(params['url']), user));
      return { action: 'accept' };
    }
    return { action: 'decline' };
  };
}

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [ALICE, BOB, CAROL, DAVE, ERIN, MALLORY, LOCAL_NAMED],
    scopes: ['counter.admin'],
    people: true,
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  b = await serveHttp(
    writeConfig(
      [
        'log_level: debug',
        'http:',
        '  auth:',
        `    issuer: ${as.issuer}`,
        '    required_scopes: [mcp]',
        // I4 at B: adding needs a scope no first login asks for (a step-up, D3).
        'access:',
        "  - principals: ['*']",
        "    allow: ['*']",
        "    scopes: { 'c_add': 'counter.admin' }",
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    ),
  );
  stops.push(() => b.child.kill('SIGKILL'));
  const file = writeConfig(
    [
      'token_store: tokens.json',
      'http:',
      '  auth:',
      `    issuer: ${as.issuer}`,
      'servers:',
      '  b:',
      `    url: ${b.url}`,
      '    auth: oauth',
    ].join('\n'),
  );
  store = join(dirname(file), 'tokens.json');
  await operatorLogin(file);
  a = await serveHttp(file);
  stops.push(() => a.child.kill('SIGKILL'));
}, 90_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await browser?.close();
  await as?.close();
});

const bearer = async (client: AuthClient) => ({
  headers: { Authorization: `Bearer ${await as.token(client, { resource: a.url })}` },
});

/** B's call_end lines for `principal` (B logs who called, from the token A sent it). */
/**
 * B's call_end lines for `principal` that reached its tool (B logs who called, from the token A
 * sent it); a call B refused with its 403 step-up is logged too (I4, O1), and not counted here.
 */
const callsBy = (principal: string): number =>
  b
    .stderr()
    .split('\n')
    .filter(
      (line) =>
        line.includes('"call_end"') &&
        line.includes(`#${principal}"`) &&
        !line.includes('"errorType":"access_denied"'),
    ).length;

suite('each caller logs in to a downstream for itself', () => {
  it('D3: a 2025 and a 2026 host each complete a first call through URL elicitation; B sees each principal’s calls with its own token only', async () => {
    const alicePages: string[] = [];
    const alice = legacyHost({ elicitation: { form: {}, url: {} } }, person('alice-host', alicePages), stops);
    await alice.connect(new LegacyHttpTransport(new URL(a.url), { requestInit: await bearer(ALICE) }));
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toContain('b_c_hit');
    const first = await alice.callTool({ name: 'b_c_hit', arguments: {} }, undefined, { timeout: 60_000 });
    expect(envelope(first).error_type, JSON.stringify(first)).toBeUndefined();
    expect(alicePages).toEqual([expect.stringContaining('Logged in to b')]);
    await expect.poll(() => callsBy('alice-host')).toBe(1);

    const bobPages: string[] = [];
    const bob = modernHost(person('bob-host', bobPages), stops, { elicitation: {} });
    await bob.connect(new StreamableHTTPClientTransport(new URL(a.url), { requestInit: await bearer(BOB) }));
    const bobs = await bob.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(envelope(bobs).error_type, JSON.stringify(bobs)).toBeUndefined();
    expect(bobPages).toEqual([expect.stringContaining('Logged in to b')]);
    await expect.poll(() => callsBy('bob-host')).toBe(1);

    // Later calls use each one's own login, with no new page.
    await alice.callTool({ name: 'b_c_hit', arguments: {} });
    await bob.callTool({ name: 'b_c_hit', arguments: {} });
    await expect.poll(() => [callsBy('alice-host'), callsBy('bob-host')]).toEqual([2, 2]);
    expect([alicePages.length, bobPages.length]).toEqual([1, 1]);
    expect(callsBy('operator')).toBe(0);

    // One login per server and principal, in the 0600 store; no token reaches A's log.
    const logins = (
      JSON.parse(readFileSync(store, 'utf8')) as {
        logins: Record<string, Record<string, { tokens?: { access_token: string } }>>;
      }
    ).logins['b'];
    expect(Object.keys(logins ?? {}).sort()).toEqual([
      `${as.issuer}#alice-host`,
      `${as.issuer}#bob-host`,
      'local',
    ]);
    for (const login of Object.values(logins ?? {}))
      expect(a.stderr()).not.toContain(login.tokens?.access_token as string);
  }, 120_000);

  it('D3: a step-up (403 insufficient_scope) during a caller’s call asks that caller to log in again with the wider scope, then the call goes through', async () => {
    const davePages: string[] = [];
    const dave = modernHost(person('dave-host', davePages), stops, { elicitation: {} });
    await dave.connect(
      new StreamableHTTPClientTransport(new URL(a.url), { requestInit: await bearer(DAVE) }),
    );
    const first = await dave.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 });
    expect(envelope(first).error_type, JSON.stringify(first)).toBeUndefined();
    expect(davePages).toHaveLength(1);
    // B wants `counter.admin` for c_add; Dave's first login asked for what B's 401 named (mcp).
    const added = await dave.callTool({ name: 'b_c_add', arguments: { a: 1, b: 2 } }, { timeout: 60_000 });
    expect(envelope(added), JSON.stringify(added)).toMatchObject({ results: { sum: 3 } });
    expect(davePages).toEqual([
      expect.stringContaining('Logged in to b'),
      expect.stringContaining('Logged in to b'),
    ]);
    const logins = (
      JSON.parse(readFileSync(store, 'utf8')) as {
        logins: Record<string, Record<string, { tokens?: { scope?: string }; stepUpScope?: string }>>;
      }
    ).logins['b'];
    const login = logins?.[`${as.issuer}#dave-host`];
    expect(login?.tokens?.scope?.split(' ')).toEqual(expect.arrayContaining(['mcp', 'counter.admin']));
    expect(login?.stepUpScope).toBeUndefined();
    // The wider login is Dave's alone: the operator's is as it was.
    expect(logins?.['local']?.tokens?.scope?.split(' ')).not.toContain('counter.admin');
    // B saw both calls as Dave's.
    await expect.poll(() => callsBy('dave-host')).toBe(2);
  }, 120_000);

  it('D3: a 2025 host whose first call needs the wider scope gets both logins within that one call', async () => {
    const erinPages: string[] = [];
    const erin = legacyHost({ elicitation: { form: {}, url: {} } }, person('erin-host', erinPages), stops);
    await erin.connect(new LegacyHttpTransport(new URL(a.url), { requestInit: await bearer(ERIN) }));
    const added = await erin.callTool({ name: 'b_c_add', arguments: { a: 2, b: 5 } }, undefined, {
      timeout: 60_000,
    });
    expect(envelope(added), JSON.stringify(added)).toMatchObject({ results: { sum: 7 } });
    // The first login (none yet) asked for what B's 401 named; B then wanted counter.admin, and
    // the same call asked again (before: it failed with login_required after the first).
    expect(erinPages).toEqual([
      expect.stringContaining('Logged in to b'),
      expect.stringContaining('Logged in to b'),
    ]);
    await expect.poll(() => callsBy('erin-host')).toBe(1);
  }, 120_000);

  it('D3, R4: a host that cannot open a login page gets the failure naming the operator’s command', async () => {
    const carol = legacyHost({}, () => ({}), stops);
    await carol.connect(new LegacyHttpTransport(new URL(a.url), { requestInit: await bearer(CAROL) }));
    const refused = envelope(await carol.callTool({ name: 'b_c_hit', arguments: {} }));
    expect(refused.error_type).toBe('downstream_unavailable');
    expect(refused.error_data).toMatchObject({ reason: 'login_required', server: 'b' });
    expect(refused.error).toContain(`login b --principal '${as.issuer}#carol-host' --no-browser`);
    // R4: not "retry later": the user acts first.
    expect(refused.instruction).toContain('needs the user to log in first');
    expect(callsBy('carol-host')).toBe(0);
  }, 60_000);

  /** Whether A's token store holds tokens of `principal` (a key) for B (its client registration aside). */
  const stored = (principal: string): boolean =>
    (
      JSON.parse(readFileSync(store, 'utf8')) as {
        logins: Record<string, Record<string, { tokens?: unknown }>>;
      }
    ).logins['b']?.[principal]?.tokens !== undefined;

  it('I2: a JWT whose sub is "local" is not the operator: it does not get the operator’s login', async () => {
    const named = legacyHost({}, () => ({}), stops);
    await named.connect(new LegacyHttpTransport(new URL(a.url), { requestInit: await bearer(LOCAL_NAMED) }));
    const refused = envelope(await named.callTool({ name: 'b_c_hit', arguments: {} }));
    expect(refused.error_data).toMatchObject({ reason: 'login_required', server: 'b' });
    expect(refused.error).toContain(`--principal '${as.issuer}#local'`);
    expect(callsBy('operator')).toBe(0);
  }, 60_000);

  it('D4: a caller who hands its login link to someone else gets nothing: the other person signs in as themselves and is told it is not theirs', async () => {
    const victimPages: string[] = [];
    // Mallory's host is asked to open a login page, and Mallory sends the link to Alice instead.
    const mallory = legacyHost(
      { elicitation: { form: {}, url: {} } },
      async (method, params) => {
        if (method !== 'elicitation/create') return { action: 'decline' };
        victimPages.push(await signIn(browser, String(params['url']), 'alice-host'));
        return { action: 'accept' };
      },
      stops,
    );
    await mallory.connect(new LegacyHttpTransport(new URL(a.url), { requestInit: await bearer(MALLORY) }));
    const refused = envelope(
      await mallory.callTool({ name: 'b_c_hit', arguments: {} }, undefined, { timeout: 60_000 }),
    );
    // Alice read whose login it was, and that it is not hers; nothing went on.
    expect(victimPages).toEqual([expect.stringContaining('It is not yours')]);
    expect(victimPages[0]).toContain('mallory-host');
    expect(victimPages[0]).toContain('you signed in as alice-host');
    expect(refused.error_type).toBe('downstream_unavailable');
    expect(refused.error_data).toMatchObject({ reason: 'login_required', server: 'b' });
    expect(refused.error).toContain('opened by another account');
    expect(stored(`${as.issuer}#mallory-host`)).toBe(false);
    expect(callsBy('mallory-host')).toBe(0);
  }, 120_000);

  it('D4: the login swap: a caller passes the authorization server’s own URL to someone else, whose browser comes back without the caller’s binding, and nothing is stored', async () => {
    const victimPages: string[] = [];
    const before = callsBy('alice');
    const mallory = modernHost(
      async (method, params) => {
        if (method !== 'elicitation/create') return { action: 'decline' };
        // Mallory follows his own link, signs in as himself at the gateway's issuer, and takes
        // the downstream's authorization URL the gateway then sends his browser to.
        const page = await browser.newPage();
        let authorization: string | undefined;
        page.on('response', (response) => {
          if (new URL(response.url()).pathname === '/oauth/signin' && response.status() === 302)
            authorization = response.headers()['location'];
        });
        await page.goto(String(params['url']));
        await page.fill('input[name=login]', 'mallory-host');
        await page.fill('input[name=password]', 'any');
        await page.click('button[type=submit]');
        await page.click('button[type=submit]');
        await expect.poll(() => authorization, { timeout: 20_000 }).toBeDefined();
        await page.close();
        expect(authorization).toContain(`${as.issuer}/auth?`);
        // Alice opens it in her own browser, signs in there as herself and consents.
        victimPages.push(await signIn(browser, authorization as string, 'alice'));
        return { action: 'accept' };
      },
      stops,
      { elicitation: {} },
    );
    await mallory.connect(
      new StreamableHTTPClientTransport(new URL(a.url), { requestInit: await bearer(MALLORY) }),
    );
    const refused = envelope(await mallory.callTool({ name: 'b_c_hit', arguments: {} }, { timeout: 60_000 }));
    expect(victimPages).toEqual([expect.stringContaining('is not yours')]);
    expect(refused.error_type).toBe('downstream_unavailable');
    expect(refused.error_data).toMatchObject({ reason: 'login_required' });
    // Alice's tokens were never asked for (no code exchanged), and Mallory's calls never reach B as her.
    expect(stored(`${as.issuer}#mallory-host`)).toBe(false);
    expect(callsBy('alice')).toBe(before);
    expect(callsBy('mallory-host')).toBe(0);
    expect(a.stderr()).toContain('caller login refused');
  }, 120_000);
});
