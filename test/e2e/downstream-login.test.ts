/**
 * D2: a person logs in to a remote server behind OAuth with `mcp-normalizer login`, and the
 * gateway uses that login. Everything is real: an authorization server (oidc-provider, with
 * dynamic registration, PKCE, its development login pages and refresh tokens), a protected
 * downstream (a gateway B with `http.auth` in front of the counter fixture, which logs each
 * call's principal), the built CLI as child processes, and Chromium playing the user: it opens
 * the URL `login --no-browser` prints, signs in as alice, consents, and is sent back to the
 * command's loopback listener.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { startAuthServer, type AuthServer } from '../../fixtures/servers/oauth.js';
import { cliLogin } from '../helpers/browser-login.js';
import { CLI, fixtureEntry, runCli, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

/** Skipped, naming the install command, where chromium is missing (a failure under CI). */
const suite = describeWith(['chromium']);

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'];
/** The downstream's tokens live this long: the test waits it out once, to see a refresh. */
const TOKEN_TTL_S = 3;

let as: AuthServer;
let browser: Browser;
let b: HttpServe;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [],
    people: true,
    ttlSeconds: TOKEN_TTL_S,
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  b = await serveHttp(
    writeConfig(
      [
        'log_level: debug',
        'http:',
        '  auth:',
        `    issuer: ${as.issuer}`,
        '    clock_skew_s: 0',
        '    required_scopes: [mcp]',
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    ),
  );
  stops.push(() => b.child.kill('SIGKILL'));
}, 60_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await browser?.close();
  await as?.close();
});

/** A config with B as server `b`, `auth: oauth`, its token store beside the config. */
function gatewayConfig(): { file: string; store: string } {
  const file = writeConfig(
    ['token_store: tokens.json', 'servers:', '  b:', `    url: ${b.url}`, '    auth: oauth'].join('\n'),
  );
  return { file, store: join(dirname(file), 'tokens.json') };
}

/** `login b --no-browser`, with Chromium signing in as `user` at the URL it prints. */
async function login(file: string, user: string): Promise<{ code: number | null; stderr: string }> {
  const done = await cliLogin(browser, { file, server: 'b', user, stops });
  expect(done.page).toContain('Logged in to b');
  return done;
}

interface StoredFile {
  logins: Record<
    string,
    Record<
      string,
      { tokens?: { access_token: string; refresh_token?: string; expires_in?: number }; savedAt?: number }
    >
  >;
}
const stored = (store: string) =>
  (JSON.parse(readFileSync(store, 'utf8')) as StoredFile).logins['b']?.['local'];

suite('logging in to a remote server as a person', () => {
  it('D2: login with a browser, a call with that login, a refresh without the user, logout; the store is 0600 and no output holds a token', async () => {
    const { file, store } = gatewayConfig();
    const before = await runCli(['call', 'b_c_hit', '--config', file]);
    expect(before.code).not.toBe(0);
    expect(before.stderr + before.stdout).toContain(`node ${CLI} login b`);
    // D2, R4: not an outage: the reason and the instruction say the user logs in first.
    expect(before.stdout).toContain('"reason": "login_required"');
    expect(before.stdout).toContain('needs the user to log in first');
    // `check` names the server that needs a login, and the command.
    const checked = await runCli(['check', '--config', file]);
    expect(checked.code).toBe(1);
    // D2: in a clone there is no `mcp-normalizer` command: the one named is the one that runs,
    // with the config it was given (issue 56: a hint runs as printed).
    expect(checked.stdout + checked.stderr).toContain(
      `"b" has no login yet: run \`node ${CLI} login b --config ${file}\``,
    );

    const loggedIn = await login(file, 'alice');
    expect(loggedIn.code).toBe(0);
    expect(loggedIn.stderr).toContain(`Logged in to b; the tokens are in ${store}`);
    expect(statSync(store).mode & 0o777).toBe(0o600);
    const first = stored(store)?.tokens;
    expect(first?.access_token).toEqual(expect.any(String));
    expect(first?.refresh_token).toEqual(expect.any(String));

    const called = await runCli(['call', 'b_c_hit', '--config', file]);
    // Seen once under the full suite's load (exit 1): its answer says why, if it happens again.
    expect(called.code, `${called.stdout}\n${called.stderr}`).toBe(0);
    await expect.poll(() => b.stderr()).toMatch(/"principal":"[^"]*#alice"/);

    // The access token expires; the next call refreshes it without anyone, before sending it:
    // B never sees the expired token (it refuses none of that call's requests).
    const expiresAt = (stored(store)?.savedAt ?? 0) + (first?.expires_in ?? 0) * 1000;
    await expect.poll(() => Date.now() > expiresAt + 1000, { timeout: 15_000, interval: 250 }).toBe(true);
    const refusals = (): number => b.stderr().split('HTTP request refused by auth').length;
    const refusedBefore = refusals();
    const again = await runCli(['call', 'b_c_hit', '--config', file]);
    expect(again.code).toBe(0);
    const second = stored(store)?.tokens;
    expect(second?.access_token).not.toBe(first?.access_token);
    expect(refusals()).toBe(refusedBefore);

    for (const output of [loggedIn.stderr, called.stdout, called.stderr, again.stdout, again.stderr]) {
      for (const token of [first?.access_token, first?.refresh_token, second?.access_token])
        expect(output).not.toContain(token);
    }

    const out = await runCli(['logout', 'b', '--config', file]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('Logged out of b.');
    expect(stored(store)).toBeUndefined();
    const after = await runCli(['call', 'b_c_hit', '--config', file]);
    expect(after.code).not.toBe(0);
    expect(after.stderr + after.stdout).toContain(`node ${CLI} login b`);
  }, 120_000);
});
