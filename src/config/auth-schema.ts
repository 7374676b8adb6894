/**
 * `auth:` of a remote server (D1, D2, D5–D7): how the gateway gets the token it sends to that
 * server. A person's login in band (`oauth`), the gateway's own client (`client_credentials`), a
 * workload identity the platform issues (`jwt_bearer`), or an identity assertion of the
 * enterprise IdP traded for the server's token (`id_jag`); each but `oauth`'s shorthand may ask
 * for sender-constrained tokens (`dpop: true`). Part of the one config schema (`schema.ts`).
 */
import { z } from 'zod';

/** D7: DPoP (RFC 9449) for the tokens of this server. */
const dpopKey = z
  .boolean()
  .optional()
  .describe(
    'D7: ask for DPoP-bound tokens (RFC 9449): each request carries a fresh proof signed by a key only this gateway holds, so a stolen token is useless. Default: false (Bearer).',
  );

const scopesKey = z
  .array(z.string().min(1))
  .optional()
  .describe('Scopes to ask for. Default: what the server asks for.');

const issuerKey = z
  .url()
  .optional()
  .describe('The authorization server these credentials belong to: they are sent to no other (SEP-2352).');

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A file holding a token the gateway reads at each token request (a rotated token is used). */
function fileKey(what: string) {
  return z
    .string()
    .min(1)
    .optional()
    .describe(
      `A file holding ${what}, read again at each token request (a rotated token is used); relative to the config file.`,
    );
}

/** An environment variable holding a token the gateway reads at each token request. */
function envKey(what: string) {
  return z
    .string()
    .regex(ENV_NAME, 'expected an environment variable name')
    .optional()
    .describe(`An environment variable holding ${what}.`);
}

/** One of `file` and `env`, with a message that names both. */
function oneSource(file: string, env: string) {
  return (ctx: { value: Record<string, unknown>; issues: unknown[] }): void => {
    if ((ctx.value[file] === undefined) === (ctx.value[env] === undefined))
      (ctx.issues as object[]).push({
        code: 'custom',
        input: ctx.value,
        path: [file],
        continue: true,
        message: `give ${file} or ${env}, one of the two`,
      });
  };
}

/** D2: a person's login to a remote server (authorization code with PKCE). */
const OAuthLoginSchema = z.strictObject({
  type: z
    .literal('oauth')
    .describe(
      'The OAuth authorization code flow with PKCE: a person logs in (`mcp-normalizer login <server>`).',
    ),
  client_id: z
    .string()
    .min(1)
    .optional()
    .describe(
      'A client registered beforehand at the authorization server. Default: a Client ID Metadata Document (client_metadata_url) or dynamic registration.',
    ),
  client_secret: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The pre-registered client’s secret, if it is confidential; use ${VAR}. Scrubbed from every output.',
    ),
  client_metadata_url: z
    .url({ protocol: /^https$/ })
    .optional()
    .describe(
      'An https URL of this client’s metadata document (CIMD), used as its client_id where the server supports it.',
    ),
  scopes: z
    .array(z.string().min(1))
    .optional()
    .describe('Scopes to ask for. Default: what the server’s 401 or metadata asks for.'),
  issuer: z
    .url()
    .optional()
    .describe('The authorization server this login belongs to: the client goes to no other (SEP-2352).'),
  callback_port: z
    .number()
    .int()
    .min(1)
    .max(65535)
    .optional()
    .describe(
      'The loopback port of `login`’s redirect (http://127.0.0.1:PORT/callback), for a pre-registered client whose redirect URI is fixed. Default: any free port.',
    ),
  dpop: dpopKey,
});

/** D1: the machine-to-machine grant: a shared secret, or a key that signs assertions. */
const ClientCredentialsSchema = z
  .strictObject({
    type: z
      .literal('client_credentials')
      .describe('The OAuth grant: client_credentials (machine to machine).'),
    client_id: z
      .string()
      .min(1)
      .describe('The OAuth client registered at the server’s authorization server.'),
    client_secret: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Its secret (client_secret_basic); use ${VAR} to keep it out of the file. Scrubbed from every output. Give this or private_key.',
      ),
    private_key: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A PKCS#8 PEM private key that signs a JWT assertion instead of a secret (private_key_jwt, RFC 7523); use ${VAR}. Scrubbed from every output.',
      ),
    signing_algorithm: z
      .enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'])
      .optional()
      .describe('The JWS algorithm of private_key’s assertions. Default: ES256.'),
    scopes: scopesKey,
    issuer: issuerKey,
    dpop: dpopKey,
  })
  .check((ctx) => {
    const { client_secret: secret, private_key: key } = ctx.value;
    if ((secret === undefined) === (key === undefined))
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        // On a key and not aborting: the union around reports this, not its own line.
        path: ['client_secret'],
        continue: true,
        message:
          'give client_secret (a shared secret) or private_key (a signed JWT assertion), one of the two',
      });
  });

/** D5: workload identity (RFC 7523 §2.1): a JWT the platform issues is the grant. */
const JwtBearerSchema = z
  .strictObject({
    type: z
      .literal('jwt_bearer')
      .describe(
        'D5: workload identity: a JWT the platform issues to this gateway (a Kubernetes service-account token, a cloud workload token) is the grant (RFC 7523); no secret to keep.',
      ),
    assertion_file: fileKey('the workload JWT'),
    assertion_env: envKey('the workload JWT'),
    client_id: z
      .string()
      .min(1)
      .optional()
      .describe('The client_id the authorization server knows this workload by, if it wants one.'),
    scopes: scopesKey,
    issuer: issuerKey,
    dpop: dpopKey,
  })
  .check(oneSource('assertion_file', 'assertion_env'));

