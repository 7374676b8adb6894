/**
 * O4: the status page behind `http.auth`, signed in to in a real browser at the gateway's issuer
 * (oidc-provider with its development login pages) instead of pasting a token: an admin sees the
 * servers, and anyone else is told why not.
 */
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAuthServer, type AuthServer } from '../../fixtures/servers/oauth.js';
import { describeWith, peerPath } from '../helpers/peers.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const suite = describeWith(['chromium']);
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'];

let as: AuthServer;
let browser: Browser;
let serve: HttpServe;

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [],
    people: true,
  });
  browser = await chromium.launch({ executablePath: peerPath('chromium') as string, args: FLAGS });
  serve = await serveHttp(
    writeConfig(
      [
        'http:',
        '  auth:',
        `    issuer: ${as.issuer}`,
        "    admins: ['sub:olivia']",
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    ),
  );
}, 60_000);

afterAll(async () => {
  serve?.child.kill('SIGKILL');
  await browser?.close();
  await as?.close();
});

/** A person at the status page who follows its sign-in link and signs in as `user`. */
async function signInAt(user: string): Promise<{ text: () => Promise<string>; close: () => Promise<void> }> {
  const page = await browser.newPage();
  await page.goto(serve.url.replace(/\/mcp$/, '/status'));
  await page.locator('#sign-in-link').click();
  await page.fill('input[name=login]', user);
  await page.fill('input[name=password]', 'any');
  await page.click('button[type=submit]');
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.pathname === '/status' || url.pathname === '/oauth/signin');
  return { text: async () => (await page.textContent('body')) ?? '', close: () => page.close() };
}

suite('the status page signed in to in the browser', () => {
  it('O4: an admin signs in at the issuer and sees the servers; the data then needs no token', async () => {
    const olivia = await signInAt('olivia');
    await expect.poll(olivia.text, { timeout: 10_000 }).toContain('1 of 1 servers ready');
    await olivia.close();
    // Without the session cookie the data is still refused, naming where to sign in.
    const refused = await fetch(serve.url.replace(/\/mcp$/, '/status/data'));
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'unauthorized', sign_in: '/oauth/status-login' });
  });

  it('O4: someone not in http.auth.admins is told so, and sees nothing', async () => {
    const eve = await signInAt('eve');
    expect(await eve.text()).toContain('You signed in as eve, who may not read the status page');
    await eve.close();
  });
});
