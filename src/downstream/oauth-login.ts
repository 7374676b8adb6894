/**
 * `auth: oauth` (D2): the SDK's OAuth client (`auth()`: discovery, registration, PKCE S256, the
 * `resource` parameter, RFC 9207 `iss`, refresh) over our token store. Two uses:
 *
 * - **the gateway**: the transport's provider reads the login `mcp-normalizer login` stored and
 *   saves refreshed tokens back; it never starts a login itself (no browser, no registration):
 *   a server with no usable login fails its connection with {@link LoginRequiredError}, whose
 *   message names the command;
 * - **`login`** ({@link runLogin}): the authorization code flow with a loopback redirect (RFC
 *   8252) on 127.0.0.1, the browser opened or the URL printed, `state` checked on the way back;
 *   or, for a caller of the running gateway (D3), with the gateway's own callback
 *   ({@link LoginRedirect}) and the URL handed to the caller's host.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  auth,
  computeScopeUnion,
  refreshAuthorization,
  selectResourceURL,
  extractWWWAuthenticateParams,
  type DpopSession,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { raceTimeout } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';
import type { OAuthLoginConfig } from '../config/types.js';
import { commandLine } from '../config/command-line.js';
import { storedSession } from './dpop-keys.js';
import { callbackAnswer, PAGE_HEADERS, type LoginCallback, type LoginRedirect } from './login-pages.js';
import { LOCAL_PRINCIPAL, tokenStore, type StoredLogin, type TokenStore } from './token-store.js';

export { callbackAnswer, PAGE, PAGE_HEADERS, type LoginCallback, type LoginRedirect } from './login-pages.js';

/** A server behind `auth: oauth` has no usable login for this principal. */
export class LoginRequiredError extends Error {
  constructor(server: string, why = 'has no login yet') {
    super(`Server "${server}" ${why}: run \`${commandLine(['login', server])}\``);
    this.name = 'LoginRequiredError';
  }
}

/**
 * D2: whether `login`'s access token expires within a quarter of its lifetime (at most a minute):
 * the gateway refreshes it before it sends it.
 */
export function expiresSoon(login: StoredLogin, now: number): boolean {
  const lifetimeS = login.tokens?.expires_in;
  if (lifetimeS === undefined || login.savedAt === undefined) return false;
  const margin = Math.min(60_000, (lifetimeS * 1000) / 4);
  return now >= login.savedAt + lifetimeS * 1000 - margin;
}

/** The server a login is for. */
export interface LoginTarget {
  readonly server: string;
  readonly url: string;
  readonly auth: OAuthLoginConfig;
  /** @default 'local' */
  readonly principal?: string;
}

/** `login`'s part: where the browser comes back to, and what to do with the authorization URL. */
interface Interaction {
  readonly redirectUrl: string;
  readonly state: string;
  open(url: URL): void | Promise<void>;
}

/** The callback path of the loopback redirect. */
const CALLBACK_PATH = '/callback';

/** The SDK's OAuth client provider over the token store (see the module header). */
export class StoredLoginProvider implements OAuthClientProvider {
  readonly #target: LoginTarget;
  readonly #store: TokenStore;
  readonly #interaction: Interaction | undefined;
  #verifier: string | undefined;
  /** D2: the refresh in progress (concurrent requests wait for one refresh, not each their own). */
  #refreshing: Promise<StoredOAuthTokens | undefined> | undefined;
  /** What `login`'s first leg discovered, for the code exchange (SEP-2352's binding); the gateway discovers afresh. */
  #discovery: OAuthDiscoveryState | undefined;
  /** D7: the DPoP session of this login, once asked for. */
  #dpop: Promise<DpopSession> | undefined;

  constructor(target: LoginTarget, interaction?: Interaction) {
    this.#target = target;
    this.#store = tokenStore(target.auth.tokenStore);
    this.#interaction = interaction;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#target.auth.clientMetadataUrl;
  }

