/**
 * A person logging in with Chromium at oidc-provider's development pages (fixtures/servers/oauth.ts),
 * and `mcp-normalizer login <server> --no-browser` driven that way: the e2e tests of D2 and D3.
 */
import { spawn } from 'node:child_process';
import type { Browser, BrowserContext } from 'playwright-core';
import { childEnv, CLI } from '../e2e/cli-process.js';
import { ROOT } from './fixtures.js';

/** The authorization URL `login --no-browser` prints. */
const PRINTED_URL = /http:\/\/127\.0\.0\.1:\d+\/auth\?\S+/;

/** Where a login's pages end: the gateway's own pages, or `login`'s loopback `/callback`. */
const LAST_PAGE = /^\/(oauth\/(callback|signin|login)|callback)$/;

/**
 * Chromium as `user`: opens `url` and goes through whatever the authorization server shows (its
 * login form, filled as `user`, and each consent page) until a page of the gateway's or of the
 * loopback `/callback` is left showing; that page's text. A caller's login (D4) takes two
 * rounds: the gateway's own sign-in at its issuer, then the downstream's authorization server.
 * `context` is the person's browser (its cookies); by default a fresh one.
 */
export async function signIn(
  browser: Browser,
  url: string,
  user: string,
  context?: BrowserContext,
): Promise<string> {
  const page = await (context ?? browser).newPage();
  try {
    await page.goto(url);
    for (let step = 0; step < 8; step++) {
      if (LAST_PAGE.test(new URL(page.url()).pathname)) return (await page.textContent('body')) ?? '';
      if ((await page.locator('input[name=login]').count()) > 0) {
        await page.fill('input[name=login]', user);
        await page.fill('input[name=password]', 'any');
      }
      const before = page.url();
      await Promise.all([page.waitForURL((next) => next.href !== before), page.click('button[type=submit]')]);
    }
    throw new Error(`the login went on past 8 pages, at ${page.url()}`);
  } finally {
    await page.close();
  }
}

/**
 * `mcp-normalizer login <server> --no-browser --config <file>` (plus `extra` arguments), with
 * Chromium signing in as `user` at the URL it prints; its exit code, stderr and landing page.
 * `stops` gets the child's kill. Waits at most 20 s for the URL (no expect.poll: it also runs
 * from beforeAll).
 */
export async function cliLogin(
  browser: Browser,
  options: { file: string; server: string; user: string; stops: (() => unknown)[]; extra?: string[] },
): Promise<{ code: number | null; stderr: string; page: string }> {
  const args = [
    CLI,
    'login',
    options.server,
    '--no-browser',
    '--config',
    options.file,
    ...(options.extra ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  options.stops.push(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  for (const end = Date.now() + 20_000; !PRINTED_URL.test(stderr) && Date.now() < end;)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const url = PRINTED_URL.exec(stderr)?.[0];
  if (url === undefined) throw new Error(`login printed no URL within 20 s:\n${stderr}`);
  const page = await signIn(browser, url, options.user);
  return { code: await exited, stderr, page };
}
