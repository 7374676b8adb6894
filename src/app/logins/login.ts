/**
 * `login` and `logout` (D2): the commands' side of `auth: oauth`, over the downstream's login
 * flow and token store. The command line logs in as `local` (the gateway's own login, which
 * lists the server's tools and serves stdio), or, with `--principal`, as one of the gateway's
 * callers (D3: an operator's way for a caller whose host cannot open a login page).
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { Config, OAuthLoginConfig, ServerConfig } from '../../config/types.js';
import { shareLogins } from './shared-logins.js';
import { createRedisStore } from '../state/redis.js';
import { runLogin, type LoginOptions } from '../../downstream/oauth-login.js';
import { LOCAL_PRINCIPAL, tokenStore } from '../../downstream/token-store.js';

/** A server that logs in with `auth: oauth`. */
interface LoginServer {
  readonly server: string;
  readonly url: string;
  readonly auth: OAuthLoginConfig;
  /** @default 'local' */
  readonly principal?: string;
}

/** `name`'s login settings, or a one-line reason why it has none. */
export function loginServer(config: Config, name: string): LoginServer | string {
  const server: ServerConfig | undefined = config.servers.find((candidate) => candidate.name === name);
  if (server === undefined) {
    const names = config.servers.map((candidate) => candidate.name);
    return `no server "${name}" in the config (servers: ${names.length > 0 ? names.join(', ') : 'none'})`;
  }
  const transport = server.transport;
  if (transport.type === 'stdio' || transport.auth?.type !== 'oauth')
    return `server "${name}" does not log in with OAuth: give it \`auth: oauth\` (docs/configuration.md)`;
  return { server: name, url: transport.url, auth: transport.auth };
}

/**
 * I2, D3: the principal `--principal` names, as the key its logins are stored under: `local`;
 * `token:<name>`, a static token; `<issuer>#<sub>` as the gateway writes it; or a bare subject,
 * the configured issuer's. A one-line reason when it names none.
 */
export function principalKey(config: Config, written: string): string | { readonly error: string } {
  const auth = config.http.auth;
  if (written === 'local' || written.includes('#')) return written;
  if (written.startsWith('token:')) {
    const name = written.slice('token:'.length);
    const known = auth?.tokens[name] !== undefined || (name === 'token' && config.http.token !== undefined);
    return known ? written : { error: `no static token "${name}" in http.auth.tokens` };
  }
  if (auth?.issuer === undefined)
    return { error: `"${written}" is no principal: write local, token:<name> or <issuer>#<subject>` };
  return `${auth.issuer}#${written}`;
}

/** D2: logs in to `target` as its principal and stores the tokens; resolves with the store's path. */
export async function login(target: LoginServer, options: LoginOptions): Promise<string> {
  await runLogin(target, options);
  return target.auth.tokenStore;
}

/** D2: forgets the principal's login to `target`; whether there was one. */
export function logout(target: LoginServer): boolean {
  return tokenStore(target.auth.tokenStore).remove(target.server, target.principal ?? LOCAL_PRINCIPAL);
}

/** D2: whether `local` has a login to `target` (tokens stored for its URL). */
export function loggedIn(target: LoginServer): boolean {
  return (
    tokenStore(target.auth.tokenStore).read(target.server, target.url, LOCAL_PRINCIPAL)?.tokens !== undefined
  );
}

/** What {@link withSharedLogins} did: the work's result, and the store it could not reach. */
export interface SharedWork<T> {
  readonly result: T;
  /** The store (without its credentials) and why it could not be reached, if it could not. */
  readonly unreached?: { readonly where: string; readonly why: string };
}

/**
 * Issue 48: runs `work` (a login, a logout) with the token files mirrored to the store the
 * replicas share, when the config names one: every running replica takes the change, unless the
 * store could not be reached (said in the answer, for the command to report in one line: the
 * store client's own log lines are not the command's output).
 */
export async function withSharedLogins<T>(
  config: Config,
  work: () => T | Promise<T>,
): Promise<SharedWork<T>> {
  if (config.store === undefined) return { result: await work() };
  const logger = pino({ level: 'silent' });
  const store = createRedisStore(config.store.url, logger);
  const shared = shareLogins({ store, logger, self: randomUUID() });
  try {
    await shared.attach(config.servers);
    const result = await work();
    await shared.flush();
    const why = shared.unreached();
    return why === undefined ? { result } : { result, unreached: { where: store.where, why } };
  } finally {
    await store.close();
  }
}
