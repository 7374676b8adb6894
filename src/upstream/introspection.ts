/**
 * RFC 7662 token introspection (I1): an opaque access token is valid when the authorization
 * server says it is `active`, was issued by the configured issuer, for this resource (`aud`), and
 * names a subject (`sub`, else the `client_id` of a machine client). The gateway authenticates
 * with HTTP Basic (`client_secret_basic`). Answers are kept for `cacheSeconds`, never past the
 * token's `exp`, in a bounded map keyed by the token's SHA-256 (the token itself is not kept);
 * refusals too, for a few seconds, so that a stream of bad tokens does not become a stream of
 * introspection requests.
 */
import { createHash } from 'node:crypto';
import { OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';
import { issuerPrincipal } from '../core/policy.js';

/** Answers kept at once; the oldest goes first. */
const CACHE_SIZE = 1024;

/** How long a refusal is kept, in seconds. */
const REFUSAL_S = 5;

/** How long one introspection request may take (with discovery, a request is answered within 15 s). */
const ASK_TIMEOUT_MS = 8000;

/**
 * I1: introspection requests in flight at once, and waiting for a place. A stream of distinct
 * bogus tokens is not turned into as many requests to the issuer: past the queue, a token is
 * answered 500 `server_error` at once (the host may try again), and one token presented by many
 * requests at once is asked about once.
 */
export const INTROSPECTIONS_AT_ONCE = 8;
export const INTROSPECTIONS_WAITING = 64;

/** Options of {@link createIntrospection}. */
export interface IntrospectionOptions {
  /** The endpoint, or how to find it (the issuer's metadata). */
  readonly endpoint: () => Promise<string>;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Expected `iss` when the answer names one. */
  readonly issuer?: string;
  /** What a principal's key names as where it comes from (I2). @default the issuer, else 'introspection' */
  readonly principalIssuer?: string;
  /** Expected in `aud`. */
  readonly audience: string;
  /** The resource the token is for (AuthInfo). */
  readonly resource: URL;
  readonly groupsClaim: string;
  readonly cacheSeconds: number;
  readonly clockSkewSeconds: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Validates one opaque token; throws the SDK's OAuthError (401 invalid_token, or 500). */
export type Introspect = (token: string) => Promise<AuthInfo>;

type Kept = { readonly until: number } & ({ readonly auth: AuthInfo } | { readonly refusal: string });

function stringList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value === 'string') return value.split(' ').filter((item) => item !== '');
  return [];
}

/** Why an introspection answer does not make a valid token for us, or undefined when it does. */
function refusal(
  answer: Record<string, unknown>,
  options: IntrospectionOptions,
  nowS: number,
): string | undefined {
  if (answer['active'] !== true) return 'inactive';
  if (options.issuer !== undefined && answer['iss'] !== undefined && answer['iss'] !== options.issuer)
    return 'issuer';
  if (!stringList(answer['aud']).includes(options.audience)) return 'audience';
  if (typeof answer['exp'] === 'number' && answer['exp'] + options.clockSkewSeconds <= nowS) return 'expired';
  if (typeof answer['nbf'] === 'number' && answer['nbf'] - options.clockSkewSeconds > nowS)
    return 'not_yet_valid';
  const subject = answer['sub'] ?? answer['client_id'];
  if (typeof subject !== 'string' || subject === '') return 'subject';
  return undefined;
}

/** @example const introspect = createIntrospection({ endpoint: async () => url, clientId, clientSecret, audience, resource, groupsClaim: 'groups', cacheSeconds: 60, clockSkewSeconds: 60 }); */
export function createIntrospection(options: IntrospectionOptions): Introspect {
  const fetcher = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const kept = new Map<string, Kept>();
  const basic = `Basic ${Buffer.from(
    `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`,
  ).toString('base64')}`;

  const keep = (key: string, entry: Kept): void => {
    kept.delete(key);
    if (kept.size >= CACHE_SIZE) kept.delete(kept.keys().next().value as string);
    kept.set(key, entry);
  };

  async function ask(token: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetcher(await options.endpoint(), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: basic,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
      });
    } catch {
      throw new OAuthError(OAuthErrorCode.ServerError, 'The authorization server could not be reached');
    }
    const answer: unknown = await response.json().catch(() => undefined);
    if (!response.ok || typeof answer !== 'object' || answer === null || Array.isArray(answer))
      // The gateway's own credentials or the server are wrong: the token is not known to be bad.
      throw new OAuthError(
        OAuthErrorCode.ServerError,
        `Token introspection failed (HTTP ${response.status}): check http.auth.introspection`,
      );
    return answer as Record<string, unknown>;
  }

  /** Introspections under way, by token digest: one request however many present the token. */
  const asking = new Map<string, Promise<AuthInfo>>();
  let running = 0;
  const queue: (() => void)[] = [];
  async function slot<T>(work: () => Promise<T>): Promise<T> {
    if (running >= INTROSPECTIONS_AT_ONCE) {
      if (queue.length >= INTROSPECTIONS_WAITING)
        throw new OAuthError(OAuthErrorCode.ServerError, 'Too many tokens to introspect at once: try again');
      await new Promise<void>((resolve) => queue.push(resolve));
    } else running += 1;
    try {
      return await work();
    } finally {
      const next = queue.shift();
      if (next !== undefined) next();
      else running -= 1;
    }
  }

  async function validate(token: string, key: string): Promise<AuthInfo> {
    const answer = await slot(() => ask(token));
    const nowS = now() / 1000;
    const why = refusal(answer, options, nowS);
    if (why !== undefined) {
      keep(key, { until: nowS + REFUSAL_S, refusal: why });
      throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${why}`);
    }
    const scopes = stringList(answer['scope']);
    const clientId = typeof answer['client_id'] === 'string' ? answer['client_id'] : undefined;
    const principal = issuerPrincipal(
      options.principalIssuer ?? options.issuer ?? 'introspection',
      (answer['sub'] ?? answer['client_id']) as string,
      {
        groups: stringList(answer[options.groupsClaim]),
        scopes,
        ...(clientId !== undefined ? { clientId } : {}),
      },
    );
    const exp = typeof answer['exp'] === 'number' ? answer['exp'] : undefined;
    const auth: AuthInfo = {
      token,
      clientId: clientId ?? '',
      scopes,
      // The SDK refuses a token without an expiry: an answer without `exp` lasts as long as it is kept.
      expiresAt: Math.floor(exp ?? nowS + Math.max(options.cacheSeconds, 1)),
      resource: options.resource,
      extra: { principal },
    };
    const until = Math.min(nowS + options.cacheSeconds, exp ?? Number.POSITIVE_INFINITY);
    if (until > nowS) keep(key, { until, auth });
    return auth;
  }

  return async (token) => {
    const key = createHash('sha256').update(token, 'utf8').digest('base64url');
    const hit = kept.get(key);
    if (hit !== undefined && hit.until > now() / 1000) {
      if ('auth' in hit) return hit.auth;
      throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${hit.refusal}`);
    }
    let pending = asking.get(key);
    if (pending === undefined) {
      pending = validate(token, key).finally(() => asking.delete(key));
      asking.set(key, pending);
    }
    return pending;
  };
}
