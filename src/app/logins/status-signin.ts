/**
 * O4: the status page behind `http.auth`, signed in to in the browser instead of a raw token
 * pasted into it. `/oauth/status-login` sends the browser to sign in at the gateway's issuer
 * (the same sign-in as D4's, browser-sign-in.ts: its client, its redirect URI `/oauth/signin`);
 * back there, a principal listed in `http.auth.admins` gets a session cookie for the page
 * (HttpOnly, SameSite=Strict, 8 hours at most, kept in this process), and anyone else a 403 that
 * says why. The sign-in must come back to the browser that started it (a cookie of its own), so a
 * sign-in link sent to someone else signs no one in.
 */
import type { Logger } from 'pino';
import { matchesAny, type Principal } from '../../core/policy.js';
import { PAGE } from '../../downstream/oauth-login.js';
import { cookieOf, digest, randomToken as random, sameDigest } from './browser-secrets.js';
import type { SignIn } from './browser-sign-in.js';
import type { BrowserAnswer } from './login-binding.js';
import { parseBoundedJson, RECORD_BOUNDS } from '../../core/bounded-json.js';
import { KEYS, type SharedStore } from '../state/store.js';

/** Where the page's "Sign in" link points. */
export const STATUS_LOGIN_PATH = '/oauth/status-login';

/** How long a page session lasts. */
const SESSION_MS = 8 * 60 * 60 * 1000;
/** How long a sign-in may take, from the link to its return. */
const SIGN_IN_MS = 10 * 60 * 1000;
/** Sessions kept at once; the oldest goes first. */
const MAX_SESSIONS = 256;

const SESSION_COOKIE = 'mcpn_status';
const SIGN_IN_COOKIE = 'mcpn_status_signin';

