/**
 * A real OAuth 2.1 authorization server for tests: `oidc-provider` on 127.0.0.1, issuing JWT
 * access tokens (ES256, signed with its own JWKS) for one resource through the
 * `client_credentials` grant, with RFC 8707 resource indicators. Each client is a principal.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** One registered client: its id and secret, and the scopes it may ask for. */
export interface AuthClient {
  readonly id: string;
  readonly secret: string;
  readonly scope: string;
}

/** A running authorization server. */
export interface AuthServer {
  readonly issuer: string;
  /** A JWT access token for `client`, for `resource` (default: the configured one). */
  token(client: AuthClient, options?: { scope?: string; resource?: string }): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the server. `resources` are the resource indicators it issues tokens for (the first is
 * the default); every token carries `groups` from `groups[client.id]`.
 */
export async function startAuthServer(options: {
  readonly resources: readonly string[];
  /** Other resources it issues tokens for (e.g. any gateway on 127.0.0.1, whose port is not known yet). */
  readonly accept?: (resource: string) => boolean;
  readonly clients: readonly AuthClient[];
  readonly groups?: Readonly<Record<string, readonly string[]>>;
  readonly ttlSeconds?: number;
}): Promise<AuthServer> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const scopes = new Set(options.clients.flatMap((client) => client.scope.split(' ')));
  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: client.scope,
      id_token_signed_response_alg: 'ES256',
    })),
    jwks: { keys: [jwk] },
    scopes: [...scopes],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resources[0] as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (!options.resources.includes(resource) && options.accept?.(resource) !== true)
            throw new Error(`unknown resource ${resource}`);
          return {
            scope: [...scopes].join(' '),
            audience: resource,
            accessTokenTTL: options.ttlSeconds ?? 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => ({
      groups: [...(options.groups?.[token.clientId ?? ''] ?? [])],
    }),
  });
  // Plain HTTP on loopback: the provider sees the request as it came.
  provider.proxy = false;
  http.on('request', provider.callback());
  return {
    issuer,
    async token(client, asked = {}) {
      const body = new URLSearchParams({
        grant_type: 'client_credentials',
        scope: asked.scope ?? client.scope,
        resource: asked.resource ?? (options.resources[0] as string),
      });
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        },
        body,
      });
      const json = (await response.json()) as {
        access_token?: string;
        error?: string;
        error_description?: string;
      };
      if (json.access_token === undefined)
        throw new Error(`token request failed: ${json.error ?? ''} ${json.error_description ?? ''}`);
      return json.access_token;
    },
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
