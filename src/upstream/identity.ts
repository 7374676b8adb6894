/**
 * The HTTP endpoint as an OAuth 2.1 resource server (I1, I2): who is calling, from the bearer
 * token of each request, validated here and never passed on.
 *
 * - **JWT access tokens** from `issuer`: the signing keys come from the issuer's JWKS (found by
 *   OIDC or RFC 8414 discovery, or `jwks_uri`), cached by `jose` and fetched again when a token
 *   names an unknown `kid`; only asymmetric algorithms; `iss`, `aud` (this resource, RFC 8707),
 *   `exp` and `nbf` checked with a bounded clock skew.
 * - **Opaque tokens** (not JWTs) through RFC 7662 introspection at the issuer, when
 *   `introspection` is configured (introspection.ts).
 * - **Static tokens**, each its own principal (`http.auth.tokens`), compared in constant time.
 *
 * The SDK's `verifyBearerToken` parses the header, enforces `required_scopes` and expiry, and
 * `bearerAuthChallengeResponse` words the 401/403 and its `WWW-Authenticate` challenge, naming
 * the RFC 9728 metadata served by {@link Identity.metadata}.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
  type AuthInfo,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { issuerPrincipal, principalOf, tokenPrincipal, type Principal } from '../core/policy.js';
import { isRecord } from '../core/json.js';
import {
  createProofChecker,
  DPOP_ALGS,
  DpopRefused,
  verifyDpopRequest,
  type DpopRequest,
} from './dpop-proof.js';
import { createIntrospection } from './introspection.js';

/** A `Bearer` challenge without its `error` and `error_description` parameters. */
export function withoutErrorCode(challenge: string): string {
  const params = [...challenge.matchAll(/([A-Za-z_]+)="((?:[^"\\]|\\.)*)"/g)]
    .filter(([, name]) => name !== 'error' && name !== 'error_description')
    .map(([param]) => param);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}

/** Algorithms a token may be signed with: asymmetric only (`none` and HS* never). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** JWTs kept verified at once (see `cachedJwt`). */
const VERIFIED_CACHE_SIZE = 1024;

/** A static token's expiry as the SDK wants one: it refuses tokens without. */
const STATIC_EXPIRY_S = 4_102_444_800; // 2100-01-01

/** One static token and the principal it stands for. */
export interface StaticToken {
  readonly token: string;
  readonly groups: readonly string[];
  readonly scopes: readonly string[];
}

/** Options of {@link createIdentity}. */
export interface IdentityOptions {
  /** The resource identifier: `<public_url>/mcp`, or the served URL. */
  readonly resource: URL;
  /** The authorization server whose JWTs are accepted. */
  readonly issuer?: string;
  /** Accepted `aud`. @default the resource */
  readonly audience?: string;
  /** The issuer's JWKS; found by discovery when absent. */
  readonly jwksUri?: string;
  readonly requiredScopes: readonly string[];
  /** The claim holding the principal's groups. @default 'groups' */
  readonly groupsClaim: string;
  /** Tolerated clock difference with the issuer. @default 60 */
  readonly clockSkewSeconds: number;
  /** RFC 7662 introspection of opaque tokens. */
  readonly introspection?: {
    readonly clientId: string;
    readonly clientSecret: string;
    readonly endpoint?: string;
    readonly cacheSeconds: number;
  };
  /** Static tokens by principal name. */
  readonly tokens: Readonly<Record<string, StaticToken>>;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** How long finding the issuer's metadata, and its keys, may take. @default 5000 */
  readonly discoveryTimeoutMs?: number;
}

/** What a request's `Authorization` header came to. */
export type Authentication =
  | { readonly ok: true; readonly auth: AuthInfo; readonly principal: Principal }
  | {
      readonly ok: false;
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: string;
    };

