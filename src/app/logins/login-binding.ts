/**
 * D4: a caller's downstream login (D3) completes only in the browser of the person who asked for
 * it. MCP 2025-11-25's elicitation spec (Security Considerations, Phishing): the server must make
 * sure the user who completes an authorization is the one who started it. Without this, a caller
 * could hand the authorization URL it was given to someone else, whose sign-in would then be
 * stored as the caller's login (a login swap).
 *
 * The host is handed the gateway's own link, `<public_url>/oauth/login?flow=<id>`, never the
 * authorization server's URL. Three legs in the browser:
 *
 * 1. `/oauth/login`: a cookie for this flow (random, HttpOnly, SameSite=Lax, path /oauth) and a
 *    redirect to a sign-in at the gateway's issuer (browser-sign-in.ts);
 * 2. `/oauth/signin`: that sign-in comes back; it must carry the cookie its first leg set, and
 *    the principal it proves must be the caller the flow is for. Only then is the browser bound
 *    to the flow and sent on to the downstream's authorization server;
 * 3. `/oauth/callback`: the downstream's answer completes the login only in the bound browser.
 *
 * Any other browser, or another account, is told on the page that the login is not theirs, and
 * the flow ends (the caller's call fails with `login_required`): nothing is stored, no code is
 * exchanged.
 */
import type { Logger } from 'pino';
import { PAGE } from '../../downstream/oauth-login.js';
import { cookieOf, digest, randomToken as random, sameDigest } from './browser-secrets.js';
import type { SignIn } from './browser-sign-in.js';

/** The browser's paths, under the gateway's public URL. */
export const LOGIN_START_PATH = '/oauth/login';
export const SIGN_IN_PATH = '/oauth/signin';

/** What the browser is answered. */
export interface BrowserAnswer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  /** The page (downstream/oauth-login.ts `PAGE`). */
  readonly page?: string;
}

/** One login waiting for its browser. */
export interface BoundFlow {
  /** The caller's principal key. */
  readonly principal: string;
  readonly server: string;
  /** The downstream authorization server's URL (its `state` is the flow's). */
  readonly authUrl: URL;
  /** Ends the login: the caller's call fails with this reason. */
  fail(reason: Error): void;
}

/** The flows bound to a browser. */
export interface LoginBinding {
  /** The link to hand the caller's host for `flow`; valid while the login is. */
  link(flow: BoundFlow): URL;
  /** The browser's first and second legs ({@link LOGIN_START_PATH}, {@link SIGN_IN_PATH}). */
  answer(path: string, url: URL, cookie: string | undefined): Promise<BrowserAnswer | undefined>;
  /** Leg 3: undefined when the callback for `state` may complete, else the refusal to answer. */
  admit(state: string, cookie: string | undefined): BrowserAnswer | undefined;
  /** The login with `state` is over: forget it. */
  end(state: string): void;
  /** Who the flow with `state` is for (the subject, for the page), while it runs. */
  subjectOf(state: string): string | undefined;
}

interface Flow extends BoundFlow {
  readonly id: string;
  readonly state: string;
  /** SHA-256 of the cookie of the browser that proved to be the caller's. */
  browser?: Buffer;
}

/** The subject part of a principal key (`<issuer>#<sub>`), for the page. */
function subjectOfKey(key: string): string {
  const hash = key.indexOf('#');
  return hash < 0 ? key : key.slice(hash + 1);
}

/** Options of {@link createLoginBinding}. */
export interface LoginBindingOptions {
  readonly signIn: () => SignIn | undefined;
  readonly base: () => string;
  readonly logger: Logger;
  /** Issue 48: claims a sign-in's `state` for this replica, so its return may land on another. */
  readonly claim?: (state: string) => Promise<void>;
  /** How long a link and its cookie last. */
  readonly timeoutMs: number;
}