  #login(): StoredLogin | undefined {
    return this.#store.read(this.#target.server, this.#target.url, this.#target.principal ?? LOCAL_PRINCIPAL);
  }

  #save(update: Partial<StoredLogin>): void {
    this.#store.write(
      this.#target.server,
      this.#target.url,
      update,
      this.#target.principal ?? LOCAL_PRINCIPAL,
    );
  }

  get redirectUrl(): string {
    return this.#interaction?.redirectUrl ?? this.#login()?.redirectUrl ?? `http://127.0.0.1${CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { auth: config } = this.#target;
    return {
      client_name: 'mcp-normalizer',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: config.clientSecret !== undefined ? 'client_secret_basic' : 'none',
      ...(config.scopes !== undefined ? { scope: config.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    // The gateway's authorization request never leaves (redirectToAuthorization refuses it).
    return this.#interaction?.state ?? randomBytes(16).toString('base64url');
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    const { auth: config } = this.#target;
    if (config.clientId !== undefined) {
      return {
        client_id: config.clientId,
        ...(config.clientSecret !== undefined ? { client_secret: config.clientSecret } : {}),
        // SEP-2352: a configured issuer binds the client to it; the SDK sends it to no other.
        ...(config.issuer !== undefined ? { issuer: config.issuer } : {}),
      };
    }
    const login = this.#login();
    if (this.#interaction === undefined) {
      // The gateway registers nothing: only `login` does, with its own redirect URL.
      if (login?.client === undefined) throw new LoginRequiredError(this.#target.server);
      return login.client;
    }
    // A client registered for another redirect URL cannot come back here: register again.
    return login?.redirectUrl === this.#interaction.redirectUrl ? login.client : undefined;
  }

  saveClientInformation(client: StoredOAuthClientInformation): void {
    this.#save({ client, redirectUrl: this.redirectUrl });
  }

  tokens(): StoredOAuthTokens | undefined | Promise<StoredOAuthTokens | undefined> {
    const login = this.#login();
    // D2: the gateway refreshes tokens about to expire before it sends them (`login` never does).
    if (this.#interaction !== undefined || login?.tokens === undefined || !expiresSoon(login, Date.now()))
      return login?.tokens;
    return (this.#refreshing ??= this.#refresh(login).finally(() => (this.#refreshing = undefined)));
  }

  /**
   * D2: a refresh with the login's refresh token at the authorization server its discovery found;
   * on any failure the tokens as they are (the server's 401 then takes the SDK's own path).
   */
  async #refresh(login: StoredLogin): Promise<StoredOAuthTokens | undefined> {
    const mirror = this.#store.mirror;
    if (mirror === undefined) return this.#refreshNow(login);
    // Issue 48: one replica refreshes; the others take its tokens (a rotated refresh token is
    // good once). The login is read again: another replica's may have arrived meanwhile.
    const principal = this.#target.principal ?? LOCAL_PRINCIPAL;
    await mirror.oneRefresh(this.#target.server, principal, async () => {
      const current = this.#login();
      if (current !== undefined && expiresSoon(current, Date.now())) await this.#refreshNow(current);
    });
    return this.#login()?.tokens;
  }

  async #refreshNow(login: StoredLogin): Promise<StoredOAuthTokens | undefined> {
    const refreshToken = login.tokens?.refresh_token;
    const discovery = login.discovery;
    if (refreshToken === undefined || discovery === undefined) return login.tokens;
    try {
      const resource = await selectResourceURL(this.#target.url, this, discovery.resourceMetadata);
      const tokens = await refreshAuthorization(discovery.authorizationServerUrl, {
        ...(discovery.authorizationServerMetadata !== undefined
          ? { metadata: discovery.authorizationServerMetadata }
          : {}),
        clientInformation: this.clientInformation() as StoredOAuthClientInformation,
        refreshToken,
        ...(resource !== undefined ? { resource } : {}),
        // D7: a DPoP-bound refresh token is only good with a proof of the same key.
        ...(this.#target.auth.dpop === true ? { dpop: await this.dpop() } : {}),
      });
      // RFC 6749 §6: without a new refresh token, the old one stays good.
      this.saveTokens({ ...tokens, refresh_token: tokens.refresh_token ?? refreshToken });
      return this.#login()?.tokens;
    } catch {
      return login.tokens;
    }
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.#save({ tokens, savedAt: Date.now() });
  }

  /** D7: with `dpop`, the login's signing key, kept with its tokens (dpop-keys.ts); else Bearer. */
  dpop(): Promise<DpopSession> | undefined {
    if (this.#target.auth.dpop !== true) return undefined;
    return (this.#dpop ??= storedSession(
      () => this.#login()?.dpopKey,
      (dpopKey) => this.#save({ dpopKey }),
    ));
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.#interaction === undefined) {
      // Step-up (403 insufficient_scope): the scope the server wants now is kept for the next login.
      const scope = url.searchParams.get('scope');
      if (scope !== null) this.#save({ stepUpScope: scope });
      throw new LoginRequiredError(this.#target.server, 'needs a new login');
    }
    await this.#interaction.open(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error('no PKCE code verifier: the login did not start here');
    return this.#verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    if (this.#interaction === undefined) return;
    this.#discovery = state;
    // Kept with the login: the gateway refreshes its tokens at that authorization server.
    this.#save({ discovery: state });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier') this.#verifier = undefined;
    else if (scope === 'discovery') this.#discovery = undefined;
    else if (scope === 'all')
      this.#store.remove(this.#target.server, this.#target.principal ?? LOCAL_PRINCIPAL);
    else if (scope === 'tokens') this.#save({ tokens: undefined, savedAt: undefined });
    else if (scope === 'client') this.#save({ client: undefined, redirectUrl: undefined });
  }
}

/** Listens on 127.0.0.1:`port` (0: any free port); the port taken. */
function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Options of {@link runLogin}. */
export interface LoginOptions {
  /** Opens the authorization URL in a browser; `login --no-browser` only prints it. */
  readonly open: (url: URL) => void | Promise<void>;
  /** Gives up after this long without the browser coming back. @default 300000 */
  readonly timeoutMs?: number;
  /** For the probe of the server's 401. @default fetch */
  readonly fetch?: typeof fetch;
  /** D3: where the browser comes back to. @default a loopback listener on 127.0.0.1 */
  readonly redirect?: LoginRedirect;
}

/**
 * The server's answer to a request without a token: its 401's `WWW-Authenticate` parameters
 * (none when it answers otherwise, or not at all: discovery then starts from the well-known paths).
 */
async function challengeOf(
  url: string,
  fetcher: typeof fetch,
): Promise<ReturnType<typeof extractWWWAuthenticateParams>> {
  try {
    const response = await fetcher(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
    return response.status === 401 ? extractWWWAuthenticateParams(response) : {};
  } catch {
    return {};
  }
}

/** D2: `login`'s loopback listener on 127.0.0.1 (RFC 8252), the port reused when it can be. */
async function loopbackRedirect(
  target: LoginTarget,
  previous: StoredLogin | undefined,
): Promise<LoginRedirect> {
  const listener = createServer();
  // A client registered dynamically is bound to its redirect URL: come back on the same port when it is free.
  const wanted =
    target.auth.callbackPort ??
    (previous?.redirectUrl !== undefined ? Number(new URL(previous.redirectUrl).port) : 0);
  let port: number;
  try {
    port = await listen(listener, wanted);
  } catch (error) {
    if (target.auth.callbackPort !== undefined) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(
        `cannot listen on 127.0.0.1:${target.auth.callbackPort} for the login's redirect (${why})`,
        { cause: error },
      );
    }
    port = await listen(listener, 0);
  }
  const url = `http://127.0.0.1:${port}${CALLBACK_PATH}`;
  const answers = new Map<string, { resolve(callback: LoginCallback): void; reject(error: Error): void }>();
  listener.on('request', (request, response) => {
    const asked = new URL(request.url ?? '/', url);
    if (asked.pathname !== CALLBACK_PATH) {
      response.writeHead(404).end();
      return;
    }
    const answer = callbackAnswer(asked, target.server, answers);
    response.writeHead(answer.status, PAGE_HEADERS).end(answer.page);
  });
  return {
    url,
    answer: (state) => new Promise((resolve, reject) => answers.set(state, { resolve, reject })),
    async close() {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      // The browser keeps its connection open: it must not hold the command up.
      listener.closeAllConnections();
      await closed;
    },
  };
}

/**
 * D2: logs `target`'s principal in to its server (authorization code with PKCE; the browser
 * comes back to `options.redirect`, by default a loopback listener) and stores the tokens.
 * Rejects with a one-line reason.
 */
export async function runLogin(target: LoginTarget, options: LoginOptions): Promise<void> {
  const previous = tokenStore(target.auth.tokenStore).read(target.server, target.url, target.principal);
  const redirect = options.redirect ?? (await loopbackRedirect(target, previous));
  const state = randomBytes(16).toString('base64url');
  const came = redirect.answer(state);
  const provider = new StoredLoginProvider(target, { redirectUrl: redirect.url, state, open: options.open });
  const timeoutMs = options.timeoutMs ?? 300_000;
  try {
    // What the server's own 401 says (RFC 9728 `resource_metadata`, the scope it wants), as a
    // client meeting it at a call would read it; a step-up the gateway met is added.
    const challenge = await challengeOf(target.url, options.fetch ?? fetch);
    const scope = computeScopeUnion(target.auth.scopes?.join(' ') ?? challenge.scope, previous?.stepUpScope);
    // RFC 7591 §2: an authorization server may hold a client to the scope it registered with
    // (oidc-provider does: `invalid_scope`). A wider scope, as a step-up asks, registers anew.
    if (target.auth.clientId === undefined && !registeredFor(registeredScope(previous?.client), scope))
      provider.invalidateCredentials('client');
    // Both legs find the server's metadata where its challenge said (SEP-2352 binds them).
    const server = {
      serverUrl: target.url,
      ...(challenge.resourceMetadataUrl !== undefined
        ? { resourceMetadataUrl: challenge.resourceMetadataUrl }
        : {}),
    };
    const started = await auth(provider, {
      ...server,
      forceReauthorization: true,
      ...(scope !== undefined ? { scope } : {}),
    });
    if (started === 'AUTHORIZED') return;
    if ((await raceTimeout(came, timeoutMs, systemTimers)) === 'timeout')
      throw new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)} s`);
    const { code, iss } = await came;
    const done = await auth(provider, {
      ...server,
      authorizationCode: code,
      ...(iss !== undefined ? { iss } : {}),
    });
    if (done !== 'AUTHORIZED') throw new Error('the authorization server asked for another login');
    if (previous?.stepUpScope !== undefined)
      tokenStore(target.auth.tokenStore).write(
        target.server,
        target.url,
        { stepUpScope: undefined },
        target.principal,
      );
  } finally {
    came.catch(() => undefined);
    await redirect.close();
  }
}

/** The scope a dynamically registered client was registered with, when its registration said. */
function registeredScope(client: StoredOAuthClientInformation | undefined): string | undefined {
  const scope = (client as { scope?: unknown } | undefined)?.scope;
  return typeof scope === 'string' ? scope : undefined;
}

/** Whether a client registered with `registered` (unknown: assume so) may ask for `wanted`. */
function registeredFor(registered: string | undefined, wanted: string | undefined): boolean {
  if (registered === undefined || wanted === undefined) return true;
  const has = new Set(registered.split(' '));
  return wanted.split(' ').every((scope) => scope === '' || has.has(scope));
}