/** The resource server of one endpoint. */
export interface Identity {
  /** I1: validates the header's token; I8: a DPoP one with its proof, for `request`. */
  authenticate(authorization: string | undefined, request?: DpopRequest): Promise<Authentication>;
  /** I4: a 403 `insufficient_scope` challenge naming `scope`, for a call that needs it. */
  insufficientScope(scope: string, message: string): Promise<Authentication & { ok: false }>;
  /** The RFC 9728 well-known path of the endpoint's metadata. */
  readonly metadataPath: string;
  /** The RFC 9728 document. */
  metadata(): Record<string, unknown>;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function stringList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value === 'string') return value.split(' ').filter((item) => item !== '');
  return [];
}

/** A compact JWS: three base64url parts (an opaque token is anything else). */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/** I1: how long finding the issuer's metadata may take in all (a silent issuer must not hang requests). */
export const DISCOVERY_TIMEOUT_MS = 5000;

/**
 * OIDC discovery, then RFC 8414 (path inserted after the well-known prefix), for the metadata
 * field `field` (`jwks_uri`, `introspection_endpoint`); all of it within `timeoutMs`.
 */
export async function discover(
  issuer: string,
  field: string,
  fetcher: typeof fetch,
  timeoutMs = DISCOVERY_TIMEOUT_MS,
): Promise<string> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  const signal = AbortSignal.timeout(timeoutMs);
  const seen: string[] = [];
  for (const candidate of candidates) {
    try {
      const response = await fetcher(candidate, { headers: { accept: 'application/json' }, signal });
      if (!response.ok) {
        await response.body?.cancel();
        seen.push(`${candidate}: HTTP ${response.status}`);
        continue;
      }
      const document = (await response.json()) as Record<string, unknown>;
      if (document['issuer'] !== issuer) {
        seen.push(`${candidate}: issuer ${JSON.stringify(document['issuer'])} is not ${issuer}`);
        continue;
      }
      const value = document[field];
      if (typeof value === 'string') return value;
      seen.push(`${candidate}: no ${field}`);
    } catch (error) {
      if (signal.aborted) {
        seen.push(`no answer within ${timeoutMs} ms`);
        break;
      }
      seen.push(`${candidate}: ${(error as Error).message}`);
    }
  }
  throw new Error(`no authorization server metadata for ${issuer} (${seen.join('; ')})`);
}

/**
 * RFC 6750 §2.1: `Bearer` and one token, nothing after it. Any character but white space is
 * taken in the token itself: a static token of the config may hold characters a b64token does
 * not (`!`, `:`), and it is compared whole anyway.
 */
const BEARER_SYNTAX = /^Bearer +\S+$/i;
/** I8: `DPoP` and one token (RFC 9449 §7.1). */
const DPOP_SYNTAX = /^DPoP +(\S+)$/i;

/**
 * RFC 9068 §4 asks for `typ: at+jwt`; most issuers (Keycloak, Auth0, Entra) send `JWT` or none.
 * Those are accepted; any other type (an ID token's `id+jwt`, a logout or DPoP proof) is not an
 * access token.
 */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt']);

/**
 * Builds the resource server.
 * @example const identity = createIdentity({ resource: new URL('https://mcp.example.com/mcp'), issuer, requiredScopes: [], groupsClaim: 'groups', clockSkewSeconds: 60, tokens: {} });
 */
