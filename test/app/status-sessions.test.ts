/**
 * Issue 48, O4: the status page's sign-in sessions across replicas sharing a store. A browser
 * signed in on one replica is known on another (by the digest of its cookie, which is all the
 * store holds); an unknown cookie is nobody's; without a store a session stays where it was made.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createStatusSignIn, type SharedSessions } from '../../src/app/logins/status-signin.js';
import type { SignIn } from '../../src/app/logins/browser-sign-in.js';
import { issuerPrincipal } from '../../src/core/policy.js';

const logger = pino({ level: 'silent' });
const ADMIN = issuerPrincipal('https://issuer.example', 'admin', { groups: ['ops'], scopes: [] });

const signIn: SignIn = {
  start: async (state) => ({ url: new URL(`https://issuer.example/auth?state=${state}`), verifier: 'v' }),
  finish: async () => ADMIN,
};

function store(): SharedSessions & { keys: () => string[]; values: () => string[] } {
  const kept = new Map<string, string>();
  return {
    put: async (key, principal) => void kept.set(key, principal),
    get: async (key) => kept.get(key),
    keys: () => [...kept.keys()],
    values: () => [...kept.values()],
  };
}

function replica(shared?: SharedSessions) {
  return createStatusSignIn({
    signIn: () => signIn,
    admins: ['sub:admin'],
    base: () => 'https://gateway.example',
    logger,
    ...(shared !== undefined ? { shared } : {}),
  });
}

/** Signs a browser in on `at`; its session cookie header. */
async function signedIn(at: ReturnType<typeof replica>): Promise<string> {
  const started = await at.start();
  const location = new URL(String(started.headers?.['location']));
  const browser = String(started.headers?.['set-cookie']).split(';')[0] ?? '';
  const back = new URL(
    `https://gateway.example/oauth/signin?state=${location.searchParams.get('state')}&code=c`,
  );
  const finished = await at.finish(back, browser);
  expect(finished.status).toBe(302);
  return String(finished.headers?.['set-cookie']).split(';')[0] ?? '';
}

describe('status page sessions across replicas', () => {
  it('O4, I5: a session made on one replica is known on another through the store, which holds the cookie’s digest only', async () => {
    const shared = store();
    const [one, two] = [replica(shared), replica(shared)];
    const cookie = await signedIn(one);
    expect(one.principal(cookie)).toEqual(ADMIN);
    expect(await two.principal(cookie)).toEqual(ADMIN);
    // Known on the second now without the store.
    expect(two.principal(cookie)).toEqual(ADMIN);
    const secret = cookie.split('=')[1] ?? '';
    expect(secret.length).toBeGreaterThan(10);
    expect(shared.keys().join()).not.toContain(secret);
    expect(await two.principal('mcpn_status=someone-elses')).toBeUndefined();
  });

  it('O4: without a store a session stays in the replica that made it', async () => {
    const [one, two] = [replica(), replica()];
    const cookie = await signedIn(one);
    expect(one.principal(cookie)).toEqual(ADMIN);
    expect(await two.principal(cookie)).toBeUndefined();
  });
});