/** @example const binding = createLoginBinding({ signIn: () => signIn, base: () => base, logger, timeoutMs }); */
export function createLoginBinding(options: LoginBindingOptions): LoginBinding {
  const flows = new Map<string, Flow>();
  const byState = new Map<string, Flow>();
  /** Sign-ins under way (leg 1 → leg 2), by their own state. */
  const signIns = new Map<string, { flow: Flow; verifier: string; browser: Buffer }>();
  const cookieName = (flow: Flow): string => `mcpn_login_${flow.id}`;
  const secure = (): boolean => options.base().startsWith('https:');

  function refuse(flow: Flow, status: number, text: string, why: string): BrowserAnswer {
    options.logger.warn({ server: flow.server, principal: flow.principal, why }, 'caller login refused');
    flow.fail(new Error(why));
    return { status, page: PAGE(text) };
  }

  async function start(url: URL): Promise<BrowserAnswer> {
    const flow = flows.get(url.searchParams.get('flow') ?? '');
    if (flow === undefined)
      return { status: 404, page: PAGE('This login link is not valid: it expired, or its login is over.') };
    const signIn = options.signIn();
    if (signIn === undefined) return { status: 503, page: PAGE('The gateway cannot confirm who you are.') };
    const state = random();
    const browser = random();
    let to: URL;
    try {
      const started = await signIn.start(state);
      to = started.url;
      signIns.set(state, { flow, verifier: started.verifier, browser: digest(browser) });
      await options.claim?.(state);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return refuse(flow, 502, 'The sign-in at the gateway’s identity provider could not start.', why);
    }
    const cookie = [
      `${cookieName(flow)}=${browser}`,
      'Path=/oauth',
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${Math.ceil(options.timeoutMs / 1000)}`,
      ...(secure() ? ['Secure'] : []),
    ].join('; ');
    return { status: 302, headers: { location: to.href, 'set-cookie': cookie } };
  }

  async function signedIn(url: URL, cookie: string | undefined): Promise<BrowserAnswer> {
    const state = url.searchParams.get('state') ?? '';
    const pending = signIns.get(state);
    if (pending === undefined)
      return { status: 400, page: PAGE('This sign-in does not belong to a login in progress.') };
    signIns.delete(state);
    const { flow } = pending;
    if (!flows.has(flow.id)) return { status: 404, page: PAGE('This login is over.') };
    if (!sameDigest(cookieOf(cookie, cookieName(flow)), pending.browser))
      return refuse(
        flow,
        403,
        'This sign-in did not start in this browser, so the login it belongs to is not yours. Nothing was stored, and the login was cancelled.',
        'the sign-in came back to another browser than the one that started it',
      );
    const code = url.searchParams.get('code');
    if (code === null) {
      const error = url.searchParams.get('error') ?? 'no code';
      return refuse(
        flow,
        400,
        'The sign-in was not completed.',
        `the sign-in ended with ${/^[\w.-]{1,64}$/.test(error) ? error : 'an error'}`,
      );
    }
    let principal;
    try {
      principal = await options
        .signIn()
        ?.finish(code, pending.verifier, url.searchParams.get('iss') ?? undefined);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return refuse(flow, 403, 'The gateway could not confirm who you are.', `the sign-in failed: ${why}`);
    }
    if (principal?.key !== flow.principal)
      return refuse(
        flow,
        403,
        `This login to ${flow.server} was asked for by another account (${subjectOfKey(flow.principal)}), and you signed in as ${principal?.subject ?? 'nobody'}. It is not yours: nothing was stored, and the login was cancelled. If you did not ask for it, someone may have tried to get your login.`,
        'the login link was opened by another account',
      );
    flow.browser = pending.browser;
    return { status: 302, headers: { location: flow.authUrl.href } };
  }

  return {
    link(bound) {
      const state = bound.authUrl.searchParams.get('state') ?? '';
      const flow: Flow = { ...bound, id: random(), state };
      flows.set(flow.id, flow);
      byState.set(state, flow);
      const link = new URL(`${options.base()}${LOGIN_START_PATH}`);
      link.searchParams.set('flow', flow.id);
      return link;
    },
    async answer(path, url, cookie) {
      if (path === LOGIN_START_PATH) return start(url);
      if (path === SIGN_IN_PATH) return signedIn(url, cookie);
      return undefined;
    },
    admit(state, cookie) {
      const flow = byState.get(state);
      // Not a bound flow: the callback's own check (an unknown state is refused there).
      if (flow === undefined) return undefined;
      if (sameDigest(cookieOf(cookie, cookieName(flow)), flow.browser)) return undefined;
      return refuse(
        flow,
        403,
        `This login to ${flow.server} is not yours: it was asked for by another account, and it did not go through your browser from its start. Nothing was stored, and the login was cancelled.`,
        'the authorization came back to a browser the login is not bound to',
      );
    },
    end(state) {
      const flow = byState.get(state);
      if (flow === undefined) return;
      byState.delete(state);
      flows.delete(flow.id);
      for (const [key, pending] of signIns) if (pending.flow === flow) signIns.delete(key);
    },
    subjectOf: (state) => {
      const flow = byState.get(state);
      return flow === undefined ? undefined : subjectOfKey(flow.principal);
    },
  };
}
