/**
 * The machine grants (D1, D5, D6), each an SDK `OAuthClientProvider` the HTTP transports use:
 * on a 401 the SDK discovers the server's authorization server (RFC 9728, RFC 8414), asks it
 * for a token for this server (`resource`, RFC 8707) with the grant below, and sends it;
 * `dpop: true` (D7) makes every such token sender-constrained (`dpop-keys.ts`).
 *
 * - `client_credentials`: the SDK's providers (a shared secret, or a signed assertion).
 * - `jwt_bearer` (workload identity, RFC 7523 §2.1): the grant is a JWT the platform issued to
 *   this workload, read from its file or variable at each token request, so a rotated token is
 *   used; no secret is kept.
 * - `id_jag` (enterprise-managed authorization): the ID token of the user the gateway acts for
 *   is exchanged at the enterprise IdP for an identity assertion for this server (RFC 8693,
 *   `urn:ietf:params:oauth:token-type:id-jag`), which the server's authorization server trades
 *   for its token (the SDK's `CrossAppAccessProvider`, RFC 7523 with client_secret_basic).
 *
 * An error names the step of the chain that failed and what the operator does; no token, secret
 * or assertion is in it (a file's path is, as it is).
 */
import { readFile } from 'node:fs/promises';
import {
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  PrivateKeyJwtProvider,
  discoverAndRequestJwtAuthGrant,
  requestJwtAuthorizationGrant,
  type CrossAppAccessContext,
  type DpopSession,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { ClientCredentialsConfig, IdJagConfig, JwtBearerConfig, TokenSource } from '../config/types.js';
import { processSession } from './dpop-keys.js';

/** The grant type of RFC 7523 §2.1. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The largest token read from a file or variable: a JWT is a few KB; anything far larger is not one. */
const MAX_TOKEN_BYTES = 64 * 1024;

/** The token `source` holds now, for `what` (a grant's step); a clear error when there is none. */
export async function readToken(source: TokenSource, what: string): Promise<string> {
  let text: string | undefined;
  if ('file' in source) {
    try {
      text = await readFile(source.file, 'utf8');
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new Error(`${what}: cannot read ${source.file} (${String(code ?? error)})`, { cause: error });
    }
  } else {
    text = process.env[source.env];
    if (text === undefined) throw new Error(`${what}: the environment variable ${source.env} is not set`);
  }
  const token = text.trim();
  const where = 'file' in source ? source.file : `$${source.env}`;
  if (token === '') throw new Error(`${what}: ${where} is empty`);
  if (token.length > MAX_TOKEN_BYTES || /\s/.test(token))
    throw new Error(`${what}: ${where} does not hold one token (whitespace inside, or over 64 KiB)`);
  return token;
}

/**
 * A grant without a browser step (D5, D8): its tokens in memory, for this connection; no
 * redirect, no authorization code. `grant` names it in the errors of the steps it has none of.
 */
export abstract class MachineGrant implements OAuthClientProvider {
  #tokens: StoredOAuthTokens | undefined;
  /** D7: set when the server wants DPoP-bound tokens. */
  dpop?: () => Promise<DpopSession>;

  constructor(private readonly grant: string) {}

  abstract get clientMetadata(): OAuthClientMetadata;

  /** The metadata of a client of `grantType` that authenticates with `authMethod`. */
  protected metadataOf(
    grantType: string,
    authMethod: string,
    scopes: readonly string[] | undefined,
  ): OAuthClientMetadata {
    return {
      client_name: 'mcp-normalizer',
      redirect_uris: [],
      grant_types: [grantType],
      token_endpoint_auth_method: authMethod,
      ...(scopes !== undefined ? { scope: scopes.join(' ') } : {}),
    };
  }

  abstract clientInformation(): StoredOAuthClientInformation | undefined;
  abstract prepareTokenRequest(scope?: string): URLSearchParams | Promise<URLSearchParams>;

  get redirectUrl(): undefined {
    return undefined;
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.#tokens = tokens;
  }

  /** A token refused (401 after it was sent): the next request asks for a new one. */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
  }

  redirectToAuthorization(): void {
    throw new Error(`${this.grant}: this grant has no browser step`);
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error(`${this.grant}: this grant has no authorization code`);
  }
}

