/**
 * D3: a server behind `auth: oauth` runs one copy per principal, each with that principal's own
 * login (its tokens in the store under its key). These say which servers do, under which
 * instance key a principal's copy runs, and how the copy sees its server's config.
 */
import type { ServerConfig } from '../config/types.js';

/** D3: the key prefix of a principal's own copy of a server behind `auth: oauth`. */
export const LOGIN_KEY = 'login:';

/** D3: a server whose callers each log in for themselves (`auth: oauth`). */
export function loginsPerPrincipal(server: ServerConfig): boolean {
  return server.transport.type !== 'stdio' && server.transport.auth?.type === 'oauth';
}

/** D3: `server` as `key`'s copy sees it: with that principal's login. */
export function asPrincipal(server: ServerConfig, key: string): ServerConfig {
  const transport = server.transport;
  if (transport.type === 'stdio' || transport.auth?.type !== 'oauth') return server;
  const principal = key.startsWith(LOGIN_KEY) ? key.slice(LOGIN_KEY.length) : key;
  return { ...server, transport: { ...transport, auth: { ...transport.auth, principal } } };
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
