/**
 * D3: each caller's own login to a server behind `auth: oauth`, in the running gateway. A call
 * of a principal that has no usable login there does not fail blindly: the gateway starts the
 * authorization code flow for that principal (downstream/oauth-login.ts, with the gateway's own
 * callback `<public_url>/oauth/callback` as the redirect URI), asks the caller's host to open
 * a link of its own that leads there (URL-mode elicitation: a 2025 host's `elicitation/create`, a
 * 2026 host's input round, both through the call's {@link Caller}), binds the login to the browser
 * of the person who proves to be that caller (D4, login-binding.ts), waits for the browser, and
 * runs the call again on a copy of the server that holds the new login (pool.ts `renewLogin`).
 * A host that cannot open URLs gets the failure with an instruction naming the command an
 * operator runs instead. Logins are per server and principal: one principal's tokens never
 * serve another's call.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { OAuthLoginConfig, RemoteTransportConfig, ServerConfig } from '../../config/types.js';
import { hostCanAnswer, type Caller, type ClientAsk } from '../../core/input.js';
import { commandLine } from '../../config/command-line.js';
import { LOGIN_INSTRUCTION } from '../../core/instructions.js';
import { failure, type Result } from '../../core/result.js';
import { isRecord } from '../../core/json.js';
import {
  callbackAnswer,
  PAGE_HEADERS,
  runLogin,
  type LoginCallback,
  type LoginRedirect,
} from '../../downstream/oauth-login.js';
import { createSignIn, type SignIn, type SignInOptions } from './browser-sign-in.js';
import { createStatusSignIn, sharedSessions, STATUS_LOGIN_PATH } from './status-signin.js';
import type { Principal } from '../../core/policy.js';
import { createLoginBinding, LOGIN_START_PATH, SIGN_IN_PATH, type BrowserAnswer } from './login-binding.js';
import { createLoginRelay } from './login-relay.js';
import { shareLogins } from './shared-logins.js';
import type { SharedStore } from '../state/store.js';

/** The gateway's OAuth callback, under its public URL. */
export const LOGIN_CALLBACK_PATH = '/oauth/callback';

/** D3, D4, O4: every path a browser comes to in a caller's login, or the status page's. */
export const LOGIN_PATHS: readonly string[] = [
  LOGIN_START_PATH,
  SIGN_IN_PATH,
  LOGIN_CALLBACK_PATH,
  STATUS_LOGIN_PATH,
];

/** Options of {@link createLogins}. */
export interface LoginsOptions {
  readonly logger: Logger;
  /** `principal` has a new login to `server`: its copy must pick it up. */
  readonly loggedIn: (server: string, principal: string) => void;
  /** How long a login may take, from the URL handed out to the browser's return. @default 300000 */
  readonly timeoutMs?: number;
  /** O4: `http.auth.admins`, who may sign in to the status page. @default [] */
  readonly admins?: readonly string[];
  /**
   * Issue 48: the store the replicas share. With it, callers' downstream logins are shared (each
   * replica's token file kept in line), a browser's leg may land on any replica (the one that
   * started its login answers it), and the status page's sessions are known to every replica.
   */
  readonly store?: SharedStore;
}

/** One login in progress. */
export interface Login {
  /** The authorization URL to open; absent when the stored login sufficed after all. */
  readonly url?: URL;
  /** Settles when the login is over: fulfilled once the tokens are stored. */
  readonly done: Promise<void>;
}

/** The running gateway's logins. */
export interface Logins {
  /** The base of the redirect URI: `http.public_url`, else the URL served (set when it listens). */
  setBase(base: string): void;
  /**
   * D4: how the gateway confirms who is at a browser: a sign-in at its issuer (`http.auth`),
   * its token validated as a host's is. Without it, no caller's login is started from a call.
   */
  setSignIn(options: Omit<SignInOptions, 'redirectUrl'>): void;
  /** Whether a callback URL exists (the gateway serves HTTP). */
  readonly ready: () => boolean;
  /** O4: the admin principal a status page request's session cookie stands for, if any. */
  statusPrincipal(cookie: string | undefined): Principal | undefined | Promise<Principal | undefined>;
  /** The answer to a browser at one of {@link LOGIN_PATHS}; undefined for another path. */
  browser(path: string, url: URL, cookie: string | undefined): Promise<BrowserAnswer | undefined>;
  /** Starts `principal`'s login to `server`, or joins the one in progress. */
  begin(server: ServerConfig, principal: string): Promise<Login>;
  /**
   * Issue 48: brings the token files of `servers` in line with the store (a replica starting, a
   * reload, the store back after an outage); undefined without a store (nothing to wait for).
   */
  share(servers: readonly ServerConfig[]): Promise<void> | undefined;
}