/** `scope`, else the configured scopes, on `params` (none when both are empty). */
export function withScope(params: URLSearchParams, scope: string | undefined, scopes?: readonly string[]) {
  const wanted = scope ?? scopes?.join(' ');
  if (wanted !== undefined && wanted !== '') params.set('scope', wanted);
  return params;
}

/** D5: workload identity: the platform's JWT is the grant (RFC 7523 §2.1); a public client. */
export class JwtBearerProvider extends MachineGrant {
  readonly #config: JwtBearerConfig;

  constructor(config: JwtBearerConfig) {
    super('jwt_bearer');
    this.#config = config;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadataOf(JWT_BEARER, 'none', this.#config.scopes);
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    const { clientId, issuer } = this.#config;
    if (clientId === undefined) return undefined;
    return { client_id: clientId, ...(issuer !== undefined ? { issuer } : {}) };
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const assertion = await readToken(this.#config.assertion, 'jwt_bearer: the workload JWT');
    return withScope(new URLSearchParams({ grant_type: JWT_BEARER, assertion }), scope, this.#config.scopes);
  }
}

/** D6: the identity assertion for this server, from the enterprise IdP (RFC 8693 token exchange). */
function idJagAssertion(config: IdJagConfig) {
  return async (context: CrossAppAccessContext): Promise<string> => {
    const idToken = await readToken(config.idToken, 'id_jag: the ID token');
    const { idp } = config;
    const common = {
      audience: context.authorizationServerUrl,
      resource: context.resourceUrl,
      idToken,
      clientId: idp.clientId,
      ...(idp.clientSecret !== undefined ? { clientSecret: idp.clientSecret } : {}),
      ...(context.scope !== undefined ? { scope: context.scope } : {}),
      fetchFn: context.fetchFn,
    };
    const at = idp.tokenEndpoint ?? idp.issuer ?? '';
    try {
      const grant =
        idp.tokenEndpoint !== undefined
          ? await requestJwtAuthorizationGrant({ ...common, tokenEndpoint: idp.tokenEndpoint })
          : await discoverAndRequestJwtAuthGrant({ ...common, idpUrl: idp.issuer ?? '' });
      return grant.jwtAuthGrant;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(
        `id_jag: the IdP (${at}) did not give an identity assertion for ${context.resourceUrl}: ${why}. ` +
          'Check idp.client_id and its secret, that the ID token is current, and that the IdP allows this audience.',
        { cause: error },
      );
    }
  };
}

function clientCredentials(auth: ClientCredentialsConfig): OAuthClientProvider {
  const common = {
    clientId: auth.clientId,
    clientName: 'mcp-normalizer',
    ...(auth.scopes !== undefined ? { scope: auth.scopes.join(' ') } : {}),
    ...(auth.issuer !== undefined ? { expectedIssuer: auth.issuer } : {}),
  };
  // D1: a shared secret, or a key that signs a JWT assertion (private_key_jwt, RFC 7523).
  return auth.privateKey !== undefined
    ? new PrivateKeyJwtProvider({
        ...common,
        privateKey: auth.privateKey.pem,
        algorithm: auth.privateKey.algorithm,
      })
    : new ClientCredentialsProvider({ ...common, clientSecret: auth.clientSecret ?? '' });
}

/**
 * The provider of a machine grant, with a DPoP key for this process when `dpop` is set.
 * @example const provider = machineProvider({ type: 'jwt_bearer', assertion: { file: '/var/run/token' } });
 */
export function machineProvider(
  auth: ClientCredentialsConfig | JwtBearerConfig | IdJagConfig,
): OAuthClientProvider {
  let provider: OAuthClientProvider;
  switch (auth.type) {
    case 'client_credentials':
      provider = clientCredentials(auth);
      break;
    case 'jwt_bearer':
      provider = new JwtBearerProvider(auth);
      break;
    case 'id_jag':
      provider = new CrossAppAccessProvider({
        assertion: idJagAssertion(auth),
        clientId: auth.clientId,
        clientSecret: auth.clientSecret,
        clientName: 'mcp-normalizer',
        ...(auth.issuer !== undefined ? { expectedIssuer: auth.issuer } : {}),
      });
      break;
  }
  // D7: the tokens live in memory, so the key lives as long as the process (dpop-keys.ts).
  if (auth.dpop === true) provider.dpop = processSession();
  return provider;
}
