/**
 * Who is behind one upstream request, as the call path needs it (I2, I6, Q2, Q3, P10): the
 * principal, the profile, the host's capabilities, the caller's view of the policy, the key a
 * `requestState` is bound to, and the key of its per-session server copies. A `Server` is one client's connection: a 2025
 * session, a stdio connection (its one caller: `sole`), or one 2026 HTTP request.
 */
import { randomUUID } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, type AuthInfo, type Server } from '@modelcontextprotocol/server';
import type { CallerTokens } from '../core/caller-tokens.js';
import type { Caller, HostCapabilities } from '../core/input.js';
import type { Era } from '../core/options.js';
import {
  ANONYMOUS_PRINCIPAL,
  LOCAL_PRINCIPAL,
  principalOf,
  type CallAccess,
  type Principal,
} from '../core/policy.js';
import type { CallerViews } from './backend.js';
import { TASKS_EXTENSION } from '../core/tasks.js';

/** What a request's handler context says about its transport. */
export type RequestContext = { http?: { authInfo?: AuthInfo } };

/** Options of {@link createCallerIdentity}. */
export interface CallerIdentityOptions {
  /** I3, I6: each caller's view; absent: every caller everything. */
  readonly views?: CallerViews;
  /** The profile a stdio connection serves (`serve --profile`). */
  readonly profile?: string;
  /** D8: where each caller's current token is kept, when a server exchanges it (token_exchange). */
  readonly callerTokens?: CallerTokens;
}

/**
 * Who is behind one request, worked out once (I2, I3, I6, F7, P10, Q2, Q3) and handed down as one
 * value: every step of the call and of the feature requests reads it instead of asking again.
 */
export interface RequestCaller {
  /** I2: the validated token's principal; `local` over stdio; `anonymous` over HTTP without identity. */
  readonly principal: Principal;
  /** I2: the principal's key when a token named it (logs, logins, spans); undefined for local or anonymous. */
  readonly subject: string | undefined;
  /** I3, I6: the caller's view (its profile's selection, then its policy); undefined: everything. */
  readonly access: CallAccess | undefined;
  /** I6: the profile the request came to (`/mcp/<name>`, or stdio's `--profile`). */
  readonly profile: string | undefined;
  /** F7, I5: who owns the file links its answers make: the session's, else the principal's. */
  readonly filesOwner: object | undefined;
  /** P10: whose copy of a per-session server runs its calls; undefined: the shared copy. */
  readonly instance: string | undefined;
  /** Q3: the key a `requestState` is bound to: the session, else the principal ('' anonymous). */
  readonly roundKey: string;
  /** Q2: what its host declared (a 2026 request carries it, a 2025 session said it at `initialize`). */
  readonly capabilities: HostCapabilities | undefined;
  /**
   * Q2: the host as a request that is not a tools/call hands it down (prompts/get, resources/read,
   * tasks/*): its capabilities travel to a 2026 server; what a 2025 server pushes meanwhile is not
   * relayed (its `ask` refuses: input rounds of these requests are a 2026 server's, Q3).
   */
  readonly host: Caller;
}

/** The callers of one upstream server. */
export interface CallerIdentity {
  /** Marks `server` as the one caller of its transport (stdio, the CLI's in-memory client). */
  markSole(server: Server): void;
  /** Marks `server` as one client's connection (a 2025 session, stdio): it owns its files and rounds. */
  markSession(server: Server): void;
  /** Everything about the caller of one request on `server`, worked out once. */
  resolve(server: Server, era: Era, ctx: RequestContext & { mcpReq: { envelope?: object } }): RequestCaller;
  /** F7, I5: the owner of the file links made for requests on `server` (see {@link RequestCaller}). */
  filesOwner(server: Server, authInfo: AuthInfo | undefined): object | undefined;
  /** Q3, P10: the session's or connection's own id, made at its first call (undefined before). */
  idOf(server: Server): string | undefined;
}