type Waiting = { resolve(callback: LoginCallback): void; reject(error: Error): void };

/** @example const logins = createLogins({ logger, loggedIn: (server, who) => pool.renewLogin(server, who) }); */
export function createLogins(options: LoginsOptions): Logins {
  let base: string | undefined;
  const waiting = new Map<string, Waiting>();
  /** state → the server its login is for (the page names it). */
  const servers = new Map<string, string>();
  const running = new Map<string, Promise<Login>>();
  let signIn: SignIn | undefined;
  const timeoutMs = options.timeoutMs ?? 300_000;
  const { store, logger } = options;
  // Issue 48: this replica among the others, its logins shared and its browser legs relayed.
  const self = randomUUID();
  const shared = store && shareLogins({ store, logger, self, loggedIn: options.loggedIn });
  const relay = store && createLoginRelay({ store, self, logger });
  /** Issue 48: a key a browser's leg carries is this replica's (nothing to do without a store). */
  const claim = (key: string): Promise<void> => relay?.claim(key, timeoutMs) ?? Promise.resolve();
  const statusSignIn = createStatusSignIn({
    claim,
    ...(store !== undefined ? { shared: sharedSessions(store) } : {}),
    signIn: () => signIn,
    admins: options.admins ?? [],
    base: () => base ?? '',
    logger: options.logger,
  });
  const binding = createLoginBinding({
    claim,
    signIn: () => signIn,
    base: () => base ?? '',
    logger: options.logger,
    timeoutMs,
  });

  function start(server: ServerConfig, principal: string): Promise<Login> {
    // D4: the login must end in the browser of the person who is this caller, proven by a sign-in
    // at the gateway's issuer: a static token's caller has no such person, and without an issuer
    // nobody can be confirmed. The operator's `login --principal` remains for them.
    if (signIn === undefined || !principal.includes('#'))
      return Promise.reject(
        new Error(
          signIn === undefined
            ? 'the gateway cannot confirm in a browser who you are (it has no http.auth.issuer)'
            : 'a static token’s caller cannot be confirmed in a browser',
        ),
      );
    const transport = server.transport as RemoteTransportConfig;
    const auth = transport.auth as OAuthLoginConfig;
    let found: (url: URL) => void = () => undefined;
    const url = new Promise<URL>((resolve) => (found = resolve));
    let state: string | undefined;
    // D4: the host gets the gateway's link, bound to this caller, never the authorization URL.
    const opened = (authUrl: URL): void => {
      const link = binding.link({
        principal,
        server: server.name,
        authUrl,
        fail(reason) {
          const mine = state === undefined ? undefined : waiting.get(state);
          if (state !== undefined) waiting.delete(state);
          mine?.reject(reason);
        },
      });
      // Issue 48: the link and the downstream's answer are claimed before the host sees the link.
      const keys = [link.searchParams.get('flow'), authUrl.searchParams.get('state')];
      void Promise.all(keys.map((key) => (key === null ? undefined : claim(key)))).then(() => found(link));
    };
    const redirect: LoginRedirect = {
      url: `${base ?? ''}${LOGIN_CALLBACK_PATH}`,
      answer(mine) {
        state = mine;
        servers.set(mine, server.name);
        return new Promise((resolve, reject) => waiting.set(mine, { resolve, reject }));
      },
      close() {
        if (state !== undefined) {
          waiting.delete(state);
          servers.delete(state);
          binding.end(state);
        }
        return Promise.resolve();
      },
    };
    const done = runLogin(
      { server: server.name, url: transport.url, auth, principal },
      { open: opened, redirect, timeoutMs },
    ).then(() => {
      options.logger.info({ server: server.name, principal }, 'caller logged in');
      options.loggedIn(server.name, principal);
    });
    // The URL once the authorization server is found, or the end of a login that needed none.
    return Promise.race([url.then((found) => ({ url: found, done })), done.then(() => ({ done }))]);
  }

  async function answerBrowser(
    path: string,
    url: URL,
    cookie: string | undefined,
  ): Promise<BrowserAnswer | undefined> {
    if (path === STATUS_LOGIN_PATH) return statusSignIn.start();
    if (path === SIGN_IN_PATH && statusSignIn.owns(url.searchParams.get('state') ?? ''))
      return statusSignIn.finish(url, cookie);
    if (path !== LOGIN_CALLBACK_PATH) return binding.answer(path, url, cookie);
    const state = url.searchParams.get('state') ?? '';
    // D4: only the browser bound to the login completes it.
    const refused = binding.admit(state, cookie);
    if (refused !== undefined) return refused;
    const subject = binding.subjectOf(state);
    return callbackAnswer(
      url,
      (asked) => {
        const name = servers.get(asked);
        return name === undefined || subject === undefined
          ? name
          : `${name} (for your gateway account ${subject})`;
      },
      waiting,
    );
  }

  relay?.serve(answerBrowser);

  return {
    setBase(value) {
      base = value.replace(/\/+$/, '');
    },
    setSignIn(signInOptions) {
      signIn = createSignIn({ ...signInOptions, redirectUrl: `${base ?? ''}${SIGN_IN_PATH}` });
    },
    ready: () => base !== undefined,
    statusPrincipal: (cookie) => statusSignIn.principal(cookie),
    async browser(path, url, cookie) {
      const answer = (await relay?.forward(path, url, cookie)) ?? (await answerBrowser(path, url, cookie));
      return answer === undefined
        ? undefined
        : { ...answer, headers: { ...PAGE_HEADERS, ...answer.headers } };
    },
    share: (servers) => shared?.attach(servers),
    begin(server, principal) {
      const key = `${server.name}\u0000${principal}`;
      let login = running.get(key);
      if (login === undefined) {
        login = start(server, principal);
        running.set(key, login);
        const forget = (): void => void running.delete(key);
        // Over once it ends either way; a failure is each waiting call's to report.
        login.then((started) => started.done.then(forget, forget), forget);
      }
      return login;
    },
  };
}