/** Options of {@link createStatusSignIn}. */
export interface StatusSignInOptions {
  readonly signIn: () => SignIn | undefined;
  /** `http.auth.admins`. */
  readonly admins: readonly string[];
  readonly base: () => string;
  readonly logger: Logger;
  /** Issue 48: claims a sign-in's `state` for this replica, so its return may land on another. */
  readonly claim?: (state: string) => Promise<void>;
  /** Issue 48: sessions every replica knows (the store), by the digest of their cookie. */
  readonly shared?: SharedSessions;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Issue 48: the store's side of the page's sessions: a digest of the cookie, never the cookie. */
export interface SharedSessions {
  put(key: string, principal: string, ttlMs: number): Promise<void>;
  get(key: string): Promise<string | undefined>;
}

/** Issue 48: the page's sessions in the store, by the digest of their cookie. */
export function sharedSessions(store: SharedStore): SharedSessions {
  return {
    put: (key, principal, ttlMs) =>
      store.put(KEYS.statusSession(key), principal, { ttlMs }).then(() => undefined),
    get: (key) => store.get(KEYS.statusSession(key)),
  };
}

/** How long a session taken from the store is trusted here before the store is asked again. */
const SHARED_RECHECK_MS = 60_000;

/** The status page's browser sign-in and its sessions. */
export interface StatusSignIn {
  /** Leg 1, at {@link STATUS_LOGIN_PATH}. */
  start(): Promise<BrowserAnswer>;
  /** Whether the sign-in coming back with `state` is one of the page's. */
  owns(state: string): boolean;
  /** Leg 2, at `/oauth/signin`. */
  finish(url: URL, cookie: string | undefined): Promise<BrowserAnswer>;
  /**
   * The admin principal a request's session cookie stands for, if any (a promise when the
   * session must be looked for in the store: it was made on another replica).
   */
  principal(cookie: string | undefined): Principal | undefined | Promise<Principal | undefined>;
}

/** @example const page = createStatusSignIn({ signIn: () => signIn, admins, base: () => base, logger }); */
export function createStatusSignIn(options: StatusSignInOptions): StatusSignIn {
  const now = options.now ?? Date.now;
  const pending = new Map<string, { verifier: string; browser: Buffer; until: number }>();
  const sessions = new Map<string, { principal: Principal; until: number }>();
  const secure = (): string => (options.base().startsWith('https:') ? '; Secure' : '');

  /** Issue 48: a session another replica made, kept here a minute before the store is asked again. */
  async function fromStore(key: string): Promise<Principal | undefined> {
    const json = await options.shared?.get(key).catch(() => undefined);
    if (json === undefined) return undefined;
    const principal = parseBoundedJson(json, RECORD_BOUNDS) as Principal | undefined;
    if (typeof principal !== 'object' || principal === null) return undefined;
    if (typeof principal.key !== 'string' || !Array.isArray(principal.groups)) return undefined;
    if (!principal.groups.every((group) => typeof group === 'string')) return undefined;
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
    sessions.set(key, { principal, until: now() + SHARED_RECHECK_MS });
    return principal;
  }

  return {
    async start() {
      const signIn = options.signIn();
      if (signIn === undefined)
        return { status: 503, page: PAGE('This gateway cannot sign you in: it has no http.auth.issuer.') };
      const state = random();
      const browser = random();
      const started = await signIn.start(state).catch((error: unknown) => error as Error);
      if (started instanceof Error) {
        options.logger.warn({ err: started }, 'status page sign-in could not start');
        return { status: 502, page: PAGE('The sign-in at the identity provider could not start.') };
      }
      for (const [key, entry] of pending) if (entry.until <= now()) pending.delete(key);
      pending.set(state, { verifier: started.verifier, browser: digest(browser), until: now() + SIGN_IN_MS });
      await options.claim?.(state);
      return {
        status: 302,
        headers: {
          location: started.url.href,
          'set-cookie': `${SIGN_IN_COOKIE}=${browser}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=${SIGN_IN_MS / 1000}${secure()}`,
        },
      };
    },
    owns: (state) => pending.has(state),
    async finish(url, cookie) {
      const state = url.searchParams.get('state') ?? '';
      const entry = pending.get(state);
      pending.delete(state);
      const presented = cookieOf(cookie, SIGN_IN_COOKIE);
      if (entry === undefined || entry.until <= now() || !sameDigest(presented, entry.browser))
        return {
          status: 403,
          page: PAGE('This sign-in did not start in this browser: open the status page again.'),
        };
      const code = url.searchParams.get('code');
      let principal: Principal | undefined;
      try {
        if (code === null) throw new Error('no code');
        principal = await options
          .signIn()
          ?.finish(code, entry.verifier, url.searchParams.get('iss') ?? undefined);
      } catch (error) {
        options.logger.info({ err: error }, 'status page sign-in failed');
        return { status: 403, page: PAGE('The gateway could not confirm who you are.') };
      }
      if (principal === undefined || !matchesAny(options.admins, principal))
        return {
          status: 403,
          page: PAGE(
            `You signed in as ${principal?.subject ?? 'nobody'}, who may not read the status page (http.auth.admins).`,
          ),
        };
      const session = random();
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
      const key = digest(session).toString('base64url');
      sessions.set(key, { principal, until: now() + SESSION_MS });
      await options.shared
        ?.put(key, JSON.stringify(principal), SESSION_MS)
        .catch((error: unknown) =>
          options.logger.warn(
            { err: error },
            'status page session not shared: other replicas ask for a sign-in',
          ),
        );
      options.logger.info({ principal: principal.key }, 'status page signed in');
      return {
        status: 302,
        headers: {
          location: `${options.base()}/status`,
          'set-cookie': `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}${secure()}`,
        },
      };
    },
    principal(cookie) {
      const session = cookieOf(cookie, SESSION_COOKIE);
      if (session === undefined) return undefined;
      const key = digest(session).toString('base64url');
      const entry = sessions.get(key);
      if (entry !== undefined && entry.until > now()) return entry.principal;
      sessions.delete(key);
      return options.shared === undefined ? undefined : fromStore(key);
    },
  };
}
