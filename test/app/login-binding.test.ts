/**
 * D4: a caller's login completes only in the browser of the person who proved to be that caller.
 * The three legs with a sign-in that says who signed in (the e2e test runs them with oidc-provider
 * and Chromium: test/e2e/caller-login.test.ts).
 */
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import type { SignIn } from '../../src/app/logins/browser-sign-in.js';
import { createLoginBinding, LOGIN_START_PATH, SIGN_IN_PATH } from '../../src/app/logins/login-binding.js';
import { issuerPrincipal } from '../../src/core/policy.js';

const ISSUER = 'https://idp.example.com';
const BASE = 'https://mcp.example.com';
const quiet = { warn: () => undefined } as unknown as Logger;

/** A sign-in whose code is the subject who signed in. */
const signIn: SignIn = {
  start: (state) => Promise.resolve({ url: new URL(`${ISSUER}/auth?state=${state}`), verifier: 'v' }),
  finish: (code) => Promise.resolve(issuerPrincipal(ISSUER, code, { groups: [], scopes: [] })),
};

function setup() {
  const failures: string[] = [];
  const binding = createLoginBinding({
    signIn: () => signIn,
    base: () => BASE,
    logger: quiet,
    timeoutMs: 300_000,
  });
  const authUrl = new URL('https://as.example.com/authorize?state=s1&client_id=gw');
  const link = binding.link({
    principal: `${ISSUER}#mallory`,
    server: 'tracker',
    authUrl,
    fail: (reason) => failures.push(reason.message),
  });
  /** Leg 1 in a browser: its cookie and the sign-in's state. */
  async function open(): Promise<{ cookie: string; state: string }> {
    const answer = await binding.answer(LOGIN_START_PATH, link, undefined);
    expect(answer?.status).toBe(302);
    const setCookie = String(answer?.headers?.['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly; SameSite=Lax/);
    expect(setCookie).toContain('Secure');
    const state = new URL(String(answer?.headers?.['location'])).searchParams.get('state') ?? '';
    return { cookie: setCookie.split(';')[0] ?? '', state };
  }
  const signedIn = (state: string, subject: string, cookie: string | undefined) =>
    binding.answer(SIGN_IN_PATH, new URL(`${BASE}${SIGN_IN_PATH}?state=${state}&code=${subject}`), cookie);
  return { binding, link, open, signedIn, failures, authUrl };
}

describe('a caller’s login, bound to a browser', () => {
  it('D4: the caller’s own browser, signed in as the caller, is sent on and completes the login', async () => {
    const { binding, link, open, signedIn, failures, authUrl } = setup();
    expect(link.href).toMatch(/^https:\/\/mcp\.example\.com\/oauth\/login\?flow=/);
    const { cookie, state } = await open();
    const on = await signedIn(state, 'mallory', cookie);
    expect(on).toMatchObject({ status: 302, headers: { location: authUrl.href } });
    expect(binding.admit('s1', cookie)).toBeUndefined();
    expect(binding.subjectOf('s1')).toBe('mallory');
    expect(failures).toEqual([]);
  });

  it.each([
    ['another account signs in with the link', 'alice', true, 'opened by another account'],
    ['the sign-in comes back to a browser without the link’s cookie', 'mallory', false, 'another browser'],
  ])('D4: %s: refused, and the login ends', async (_label, subject, withCookie, why) => {
    const { binding, open, signedIn, failures } = setup();
    const { cookie, state } = await open();
    const answer = await signedIn(state, subject, withCookie ? cookie : undefined);
    expect(answer?.status).toBe(403);
    expect(answer?.page).toContain('not yours');
    expect(failures).toEqual([expect.stringContaining(why)]);
    // The callback then completes nothing, in any browser.
    expect(binding.admit('s1', cookie)?.status).toBe(403);
  });

  it('D4: the authorization server’s URL opened elsewhere: its callback in another browser is refused', async () => {
    const { binding, open, signedIn, failures } = setup();
    const { cookie, state } = await open();
    await signedIn(state, 'mallory', cookie);
    // The victim's browser has no cookie, or another flow's.
    expect(binding.admit('s1', undefined)?.status).toBe(403);
    expect(failures).toEqual([expect.stringContaining('not bound')]);
  });

  it('D4: an unknown link or sign-in changes nothing', async () => {
    const { binding, failures } = setup();
    expect(
      (await binding.answer(LOGIN_START_PATH, new URL(`${BASE}/oauth/login?flow=x`), undefined))?.status,
    ).toBe(404);
    expect(
      (await binding.answer(SIGN_IN_PATH, new URL(`${BASE}/oauth/signin?state=x&code=y`), undefined))?.status,
    ).toBe(400);
    expect(binding.admit('unknown-state', undefined)).toBeUndefined();
    expect(failures).toEqual([]);
  });
});