/** D3: the failure of a call whose caller has no login, or whose login did not complete. */
function loginFailure(result: Result, server: string, principal: string, why: string): Result {
  const data = result.success ? {} : result.errorData;
  return failure(
    'downstream_unavailable',
    `Server "${server}" needs a login of your own (${why}). A host that supports URL elicitation is asked to open it; otherwise the gateway's operator runs \`${commandLine(['login', server, '--principal', principal, '--no-browser'])}\` and sends you the URL.`,
    {
      meta: result.meta,
      errorData: { ...data, reason: 'login_required', server },
      instruction: LOGIN_INSTRUCTION,
    },
  );
}

/** Whether `result` is a call refused for want of the caller's login (dispatch.ts). */
export function needsLogin(result: Result): boolean {
  return !result.success && result.errorData?.['reason'] === 'login_required';
}

/** D3: the logins one call may ask for: the caller's first, and a step-up right after it. */
const LOGINS_PER_CALL = 2;

/**
 * D3: the caller's login to `server`, asked of its host, then `again()` (the call once more);
 * or the failure saying why not. A call refused again for want of a login right after one (the
 * server's step-up: the first login asked only for what its 401 named) takes one more login, as
 * a call on a login that lacks a scope does from the start.
 */
export async function loginThenCall<R>(
  logins: Logins,
  server: ServerConfig,
  principal: string,
  caller: Caller | undefined,
  refused: Result,
  again: () => Promise<R | Result>,
  rounds = LOGINS_PER_CALL,
): Promise<R | Result> {
  const probe: ClientAsk = { method: 'elicitation/create', params: { mode: 'url' } };
  if (!logins.ready() || caller === undefined || !hostCanAnswer(caller.capabilities, probe))
    return loginFailure(refused, server.name, principal, 'your host cannot open a login page');
  let login: Login;
  try {
    login = await logins.begin(server, principal);
  } catch (error) {
    return loginFailure(refused, server.name, principal, `the login could not start: ${reason(error)}`);
  }
  if (login.url !== undefined) {
    let answer: Record<string, unknown>;
    try {
      answer = await caller.ask({
        method: 'elicitation/create',
        params: {
          mode: 'url',
          elicitationId: randomUUID(),
          url: login.url.href,
          message: `mcp-normalizer needs you to log in to "${server.name}" to run this call.`,
        },
      });
    } catch (error) {
      return loginFailure(refused, server.name, principal, `the host did not answer: ${reason(error)}`);
    }
    if (answer['action'] !== 'accept')
      return loginFailure(refused, server.name, principal, `the host answered ${String(answer['action'])}`);
  }
  try {
    // The browser may still be on its way back: bounded by the login's own timeout (runLogin).
    await login.done;
  } catch (error) {
    return loginFailure(refused, server.name, principal, `the login failed: ${reason(error)}`);
  }
  const result = await again();
  if (rounds > 1 && refusedForLogin(result))
    return loginThenCall(logins, server, principal, caller, result, again, rounds - 1);
  return result;
}

/** Whether `value` (a call's answer, whatever its kind) is a {@link needsLogin} refusal. */
function refusedForLogin(value: unknown): value is Result {
  return isRecord(value) && needsLogin(value as unknown as Result);
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
