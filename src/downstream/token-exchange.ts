/**
 * D8: `auth: token_exchange`: each caller reaches the server as itself, without a browser. A
 * caller's copy of the server (login-copies.ts) asks the server's authorization server, on the
 * server's 401 (discovery as in D1), to exchange the token that caller presented to the gateway
 * for a token of this server (RFC 8693: `subject_token` the caller's access token, `resource`
 * the server, `audience` when configured), the gateway's client authenticated with
 * `client_secret_basic`. The caller's token is only ever the `subject_token` of that request:
 * it never reaches the server itself (I2).
 *
 * The connection no caller owns (the listing, stdio, the CLI, a caller without a token) uses the
 * configured `fallback` grant, if any; without one, its token request fails saying so.
 */
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  StoredOAuthClientInformation,
} from '@modelcontextprotocol/client';
import type { TokenExchangeConfig } from '../config/types.js';
import { processSession } from './dpop-keys.js';
import { MachineGrant, machineProvider, withScope } from './grants.js';

/** The grant type and token types of RFC 8693. */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** The caller's token exchanged for this server's; one provider per caller's copy. */
export class TokenExchangeProvider extends MachineGrant {
  readonly #config: TokenExchangeConfig;

  constructor(config: TokenExchangeConfig) {
    super('token_exchange');
    this.#config = config;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadataOf(TOKEN_EXCHANGE, 'client_secret_basic', this.#config.scopes);
  }

  clientInformation(): StoredOAuthClientInformation {
    const { clientId, clientSecret, issuer } = this.#config;
    return { client_id: clientId, client_secret: clientSecret, ...(issuer !== undefined ? { issuer } : {}) };
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    const { principal, subjectToken, audience } = this.#config;
    const subject = subjectToken?.();
    if (subject === undefined)
      throw new Error(
        principal === undefined
          ? 'token_exchange: this connection serves no caller (the listing, stdio, the CLI, a caller without a token), so there is no token to exchange; give auth.fallback a grant for it'
          : `token_exchange: the caller ${principal} has no current token to exchange (it expired); the caller's next request brings one`,
      );
    const params = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    if (audience !== undefined) params.set('audience', audience);
    return withScope(params, scope, this.#config.scopes);
  }
}

/**
 * The provider of a `token_exchange` server's connection: a caller's copy exchanges its token;
 * the connection no caller owns uses the fallback grant, or fails its token request saying why.
 */
export function tokenExchangeProvider(config: TokenExchangeConfig): OAuthClientProvider {
  if (config.principal === undefined && config.fallback !== undefined)
    return machineProvider(config.fallback);
  const provider = new TokenExchangeProvider(config);
  if (config.dpop === true) provider.dpop = processSession();
  return provider;
}
