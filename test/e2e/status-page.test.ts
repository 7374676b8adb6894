/**
 * O4 in a real browser: Debian's headless Chromium, driven by playwright-core, against a real
 * `serve --http` with three servers. The page lists them with their states; a downstream killed
 * during the test shows as restarting, then ready, without a reload; a failing call appears in
 * recent calls with its error type; the catalog filter narrows the list; no console errors; no
 * request leaves 127.0.0.1. With `MCP_NORMALIZER_SCREENSHOT=<file>` the test saves its screenshot
 * there (docs/images/status-page.png is one).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { descendants, fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

/** Skipped, naming the install command, where chromium is missing (a failure under CI). */
const suite = describeWith(['chromium']);

const CHROMIUM = '/usr/bin/chromium';
/** The flags this machine's closed network needs (no background fetches, no QUIC). */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let browser: Browser;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (as root)`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function gateway(extra: string[] = []): Promise<HttpServe> {
  const file = writeConfig(
    [
      ...extra,
      'servers:',
      fixtureEntry('c', 'counter'),
      fixtureEntry('e', 'errors'),
      fixtureEntry('k', 'crash'),
    ].join('\n'),
  );
  const serve = await serveHttp(file);
  stops.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

/** The pid of the gateway's child running fixture `name`. */
function childRunning(gatewayPid: number, name: string): number {
  for (const pid of descendants(gatewayPid)) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${name}.js`)) return pid;
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`no child running ${name}.js`);
}

suite('the status page', () => {
  it('O4: servers and their states live, a killed server restarting then ready, failures, the filter, all from 127.0.0.1', async () => {
    const serve = await gateway();
    const base = serve.url.replace(/\/mcp$/, '');
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    stops.push(() => page.close());
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${base}/status?refresh=250`);
    const state = (server: string) => page.locator(`#servers tr[data-server="${server}"] .state`);
    for (const server of ['c', 'e', 'k']) await expect.poll(() => state(server).textContent()).toBe('ready');

    // A failing call, through a real client.
    const client = new LegacyClient({ name: 'e2e-status', version: '1.0.0' });
    await client.connect(new LegacyHttpTransport(new URL(serve.url)));
    stops.push(() => client.close());
    await client.callTool({ name: 'c_hit', arguments: {} });
    await client.callTool({ name: 'e_internal_error', arguments: {} });
    const failed = page.locator('#calls tr.failed', { hasText: 'e_internal_error' });
    await expect.poll(() => failed.count()).toBeGreaterThan(0);
    expect(await failed.first().locator('.outcome').textContent()).toBe('downstream_error');

    // A downstream killed: restarting, then ready again, with no reload of the page.
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    process.kill(childRunning(serve.child.pid as number, 'crash'), 'SIGKILL');
    // Watched in the page itself (every 20 ms), so a short restart is not missed between polls.
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }
        ).document.querySelector('#servers tr[data-server="k"] .state')?.textContent !== 'ready',
      undefined,
      { polling: 20, timeout: 10_000 },
    );
    expect(['restarting', 'down', 'starting']).toContain(await state('k').textContent());
    await expect.poll(() => state('k').textContent(), { timeout: 15_000 }).toBe('ready');
    expect(await page.locator('#servers tr[data-server="k"] td').nth(6).textContent()).not.toBe('0');
    expect(navigations).toEqual([]);
    // O4: once ready again, the row keeps its last failure and when it was; the summary is whole.
    const lastError = page.locator('#servers tr[data-server="k"] td.error');
    await expect
      .poll(() => lastError.textContent())
      .toMatch(/^last failure \d\d:\d\d:\d\d: Connection closed/);
    await expect.poll(() => page.locator('#summary').textContent()).toBe('3 of 3 servers ready');

    // The catalog filter narrows the list as one types.
    const rows = page.locator('#tools tbody tr');
    const all = await rows.count();
    await page.fill('#filter', 'internal');
    await expect.poll(() => rows.count()).toBe(1);
    expect(all).toBeGreaterThan(5);
    await page.fill('#filter', '');

    const screenshot = process.env['MCP_NORMALIZER_SCREENSHOT'];
    if (screenshot !== undefined && screenshot !== '')
      await page.screenshot({ path: screenshot, fullPage: true });

    expect(problems).toEqual([]);
    const foreign = requests.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith('data:'));
    expect(foreign).toEqual([]);
  }, 60_000);

  it('O4: with http.token, the page and its data answer 401 without it and show nothing; with it, the servers', async () => {
    const serve = await gateway(['http:', '  token: status-page-token-0123456789']);
    const base = serve.url.replace(/\/mcp$/, '');
    const html = await fetch(`${base}/status`);
    expect(html.status).toBe(401);
    const data = await fetch(`${base}/status/data`);
    expect(data.status).toBe(401);
    expect(await data.text()).not.toContain('"servers"');

    const page = await browser.newPage();
    stops.push(() => page.close());
    await page.goto(`${base}/status?refresh=250`);
    await expect.poll(() => page.locator('#login').isVisible()).toBe(true);
    expect(await page.locator('#main').isVisible()).toBe(false);
    await page.fill('#token', 'status-page-token-0123456789');
    await page.click('#login-form button');
    await expect.poll(() => page.locator('#servers tbody tr').count()).toBe(3);
  }, 60_000);

  it('O4: the page holds no secret, a strict CSP, and its assets total under 100 KB', async () => {
    const serve = await gateway();
    const base = serve.url.replace(/\/mcp$/, '');
    const response = await fetch(`${base}/status`);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const assets = readdirSync(new URL('../../assets/status/', import.meta.url));
    let total = 0;
    for (const name of assets)
      total += readFileSync(new URL(`../../assets/status/${name}`, import.meta.url)).length;
    expect(total).toBeLessThan(100 * 1024);
  });
});
