/**
 * The resource server on the HTTP endpoint (I1, I4): the RFC 9728 metadata, the bearer check of
 * every MCP request with its 401 challenge, and the 403 `insufficient_scope` step-up of a call
 * whose tool needs a scope the caller's token lacks. The validated token rides on the request as
 * `req.auth`, where the SDK transports pick it up as the handlers' `authInfo`.
 */
import type { DpopRequest } from './dpop-proof.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { matchesAny, principalOf, type Principal } from '../core/policy.js';
import type { Identity } from './identity.js';
import { requestsOf } from './http-era.js';
import { sendJson } from './http-probes.js';

/** I4: the scope a call of exposed tool `name` (with `args`) needs and `principal` lacks. */
export type ScopeCheck = (principal: Principal, name: string, args: unknown) => string | undefined;

/** I4, O1, O4: a call answered 403 `insufficient_scope` (the tool as named, its arguments, who, the scope). */
export type StepUpRefused = (name: string, args: unknown, principal: Principal, scope: string) => void;

/** A request that passed {@link HttpAuth.authenticate}. */
type AuthedRequest = IncomingMessage & { auth?: AuthInfo };

/** The resource server of one endpoint. */
export interface HttpAuth {
  /** Answers a GET of the metadata paths; true when it did. */
  answerMetadata(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** I1: the request's token; false when the request was answered (401, 403, 500). */
  authenticate(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** I4: false when a call in `body` needed a scope and was answered 403. */
  stepUp(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<boolean>;
  /** O4: whether the request's token is an admin's (`http.auth.admins`); nothing is answered. */
  admin(req: IncomingMessage): Promise<'ok' | 'unauthorized' | 'forbidden'>;
}

/** The principal an authenticated request carries. */
export function requestPrincipal(req: IncomingMessage): Principal | undefined {
  return principalOf((req as AuthedRequest).auth);
}

/**
 * I6: the request came to a profile's endpoint: the profile rides with the token's `AuthInfo`
 * (an empty one without identity), where the handlers read it.
 */
export function withProfile(req: IncomingMessage, profile: string): void {
  const authed = req as AuthedRequest;
  const auth = authed.auth ?? { token: '', clientId: '', scopes: [] };
  authed.auth = { ...auth, extra: { ...auth.extra, profile } };
}

/** I5, I6: who owns a session opened by this request: its principal, through its profile. */
export function ownerOf(req: IncomingMessage): string | undefined {
  const auth = (req as AuthedRequest).auth;
  const subject = principalOf(auth)?.key;
  const profile = auth?.extra?.['profile'] as string | undefined;
  if (subject === undefined && profile === undefined) return undefined;
  return `${subject ?? ''}\u0000${profile ?? ''}`;
}

/** I8: what a DPoP proof of `req` must match: its method and its path (no query). */
function dpopRequest(req: IncomingMessage): DpopRequest {
  return {
    proof: req.headers['dpop'],
    method: req.method ?? '',
    path: (req.url ?? '/').split(/[?#]/, 1)[0] ?? '/',
  };
}

/** @example const auth = createHttpAuth(identity, logger, scopeCheck); */
export function createHttpAuth(
  identity: Identity,
  logger: Logger,
  scopeCheck?: ScopeCheck,
  admins: readonly string[] = [],
  refused?: StepUpRefused,
  /** O4: the principal of a status page session cookie (a sign-in in the browser), if any. */
  session?: (cookie: string | undefined) => Principal | undefined | Promise<Principal | undefined>,
): HttpAuth {
  /**
   * One verdict per request, however many steps ask (the status page's, then the endpoint's):
   * a DPoP proof may be presented once (I8), and a token is verified once.
   */
  const verdicts = new WeakMap<IncomingMessage, ReturnType<Identity['authenticate']>>();
  const verdictOf = (req: IncomingMessage): ReturnType<Identity['authenticate']> => {
    let verdict = verdicts.get(req);
    if (verdict === undefined)
      verdicts.set(req, (verdict = identity.authenticate(req.headers.authorization, dpopRequest(req))));
    return verdict;
  };
  return {
    async admin(req) {
      const signedIn =
        req.headers.authorization === undefined ? await session?.(req.headers.cookie) : undefined;
      if (signedIn !== undefined) return matchesAny(admins, signedIn) ? 'ok' : 'forbidden';
      const verdict = await verdictOf(req);
      if (!verdict.ok) return 'unauthorized';
      return matchesAny(admins, verdict.principal) ? 'ok' : 'forbidden';
    },
    answerMetadata(req, res, path) {
      if (path !== identity.metadataPath && path !== '/.well-known/oauth-protected-resource') return false;
      if (req.method !== 'GET') {
        res.setHeader('Allow', 'GET');
        sendJson(res, 405, { error: 'method_not_allowed' });
        return true;
      }
      res.setHeader('Cache-Control', 'public, max-age=300');
      sendJson(res, 200, identity.metadata());
      return true;
    },
    async authenticate(req, res) {
      const verdict = await verdictOf(req);
      if (verdict.ok) {
        (req as AuthedRequest).auth = verdict.auth;
        return true;
      }
      // L2: the reason, never the token.
      logger.info({ status: verdict.status, reason: reasonOf(verdict.body) }, 'HTTP request refused by auth');
      res.writeHead(verdict.status, verdict.headers);
      res.end(verdict.body);
      return false;
    },
    async stepUp(req, res, body) {
      const principal = requestPrincipal(req);
      if (scopeCheck === undefined || principal === undefined) return true;
      for (const request of requestsOf(body)) {
        if (request['method'] !== 'tools/call') continue;
        const params = request['params'] as { name?: unknown; arguments?: unknown } | undefined;
        if (typeof params?.name !== 'string') continue;
        const scope = scopeCheck(principal, params.name, params.arguments);
        if (scope === undefined) continue;
        const answer = await identity.insufficientScope(scope, `the tool needs the scope ${scope}`);
        logger.info({ principal: principal.key, scope }, 'call refused: insufficient_scope');
        // The refusal is a call's end like any other: recent calls, metrics, the call log.
        refused?.(params.name, params.arguments, principal, scope);
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return false;
      }
      return true;
    },
  };
}

function reasonOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; error_description?: unknown };
    return [parsed.error, parsed.error_description].filter((part) => typeof part === 'string').join(': ');
  } catch {
    return undefined;
  }
}