/** @example const callers = createCallerIdentity({ policy }); callers.resolve(server, era, ctx); */
export function createCallerIdentity(options: CallerIdentityOptions): CallerIdentity {
  const sole = new WeakSet<Server>();
  const sessions = new WeakSet<Server>();
  const principalObjects = new Map<string, object>();
  const ids = new WeakMap<Server, string>();
  const principal = (server: Server, ctx: RequestContext): Principal =>
    principalOf(ctx.http?.authInfo) ?? (sole.has(server) ? LOCAL_PRINCIPAL : ANONYMOUS_PRINCIPAL);
  const viewOf = (found: Principal, profile: string | undefined): CallAccess | undefined =>
    options.views?.of(found, profile);
  const ensureId = (server: Server): string => {
    let id = ids.get(server);
    if (id === undefined) ids.set(server, (id = randomUUID()));
    return id;
  };
  // I6: the endpoint's profile (`/mcp/<name>`), or stdio's `--profile`.
  const profileOf = (server: Server, ctx: RequestContext): string | undefined =>
    sole.has(server) ? options.profile : (ctx.http?.authInfo?.extra?.['profile'] as string | undefined);
  // Q3, P10: a sessionless caller with a validated token is its principal; anonymous ones are one.
  const principalKey = (found: Principal | undefined): string =>
    found === undefined ? '' : `principal:${found.key}`;
  const principalObject = (authInfo: AuthInfo | undefined): object | undefined => {
    const key = principalOf(authInfo)?.key;
    if (key === undefined) return undefined;
    let object = principalObjects.get(key);
    if (object === undefined) principalObjects.set(key, (object = { principal: key }));
    return object;
  };
  const filesOwner = (server: Server, authInfo: AuthInfo | undefined): object | undefined =>
    sessions.has(server) ? server : principalObject(authInfo);
  return {
    markSole: (server) => void sole.add(server),
    markSession: (server) => void sessions.add(server),
    filesOwner,
    idOf: (server) => ids.get(server),
    resolve(server, era, ctx) {
      const found = principal(server, ctx);
      const profile = profileOf(server, ctx);
      const session = sessions.has(server);
      const token = principalOf(ctx.http?.authInfo);
      const tokenKey = principalKey(token);
      // D8: the caller's token, for the servers that exchange it; only where one does.
      const presented = ctx.http?.authInfo;
      if (options.callerTokens !== undefined && token !== undefined && presented?.token)
        options.callerTokens.remember(token.key, presented.token, presented.expiresAt);
      const capabilities = hostCapabilities(server, era, ctx);
      return {
        principal: found,
        subject: token?.key,
        access: viewOf(found, profile),
        profile,
        filesOwner: filesOwner(server, ctx.http?.authInfo),
        // P10: a session's own copy; a sessionless caller with a token, its principal's; the one
        // caller of a stdio connection and anonymous sessionless callers, the shared copy.
        instance: sole.has(server) ? undefined : session ? ensureId(server) : tokenKey || undefined,
        roundKey: session ? ensureId(server) : tokenKey,
        capabilities,
        host: { key: server, capabilities, ask: unrelayed },
      };
    },
  };
}

/**
 * Q2: the client capabilities of the host behind a request: a 2026 request carries them, a 2025
 * session declared them in `initialize`.
 */
export function hostCapabilities(
  server: Server,
  era: Era,
  ctx: { mcpReq: { envelope?: object } },
): HostCapabilities | undefined {
  if (era === 'modern') {
    return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
      HostCapabilities | undefined;
  }
  // X5: the Tasks extension is not defined in the 2025 protocol (SEP-2663): a session's is void.
  const declared = server.getClientCapabilities() as HostCapabilities | undefined;
  if (declared?.extensions?.[TASKS_EXTENSION] === undefined) return declared;
  const { [TASKS_EXTENSION]: _tasks, ...extensions } = declared.extensions;
  return { ...declared, extensions };
}

/** What a 2025 server pushes during a request that is not a tools/call: not relayed. */
function unrelayed(): Promise<never> {
  return Promise.reject(new Error('requests pushed during prompts/get or resources/read are not relayed'));
}
