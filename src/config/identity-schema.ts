/**
 * The config's identity keys (I1–I3, D4): `http.auth`, the endpoint as an OAuth 2.1 resource
 * server, and one `access:` rule. Part of schema.ts's `ConfigSchema`.
 */
import { z } from 'zod';
import { isPrincipalPattern } from '../core/policy.js';

const principalPattern = z.string().refine(isPrincipalPattern, {
  message:
    'expected sub:<subject>, client:<id>, token:<name>, local, anonymous, group:<name>, scope:<scope> or *',
});

/** I1: `http.auth`, the endpoint as an OAuth 2.1 resource server. */
export const AuthSchema = z
  .strictObject({
    issuer: z
      .url()
      .optional()
      .describe(
        'The authorization server whose JWT access tokens are accepted; its keys are found by OIDC / RFC 8414 discovery from here.',
      ),
    audience: z
      .string()
      .min(1)
      .optional()
      .describe('Accepted `aud` of a token. Default: the resource, <public_url>/mcp.'),
    jwks_uri: z.url().optional().describe("The issuer's JWKS, when discovery should be skipped."),
    introspection: z
      .strictObject({
        client_id: z.string().min(1).describe("The gateway's client id at the authorization server."),
        client_secret: z
          .string()
          .min(1)
          .describe('Its secret (HTTP Basic, client_secret_basic); use ${VAR}. Scrubbed from every output.'),
        endpoint: z
          .url()
          .optional()
          .describe("The RFC 7662 endpoint. Default: the issuer metadata's introspection_endpoint."),
        cache_s: z
          .number()
          .int()
          .min(0)
          .max(3600)
          .default(60)
          .describe('How long an answer is kept (never past the token’s exp); 0: ask every time.'),
      })
      .optional()
      .describe(
        'I1: opaque (non-JWT) access tokens are validated by RFC 7662 introspection at the issuer. JWTs are still verified locally.',
      ),
    required_scopes: z
      .array(z.string().min(1))
      .default([])
      .describe('Scopes every token must carry; a token without them gets 403 insufficient_scope.'),
    groups_claim: z
      .string()
      .min(1)
      .default('groups')
      .describe("The token claim holding the principal's groups."),
    clock_skew_s: z
      .number()
      .int()
      .min(0)
      .max(300)
      .default(60)
      .describe('Tolerated clock difference with the issuer, in seconds, for exp and nbf.'),
    tokens: z
      .record(
        z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, { message: 'expected 1 to 64 of A-Z a-z 0-9 _ . @ -' }),
        z.strictObject({
          token: z
            .string()
            .min(16, { message: 'expected a token of at least 16 characters' })
            .describe('The bearer token; use ${VAR} to keep it out of the file. Scrubbed from every output.'),
          groups: z
            .array(z.string().min(1))
            .default([])
            .describe("The principal's groups (group:<name> in access rules)."),
          scopes: z
            .array(z.string().min(1))
            .default([])
            .describe("The principal's scopes (scope:<scope>, and tools that need one)."),
        }),
      )
      .default({})
      .describe('Static tokens, each a principal named by its key (token:<key> in access rules).'),
    login_client: z
      .strictObject({
        client_id: z.string().min(1).describe("The gateway's client id at the issuer."),
        client_secret: z
          .string()
          .min(1)
          .optional()
          .describe('Its secret, for a confidential client; use ${VAR}. Scrubbed from every output.'),
      })
      .optional()
      .describe(
        "D4: the gateway's client at the issuer, with which a person who opens a caller's downstream login link signs in first, so that only the caller who asked completes it. Its redirect URI is <public_url>/oauth/signin. Default: registered dynamically (RFC 7591) where the issuer allows it.",
      ),
    admins: z
      .array(principalPattern)
      .default([])
      .describe(
        'O4: principals who may read the status page (sub:, client:, token:, local, group:, scope: patterns). Default: none.',
      ),
  })
  .superRefine((auth, ctx) => {
    if (
      auth.introspection !== undefined &&
      auth.introspection.endpoint === undefined &&
      auth.issuer === undefined
    )
      ctx.addIssue({
        code: 'custom',
        path: ['introspection'],
        message: 'introspection needs an endpoint, or an issuer whose metadata names one',
      });
  })
  .describe('I1: who is calling. Tokens are validated here and never passed to a downstream.');

/** I3: one `access:` rule. */
export const AccessRuleSchema = z.strictObject({
  principals: z
    .array(principalPattern)
    .min(1)
    .describe('Who the rule is for; the first matching rule decides.'),
  allow: z
    .array(z.string().min(1))
    .min(1)
    .describe('Globs over exposed tool names the principals may see and call; `!glob` excludes.'),
  scopes: z
    .record(z.string().min(1), z.string().min(1))
    .default({})
    .describe('Glob over exposed names → the scope such a tool needs (403 insufficient_scope without it).'),
  resources: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Globs over exposed resource and template URIs the principals may list and read (`*`: any run of characters, `/` too); `!glob` excludes. Absent: none.',
    ),
  profiles: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe(
      'I6: the profiles (profiles: keys) the principals may use; absent: every profile and the whole catalog at /mcp.',
    ),
});

/** I7: one `rate_limits:` rule. */
export const RateLimitSchema = z.strictObject({
  principals: z
    .array(principalPattern)
    .min(1)
    .describe(
      'Who the limit is for (each principal has its own count): sub:, group:, scope:, client:, token:, local, anonymous, *.',
    ),
  tools: z
    .array(z.string().min(1))
    .min(1)
    .default(['*'])
    .describe('Globs over exposed tool names the limit counts; `!glob` excludes. Default: every tool.'),
  calls: z.number().int().min(1).describe('At most this many calls in each window.'),
  per_s: z.number().positive().max(86_400).describe('The window, in seconds.'),
});