export function createIdentity(options: IdentityOptions): Identity {
  const fetcher = options.fetch ?? fetch;
  const discoveryTimeoutMs = options.discoveryTimeoutMs ?? DISCOVERY_TIMEOUT_MS;
  const resource = options.resource.href;
  /** I8: the proofs of DPoP requests, their `jti`s remembered in their window. */
  const proofs = createProofChecker(() => Date.now());
  const audience = options.audience ?? resource;
  const metadataUrl = getOAuthProtectedResourceMetadataUrl(options.resource);
  const statics = Object.entries(options.tokens).map(([name, entry]) => ({
    name,
    digest: digest(entry.token),
    entry,
  }));
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const keySet = (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    const issuer = options.issuer as string;
    keys ??= (
      options.jwksUri !== undefined
        ? Promise.resolve(options.jwksUri)
        : discover(issuer, 'jwks_uri', fetcher, discoveryTimeoutMs)
    )
      .then((uri) =>
        createRemoteJWKSet(new URL(uri), {
          cooldownDuration: 30_000,
          cacheMaxAge: 600_000,
          timeoutDuration: discoveryTimeoutMs,
          [customFetch]: fetcher,
        }),
      )
      .catch((error: unknown) => {
        // Discovery is tried again on the next token (the issuer may come up later).
        keys = undefined;
        throw error;
      });
    return keys;
  };

  function staticToken(token: string): AuthInfo | undefined {
    const presented = digest(token);
    // Every entry is compared, so the time taken does not say which (or whether one) matched.
    let found: (typeof statics)[number] | undefined;
    for (const candidate of statics) if (timingSafeEqual(candidate.digest, presented)) found = candidate;
    if (found === undefined) return undefined;
    const principal = tokenPrincipal(found.name, found.entry.groups, found.entry.scopes);
    return {
      token,
      clientId: found.name,
      scopes: [...found.entry.scopes],
      expiresAt: STATIC_EXPIRY_S,
      extra: { principal },
    };
  }

  async function jwt(token: string): Promise<AuthInfo> {
    const issuer = options.issuer;
    if (issuer === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Unknown token');
    let payload: JWTPayload;
    let type: string | undefined;
    try {
      ({
        payload,
        protectedHeader: { typ: type },
      } = await jwtVerify(token, await keySet(), {
        issuer,
        audience,
        algorithms: ALGORITHMS,
        clockTolerance: options.clockSkewSeconds,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, `Invalid token: ${error.code}`);
      }
      // The issuer's metadata or keys could not be fetched: the token is not known to be bad.
      throw new OAuthError(OAuthErrorCode.ServerError, 'The authorization server could not be reached');
    }
    // I2: the subject is a principal's name: a non-empty string, nothing else.
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: sub is not a non-empty string');
    if (type !== undefined && !ACCESS_TOKEN_TYPES.has(type.toLowerCase()))
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: typ is not an access token type');
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + options.clockSkewSeconds)
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token: issued in the future');
    const scopes = stringList(payload['scope'] ?? payload['scp']);
    const clientId =
      typeof payload['client_id'] === 'string'
        ? payload['client_id']
        : typeof payload['azp'] === 'string'
          ? payload['azp']
          : undefined;
    const principal = issuerPrincipal(issuer, payload.sub, {
      groups: stringList(payload[options.groupsClaim]),
      scopes,
      ...(clientId !== undefined ? { clientId } : {}),
    });
    return {
      token,
      clientId: clientId ?? '',
      scopes,
      // `clock_skew_s` of slack past `exp` (the SDK compares expiresAt with its own clock).
      expiresAt: (payload.exp as number) + options.clockSkewSeconds,
      resource: options.resource,
      // I8: a DPoP-bound token (RFC 9449 §6.1) is only good with a proof of that key.
      extra: {
        principal,
        ...(isRecord(payload['cnf']) && typeof payload['cnf']['jkt'] === 'string'
          ? { jkt: payload['cnf']['jkt'] }
          : {}),
      },
    };
  }

  /**
   * JWTs already verified, until they expire: a host sends the same token on every request, and
   * verifying its signature each time cost 9% of the throughput (`npm run bench:overhead`).
   * Bounded; the oldest entry goes first.
   */
  const verified = new Map<string, AuthInfo>();
  async function cachedJwt(token: string): Promise<AuthInfo> {
    const hit = verified.get(token);
    if (hit !== undefined && (hit.expiresAt ?? 0) > Date.now() / 1000) return hit;
    verified.delete(token);
    const info = await jwt(token);
    if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value as string);
    verified.set(token, info);
    return info;
  }

  const introspection = options.introspection;
  let endpoint: Promise<string> | undefined;
  const introspect =
    introspection === undefined
      ? undefined
      : createIntrospection({
          endpoint: () =>
            introspection.endpoint !== undefined
              ? Promise.resolve(introspection.endpoint)
              : (endpoint ??= discover(
                  options.issuer as string,
                  'introspection_endpoint',
                  fetcher,
                  discoveryTimeoutMs,
                ).catch((error: unknown) => {
                  // Tried again with the next token (the issuer may come up later).
                  endpoint = undefined;
                  throw error;
                })),
          clientId: introspection.clientId,
          clientSecret: introspection.clientSecret,
          ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
          principalIssuer: options.issuer ?? introspection.endpoint ?? 'introspection',
          audience,
          resource: options.resource,
          groupsClaim: options.groupsClaim,
          cacheSeconds: introspection.cacheSeconds,
          clockSkewSeconds: options.clockSkewSeconds,
          fetch: fetcher,
        });

  const verifier: OAuthTokenVerifier = {
    async verifyAccessToken(token) {
      const known = staticToken(token);
      if (known !== undefined) return known;
      // I1: a JWT is verified here; anything else, when configured, by the issuer (RFC 7662).
      return introspect !== undefined && (options.issuer === undefined || !JWT_SHAPE.test(token))
        ? introspect(token)
        : cachedJwt(token);
    },
  };
  const challenge = { requiredScopes: [...options.requiredScopes], resourceMetadataUrl: metadataUrl };

  async function answer(response: Response): Promise<Authentication & { ok: false }> {
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => (headers[key] = value));
    return { ok: false, status: response.status, headers, body: await response.text() };
  }

  return {
    async authenticate(authorization, request) {
      try {
        const dpop = DPOP_SYNTAX.exec(authorization ?? '')?.[1];
        if (authorization !== undefined && dpop === undefined && !BEARER_SYNTAX.test(authorization))
          throw new OAuthError(
            OAuthErrorCode.InvalidToken,
            "Invalid Authorization header format, expected 'Bearer TOKEN' or 'DPoP TOKEN'",
          );
        const auth =
          dpop !== undefined
            ? await verifyDpopRequest(
                dpop,
                {
                  proof: request?.proof,
                  method: request?.method ?? '',
                  url: new URL(request?.path ?? '/', resource).href,
                },
                { verify: (token) => verifier.verifyAccessToken(token), proofs, nowMs: () => Date.now() },
              )
            : await verifyBearerToken(authorization, { verifier, resourceMetadataUrl: metadataUrl });
        // I8: a token bound to a key is good only with a proof of it (RFC 9449 §7.2).
        if (dpop === undefined && auth.extra?.['jkt'] !== undefined)
          throw new DpopRefused(
            'invalid_token',
            'a DPoP-bound token is sent with the DPoP scheme and its proof',
          );
        const principal = principalOf(auth) as Principal;
        // I1: `required_scopes` is asked of the issuer's tokens; a static token is the operator's own.
        if (
          principal.kind === 'issuer' &&
          !options.requiredScopes.every((scope) => auth.scopes.includes(scope))
        )
          throw new OAuthError(OAuthErrorCode.InsufficientScope, 'Insufficient scope');
        return { ok: true, auth, principal };
      } catch (error) {
        if (error instanceof DpopRefused) return error.response();
        const refused = await answer(bearerAuthChallengeResponse(error, challenge));
        // RFC 6750 §3.1: a request with no credentials at all gets the challenge without an error code.
        const header = refused.headers['www-authenticate'];
        return authorization === undefined && header !== undefined
          ? { ...refused, headers: { ...refused.headers, 'www-authenticate': withoutErrorCode(header) } }
          : refused;
      }
    },
    insufficientScope(scope, message) {
      // The SDK words the step-up challenge as it words every other one.
      return answer(
        bearerAuthChallengeResponse(new OAuthError(OAuthErrorCode.InsufficientScope, message), {
          requiredScopes: [scope],
          resourceMetadataUrl: metadataUrl,
        }),
      );
    },
    metadataPath: new URL(metadataUrl).pathname,
    metadata() {
      return {
        resource,
        ...(options.issuer !== undefined ? { authorization_servers: [options.issuer] } : {}),
        bearer_methods_supported: ['header'],
        // I8: DPoP-bound tokens are accepted beside Bearer ones.
        dpop_signing_alg_values_supported: DPOP_ALGS,
        ...(options.requiredScopes.length > 0 ? { scopes_supported: [...options.requiredScopes] } : {}),
        resource_name: 'mcp-normalizer',
      };
    },
  };
}
