/**
 * D4: the gateway's own sign-in at its issuer (`http.auth.issuer`), to learn who is at a browser
 * before a caller's downstream login goes on there: the authorization code flow with PKCE (the
 * SDK's OAuth client helpers) for a token of the gateway's own resource, which the gateway then
 * validates exactly as it validates a host's token (upstream/identity.ts). That token proves who
 * signed in, and goes nowhere else: it is neither stored nor sent on.
 *
 * The client is `http.auth.login_client` when configured, else one registered dynamically
 * (RFC 7591) at the issuer's registration endpoint the first time it is needed.
 */
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  registerClient,
  startAuthorization,
  type AuthorizationServerMetadata,
  type OAuthClientInformationMixed,
} from '@modelcontextprotocol/client';
import type { Principal } from '../../core/policy.js';
import type { Authentication } from '../../upstream/identity.js';

/** How long one request to the issuer may take. */
const ISSUER_TIMEOUT_MS = 10_000;

/** Options of {@link createSignIn}. */
export interface SignInOptions {
  readonly issuer: string;
  /** The redirect URI: `<public_url>/oauth/signin`. */
  readonly redirectUrl: string;
  /** The token's resource (RFC 8707): the audience the gateway accepts. */
  readonly resource: string;
  /** `http.auth.required_scopes`: the token must carry them to pass. */
  readonly scopes: readonly string[];
  readonly client?: { readonly clientId: string; readonly clientSecret?: string };
  /** I1: the gateway's own validation of a bearer token. */
  readonly authenticate: (authorization: string) => Promise<Authentication>;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** The gateway's sign-in at its issuer. */
export interface SignIn {
  /** Where to send the browser, and the PKCE verifier to keep for {@link SignIn.finish}. */
  start(state: string): Promise<{ readonly url: URL; readonly verifier: string }>;
  /** The principal the browser signed in as; rejects with a one-line reason. */
  finish(code: string, verifier: string, iss: string | undefined): Promise<Principal>;
}

/** @example const signIn = createSignIn({ issuer, redirectUrl, resource, scopes: [], authenticate }); */
export function createSignIn(options: SignInOptions): SignIn {
  const base = options.fetch ?? fetch;
  const fetchFn: typeof fetch = (input, init) =>
    base(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(ISSUER_TIMEOUT_MS) });
  let ready:
    Promise<{ metadata: AuthorizationServerMetadata; client: OAuthClientInformationMixed }> | undefined;

  async function prepare(): Promise<{
    metadata: AuthorizationServerMetadata;
    client: OAuthClientInformationMixed;
  }> {
    const metadata = await discoverAuthorizationServerMetadata(options.issuer, { fetchFn });
    if (metadata === undefined) throw new Error(`no authorization server metadata at ${options.issuer}`);
    if (options.client !== undefined)
      return {
        metadata,
        client: {
          client_id: options.client.clientId,
          ...(options.client.clientSecret !== undefined
            ? { client_secret: options.client.clientSecret }
            : {}),
        },
      };
    if (metadata.registration_endpoint === undefined)
      throw new Error(
        `the issuer registers no clients: give http.auth a login_client registered with the redirect URI ${options.redirectUrl}`,
      );
    const client = await registerClient(options.issuer, {
      metadata,
      clientMetadata: {
        client_name: 'mcp-normalizer sign-in',
        redirect_uris: [options.redirectUrl],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope,
      },
      fetchFn,
    });
    return { metadata, client };
  }

  // What to ask for: the scopes a host's token must carry, else OIDC's `openid` (an issuer grants
  // nothing to a request for no scope at all: oidc-provider answers access_denied).
  const scope = options.scopes.length > 0 ? options.scopes.join(' ') : 'openid';

  const prepared = (): ReturnType<typeof prepare> =>
    (ready ??= prepare().catch((error: unknown) => {
      // Tried again at the next login (the issuer may come up later).
      ready = undefined;
      throw error;
    }));

  return {
    async start(state) {
      const { metadata, client } = await prepared();
      const { authorizationUrl, codeVerifier } = await startAuthorization(options.issuer, {
        metadata,
        clientInformation: client,
        redirectUrl: options.redirectUrl,
        state,
        resource: options.resource,
        scope,
      });
      return { url: authorizationUrl, verifier: codeVerifier };
    },
    async finish(code, verifier, iss) {
      const { metadata, client } = await prepared();
      const tokens = await exchangeAuthorization(options.issuer, {
        metadata,
        clientInformation: client,
        authorizationCode: code,
        ...(iss !== undefined ? { iss } : {}),
        codeVerifier: verifier,
        redirectUri: options.redirectUrl,
        resource: options.resource,
        fetchFn,
      });
      const verdict = await options.authenticate(`Bearer ${tokens.access_token}`);
      if (!verdict.ok) throw new Error(`the issuer's token was refused (HTTP ${verdict.status})`);
      return verdict.principal;
    },
  };
}
