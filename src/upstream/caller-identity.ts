/**
 * Who is behind one upstream request, as the call path needs it (I2, I6, Q2, Q3, P10): the
 * principal, the profile, the host's capabilities, the caller's view of the policy, the key a
 * `requestState` is bound to, and the key of its per-session server copies. A `Server` is one client's connection: a 2025
 * session, a stdio connection (its one caller: `sole`), or one 2026 HTTP request.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CLIENT_CAPABILITIES_META_KEY, type AuthInfo, type Server } from '@modelcontextprotocol/server';
import type { Caller, HostCapabilities } from '../core/input.js';
import type { Era } from '../core/options.js';
import {
  ANONYMOUS_PRINCIPAL,
  LOCAL_PRINCIPAL,
  principalOf,
  viewOf,
  type CallAccess,
  type Policy,
  type Principal,
  type ProfileSelection,
} from '../core/policy.js';

/** What a request's handler context says about its transport. */
export type RequestContext = { http?: { authInfo?: AuthInfo } };

/** Options of {@link createCallerIdentity}. */
export interface CallerIdentityOptions {
  readonly policy?: Policy;
  readonly profiles?: Readonly<Record<string, ProfileSelection>>;
  /** The profile a stdio connection serves (`serve --profile`). */
  readonly profile?: string;
  /** I3: told once per principal that no `access:` rule names it (it sees nothing). */
  readonly logger?: Pick<Logger, 'info'>;
}

/** Principals already told of having no rule (bounded: past it, nobody more is told). */
const NO_RULE_TOLD = 1024;

/** The callers of one upstream server. */
export interface CallerIdentity {
  /** Marks `server` as the one caller of its transport (stdio, the CLI's in-memory client). */
  markSole(server: Server): void;
  isSole(server: Server): boolean;
  /**
   * I2: the principal of the request's validated token; the local user over stdio (they started
   * the gateway); anonymous over HTTP without identity.
   */
  principal(server: Server, ctx: RequestContext): Principal;
  /** I3, I6: the request's view: its profile's selection, then its principal's policy. */
  access(server: Server, ctx: RequestContext): CallAccess | undefined;
  /** I6: the profile the request came to (`/mcp/<name>`, or stdio's `--profile`), if any. */
  profile(server: Server, ctx: RequestContext): string | undefined;
  /** Q3, P10: the session's or connection's own id, made at its first call (undefined before). */
  idOf(server: Server): string | undefined;
  /** Q3, P10: the session's or connection's own id, made now if it has none. */
  ensureId(server: Server): string;
  /** Q3: a sessionless caller with a validated token is its principal; anonymous ones are one (''). */
  principalKey(ctx: RequestContext): string;
  /**
   * P10: whose copy of a per-session server runs a call: a session's own; a sessionless caller
   * with a validated token, its principal's; the one caller of a stdio connection and anonymous
   * sessionless callers, the shared copy.
   */
  instanceOf(server: Server, owner: object | undefined, ctx: RequestContext): { instance?: string };
  /** F7, I5: one object per principal, owning a sessionless caller's file links. */
  principalObject(authInfo: AuthInfo | undefined): object | undefined;
}

/** @example const callers = createCallerIdentity({ policy }); callers.access(server, ctx); */
export function createCallerIdentity(options: CallerIdentityOptions): CallerIdentity {
  const sole = new WeakSet<Server>();
  const principalObjects = new Map<string, object>();
  const ids = new WeakMap<Server, string>();
  const told = new Set<string>();
  const principal = (server: Server, ctx: RequestContext): Principal => {
    const found =
      principalOf(ctx.http?.authInfo) ?? (sole.has(server) ? LOCAL_PRINCIPAL : ANONYMOUS_PRINCIPAL);
    // I3: a caller no rule names sees nothing; the operator reads why, once per principal.
    if (
      options.policy !== undefined &&
      options.logger !== undefined &&
      !told.has(found.key) &&
      told.size < NO_RULE_TOLD
    ) {
      told.add(found.key);
      const verdict = options.policy.decide(found, '');
      if (!verdict.allowed && verdict.reason === 'no_rule')
        options.logger.info(
          { principal: found.key },
          'no access: rule names this principal: it sees no tool',
        );
    }
    return found;
  };
  const ensureId = (server: Server): string => {
    let id = ids.get(server);
    if (id === undefined) ids.set(server, (id = randomUUID()));
    return id;
  };
  // I6: the endpoint's profile (`/mcp/<name>`), or stdio's `--profile`.
  const profileOf = (server: Server, ctx: RequestContext): string | undefined =>
    sole.has(server) ? options.profile : (ctx.http?.authInfo?.extra?.['profile'] as string | undefined);
  const principalKey = (ctx: RequestContext): string => {
    const found = principalOf(ctx.http?.authInfo);
    return found === undefined ? '' : `principal:${found.key}`;
  };
  return {
    markSole: (server) => void sole.add(server),
    isSole: (server) => sole.has(server),
    principal,
    access: (server, ctx) =>
      viewOf(options.policy, options.profiles, principal(server, ctx), profileOf(server, ctx)),
    profile: profileOf,
    idOf: (server) => ids.get(server),
    ensureId,
    principalKey,
    principalObject(authInfo) {
      const subject = principalOf(authInfo)?.key;
      if (subject === undefined) return undefined;
      let object = principalObjects.get(subject);
      if (object === undefined) principalObjects.set(subject, (object = { principal: subject }));
      return object;
    },
    instanceOf(server, owner, ctx) {
      if (sole.has(server)) return {};
      if (owner !== undefined) return { instance: ensureId(server) };
      const key = principalKey(ctx);
      return key === '' ? {} : { instance: key };
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
  return server.getClientCapabilities() as HostCapabilities | undefined;
}

/**
 * Q2: the host behind a request that is not a tools/call (prompts/get, resources/read): its
 * capabilities travel to a 2026 server; what a 2025 server pushes meanwhile is not relayed (its
 * `ask` refuses: input rounds of these requests are a 2026 server's, Q3).
 */
export function requestCaller(server: Server, era: Era, ctx: { mcpReq: { envelope?: object } }): Caller {
  return {
    key: server,
    capabilities: hostCapabilities(server, era, ctx),
    ask: () =>
      Promise.reject(new Error('requests pushed during prompts/get or resources/read are not relayed')),
  };
}
