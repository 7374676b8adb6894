/**
 * I1, I2: the resource server's token validation in process, against a local JWKS (the fetch is
 * given: no network): what a JWT must be to be accepted, and each way one is refused.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIdentity, type Identity } from '../../src/upstream/identity.js';

const ISSUER = 'https://idp.test';
const RESOURCE = new URL('https://mcp.test/mcp');
let identity: Identity;
let sign: (claims: JWTPayload, header?: Record<string, unknown>) => Promise<string>;
let other: (claims: JWTPayload) => Promise<string>;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const stranger = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const fetchJwks = (async (url: string | URL | Request) => {
    if (String(url) !== `${ISSUER}/jwks`) return new Response('not found', { status: 404 });
    return new Response(JSON.stringify({ keys: [jwk] }), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  identity = createIdentity({
    resource: RESOURCE,
    issuer: ISSUER,
    jwksUri: `${ISSUER}/jwks`,
    requiredScopes: [],
    groupsClaim: 'groups',
    clockSkewSeconds: 0,
    tokens: { robot: { token: 'robot-token-0123456789abcdef', groups: ['bots'], scopes: [] } },
    fetch: fetchJwks,
  });
  const now = Math.floor(Date.now() / 1000);
  const base = { iss: ISSUER, aud: RESOURCE.href, sub: 'alice', iat: now, exp: now + 300 };
  sign = (claims, header = {}) =>
    new SignJWT({ ...base, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt', ...header })
      .sign(privateKey);
  other = (claims) =>
    new SignJWT({ ...base, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(stranger.privateKey);
});

const bearer = (token: string): string => `Bearer ${token}`;
const b64 = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('token validation against a local JWKS', () => {
  it('I1, I2: a JWT of the issuer for this resource is accepted as <issuer>#<sub>, with its groups', async () => {
    const verdict = await identity.authenticate(bearer(await sign({ groups: ['dev'] })));
    expect(verdict.ok && verdict.principal).toMatchObject({
      kind: 'issuer',
      key: `${ISSUER}#alice`,
      groups: ['dev'],
    });
  });

  it('I1, I2: a static token is the principal token:<name>', async () => {
    const verdict = await identity.authenticate(bearer('robot-token-0123456789abcdef'));
    expect(verdict.ok && verdict.principal).toMatchObject({
      kind: 'token',
      key: 'token:robot',
      groups: ['bots'],
    });
  });

  it.each<[string, () => Promise<string>]>([
    ['another audience', () => sign({ aud: 'https://elsewhere.test/mcp' })],
    ['another issuer', () => sign({ iss: 'https://evil.test' })],
    ['expired', () => sign({ exp: Math.floor(Date.now() / 1000) - 10 })],
    ['no subject', () => sign({ sub: undefined })],
    ['an ID token (typ id+jwt)', () => sign({}, { typ: 'id+jwt' })],
    ['signed by a key the issuer does not publish', () => other({})],
    [
      'tampered (claims changed after signing)',
      async () => {
        const [head, , signature] = (await sign({})).split('.');
        return `${head}.${b64({ iss: ISSUER, aud: RESOURCE.href, sub: 'mallory', exp: 9e9 })}.${signature}`;
      },
    ],
    [
      'unsigned (alg none)',
      async () =>
        `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: ISSUER, aud: RESOURCE.href, sub: 'x' })}.`,
    ],
    [
      'HS256 with the public key as secret',
      async () => {
        const [, payload] = (await sign({})).split('.');
        return `${b64({ alg: 'HS256', kid: 'k1' })}.${payload}.c2lnbmF0dXJl`;
      },
    ],
    ['an unknown opaque token (no introspection)', async () => 'opaque-token-that-nobody-issued'],
  ])('I1: %s is refused with 401', async (_name, token) => {
    const verdict = await identity.authenticate(bearer(await token()));
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.status).toBe(401);
  });

  it.each([undefined, 'Basic abc', 'Bearer', 'Bearer two tokens'])(
    'I1: the header %j is refused with 401',
    async (header) => {
      const verdict = await identity.authenticate(header);
      expect(!verdict.ok && verdict.status).toBe(401);
      const challenge = verdict.ok ? '' : (verdict.headers['www-authenticate'] ?? '');
      expect(challenge).toMatch(/^Bearer .*resource_metadata="/);
      // RFC 6750 §3.1: no credentials at all, no error code; malformed ones, invalid_token.
      if (header === undefined) expect(challenge).not.toContain('error=');
      else expect(challenge).toContain('error="invalid_token"');
    },
  );
});
