/**
 * A person logging in with Chromium at oidc-provider's development pages (fixtures/servers/oauth.ts),
 * and `mcp-normalizer login <server> --no-browser` driven that way: the e2e tests of D2 and D3.
 */
import { spawn } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { childEnv, CLI } from '../e2e/cli-process.js';
import { ROOT } from './fixtures.js';

/** The authorization URL `login --no-browser` prints. */
const PRINTED_URL = /http:\/\/127\.0\.0\.1:\d+\/auth\?\S+/;

/**
 * Chromium as `user`: signs in at `url`, consents, and follows the redirect back (a loopback
 * `/callback` or the gateway's `/oauth/callback`); the page it lands on, as text.
 */
export async function signIn(browser: Browser, url: string, user: string): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.fill('input[name=login]', user);
    await page.fill('input[name=password]', 'any');
    await page.click('button[type=submit]');
    // The consent page, then the redirect.
    await page.click('button[type=submit]');
    await page.waitForURL(/\/(oauth\/)?callback/);
    return (await page.textContent('body')) ?? '';
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