/** D6: enterprise-managed authorization (ID-JAG): the IdP's assertion traded for this server's token. */
const IdJagSchema = z
  .strictObject({
    type: z
      .literal('id_jag')
      .describe(
        'D6: enterprise-managed authorization: the enterprise IdP exchanges an ID token for an identity assertion for this server (RFC 8693, ID-JAG), which the server’s authorization server trades for its token (RFC 7523); no browser.',
      ),
    idp: z
      .strictObject({
        token_endpoint: z.url().optional().describe('The IdP’s token endpoint.'),
        issuer: z
          .url()
          .optional()
          .describe('The IdP’s issuer, to discover its token endpoint (RFC 8414 / OpenID).'),
        client_id: z.string().min(1).describe('This gateway’s client at the IdP.'),
        client_secret: z
          .string()
          .min(1)
          .optional()
          .describe('Its secret, if it is confidential; use ${VAR}. Scrubbed from every output.'),
      })
      .check((ctx) => {
        if ((ctx.value.token_endpoint === undefined) === (ctx.value.issuer === undefined))
          ctx.issues.push({
            code: 'custom',
            input: ctx.value,
            path: ['token_endpoint'],
            continue: true,
            message: 'give token_endpoint or issuer, one of the two',
          });
      })
      .describe('D6: the enterprise IdP that issues the identity assertion.'),
    id_token_file: fileKey('the ID token the IdP issued for the user the gateway acts for'),
    id_token_env: envKey('the ID token the IdP issued for the user the gateway acts for'),
    client_id: z.string().min(1).describe('This gateway’s client at the server’s authorization server.'),
    client_secret: z
      .string()
      .min(1)
      .describe('Its secret (client_secret_basic); use ${VAR}. Scrubbed from every output.'),
    scopes: scopesKey,
    issuer: issuerKey,
    dpop: dpopKey,
  })
  .check(oneSource('id_token_file', 'id_token_env'));

/** D8: the caller's own token exchanged for one of this server (RFC 8693), per caller. */
const tokenExchangeShape = {
  type: z
    .literal('token_exchange')
    .describe(
      'D8: each caller’s own token (the one it presented to the gateway) is exchanged at this server’s authorization server for a token of this server (RFC 8693); each caller reaches the server as itself, no browser.',
    ),
  client_id: z.string().min(1).describe('This gateway’s client at the server’s authorization server.'),
  client_secret: z
    .string()
    .min(1)
    .describe('Its secret (client_secret_basic); use ${VAR}. Scrubbed from every output.'),
  audience: z
    .string()
    .min(1)
    .optional()
    .describe('The `audience` to ask for, when the authorization server wants one besides `resource`.'),
  scopes: scopesKey,
  issuer: issuerKey,
  dpop: dpopKey,
};

/** D1: how the gateway logs in to a remote server (OAuth 2.1 client). */
const DownstreamAuthSchema = z
  .discriminatedUnion('type', [
    ClientCredentialsSchema,
    OAuthLoginSchema,
    JwtBearerSchema,
    IdJagSchema,
    z.strictObject({
      ...tokenExchangeShape,
      fallback: z
        .discriminatedUnion('type', [ClientCredentialsSchema, JwtBearerSchema, IdJagSchema])
        .optional()
        .describe(
          'D8: the grant of the connection no caller owns (the listing, stdio, the CLI, a caller without a token): client_credentials, jwt_bearer or id_jag. Default: none (those fail, saying so).',
        ),
    }),
  ])
  .describe(
    'D1: remote server: log in with OAuth: client_credentials (machine to machine), oauth (a person logs in with `mcp-normalizer login`), jwt_bearer (workload identity) or id_jag (enterprise-managed); discovery from the 401, a token for this server (RFC 8707), refreshed when it expires.',
  );

const AUTH_EXPECTED =
  'expected `oauth`, or an object with `type:` oauth, client_credentials, jwt_bearer or id_jag';

/**
 * What a wrong `auth:` is told. An object whose `type` names a grant fails on its own keys (zod
 * gives up on the union there): those are named, with their key path, not the list of forms.
 */
function authProblem(issue: { code?: string; input?: unknown; errors?: unknown }): string {
  const own = Array.isArray(issue.errors) ? (issue.errors[1] as unknown) : undefined;
  const named =
    issue.code === 'invalid_union' && typeof issue.input === 'object' && Array.isArray(own)
      ? (own as { code: string; path: PropertyKey[]; message: string }[]).filter(
          (inner) => inner.code !== 'invalid_union' && inner.path[0] !== 'type',
        )
      : [];
  if (named.length === 0) return AUTH_EXPECTED;
  return named.map((inner) => `${inner.path.map(String).join('.')}: ${inner.message}`).join('; ');
}

/** D2: `auth: oauth`, the shorthand of `auth: { type: oauth }`. */
export const DownstreamAuthInputSchema = z
  .union(
    [
      // A string, not a literal: an object then fails here on its type alone, and zod reports the
      // object's own problem (a key of client_credentials) instead of both options at once.
      z.string().transform((value, ctx): z.infer<typeof OAuthLoginSchema> => {
        if (value !== 'oauth') ctx.issues.push({ code: 'custom', input: value, message: AUTH_EXPECTED });
        return { type: 'oauth' };
      }),
      DownstreamAuthSchema,
    ],
    { error: authProblem },
  )
  .describe(
    'D1, D2: remote server: log in with OAuth. `oauth` (a person logs in with `mcp-normalizer login`), or an object with type oauth, client_credentials, jwt_bearer or id_jag.',
  );
