/**
 * D3: a server behind `auth: oauth` runs one copy per principal, each with that principal's own
 * login (its tokens in the store under its key); D8: so does one behind `auth: token_exchange`,
 * each copy exchanging its caller's current token. These say which servers do, under which
 * instance key a principal's copy runs, and how the copy sees its server's config.
 */
import type { CallerTokens } from '../core/caller-tokens.js';
import type { ServerConfig } from '../config/types.js';

/** D3: the key prefix of a principal's own copy of a server behind `auth: oauth`. */
export const LOGIN_KEY = 'login:';

/** D3, D8: a server whose callers each reach it as themselves (`auth: oauth`, `token_exchange`). */
export function loginsPerPrincipal(server: ServerConfig): boolean {
  const type = server.transport.type !== 'stdio' ? server.transport.auth?.type : undefined;
  return type === 'oauth' || type === 'token_exchange';
}

/**
 * D3: `server` as `key`'s copy sees it: with that principal's login; D8: with that principal's
 * current token (from `tokens`) to exchange.
 */
export function asPrincipal(server: ServerConfig, key: string, tokens?: CallerTokens): ServerConfig {
  const transport = server.transport;
  if (transport.type === 'stdio' || transport.auth === undefined) return server;
  const principal = key.startsWith(LOGIN_KEY) ? key.slice(LOGIN_KEY.length) : key;
  const auth = transport.auth;
  if (auth.type === 'oauth') return { ...server, transport: { ...transport, auth: { ...auth, principal } } };
  if (auth.type !== 'token_exchange') return server;
  const subjectToken = (): string | undefined => tokens?.current(principal, Date.now());
  return { ...server, transport: { ...transport, auth: { ...auth, principal, subjectToken } } };
}

/**
 * P10, D3: the copy of `server` a call runs on: on a server behind `auth: oauth`, the caller's
 * principal's (none without one: the shared copy); else the caller's own (`instance`), if any.
 */
export function copyKey(
  server: ServerConfig,
  options: { readonly principal?: string; readonly instance?: string },
): string | undefined {
  if (!loginsPerPrincipal(server)) return options.instance;
  return options.principal === undefined ? undefined : `${LOGIN_KEY}${options.principal}`;
}
