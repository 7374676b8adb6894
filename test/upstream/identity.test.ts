/**
 * I1, I2: the resource server's token validation against a local issuer (a key pair made here,
 * its metadata and JWKS served by a fetch stub): what is refused, and which principal a token
 * that passes becomes. A table of crafted tokens, as a hostile host would send them.
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIdentity, type Identity } from '../../src/upstream/identity.js';

const ISSUER = 'https://idp.example.com';
const RESOURCE = new URL('https://mcp.example.com/mcp');
const NOW_S = Math.floor(Date.now() / 1000);

let privateKey: CryptoKey;
let jwk: JWK;

/** The issuer's two documents, as a fetch. */
function issuerFetch(): typeof fetch {
  return (input) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url === `${ISSUER}/.well-known/openid-configuration`)
      return Promise.resolve(Response.json({ issuer: ISSUER, jwks_uri: `${ISSUER}/jwks` }));
    if (url === `${ISSUER}/jwks`) return Promise.resolve(Response.json({ keys: [jwk] }));
    return Promise.resolve(new Response('not found', { status: 404 }));
  };
}

function identity(over: Partial<Parameters<typeof createIdentity>[0]> = {}): Identity {
  return createIdentity({
    resource: RESOURCE,
    issuer: ISSUER,
    requiredScopes: ['mcp'],
    groupsClaim: 'groups',
    clockSkewSeconds: 60,
    tokens: { robot: { token: 'robot-token-0123456789', groups: ['ci'], scopes: [] } },
    fetch: issuerFetch(),
    ...over,
  });
}

/** A token signed by the issuer's key with `claims` over sensible defaults (`undefined` drops one). */
async function token(
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    aud: RESOURCE.href,
    sub: 'alice',
    scope: 'mcp',
    iat: NOW_S,
    exp: NOW_S + 600,
    ...claims,
  };
  for (const [key, value] of Object.entries(payload)) if (value === undefined) delete payload[key];
  return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: 'k1', ...header }).sign(privateKey);
}

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
});

describe('createIdentity', () => {
  it('I1, I2: a valid JWT is the issuer’s principal, keyed by issuer and subject', async () => {
    const verdict = await identity().authenticate(`Bearer ${await token({ groups: ['dev'] })}`);
    expect(verdict.ok && verdict.principal).toMatchObject({
      kind: 'issuer',
      key: `${ISSUER}#alice`,
      subject: 'alice',
      groups: ['dev'],
    });
  });

  it('I2: a static token is a principal of its own kind, whatever an issuer’s subject is called', async () => {
    const verdict = await identity().authenticate('Bearer robot-token-0123456789');
    expect(verdict.ok && verdict.principal).toMatchObject({
      kind: 'token',
      key: 'token:robot',
      subject: 'robot',
    });
    const named = await identity().authenticate(`Bearer ${await token({ sub: 'robot' })}`);
    expect(named.ok && named.principal.key).toBe(`${ISSUER}#robot`);
  });

  it('I1: required_scopes is asked of the issuer’s tokens, not of a static token', async () => {
    const narrow = await identity().authenticate(`Bearer ${await token({ scope: 'other' })}`);
    expect(narrow.ok ? 200 : narrow.status).toBe(403);
    const robot = await identity().authenticate('Bearer robot-token-0123456789');
    expect(robot.ok).toBe(true);
  });

  it.each([
    ['sub empty', { sub: '' }, {}],
    ['sub a number', { sub: 123 }, {}],
    ['sub a list', { sub: ['alice'] }, {}],
    ['sub an object', { sub: {} }, {}],
    ['sub null', { sub: null }, {}],
    ['no sub', { sub: undefined }, {}],
    ['another issuer', { iss: 'https://evil.example.com' }, {}],
    ['another audience', { aud: 'https://other.example.com/mcp' }, {}],
    ['expired beyond the clock skew', { exp: NOW_S - 61 }, {}],
    ['issued in the future beyond the skew', { iat: NOW_S + 3600 }, {}],
    ['an ID token’s typ', {}, { typ: 'id+jwt' }],
    ['a logout token’s typ', {}, { typ: 'logout+jwt' }],
  ])('I1: refused with 401: %s', async (_label, claims, header) => {
    const verdict = await identity().authenticate(`Bearer ${await token(claims, header)}`);
    expect(verdict.ok ? 200 : verdict.status).toBe(401);
  });

  it.each([
    ['typ at+jwt', {}, { typ: 'at+jwt' }],
    ['typ JWT (Keycloak, Auth0)', {}, { typ: 'JWT' }],
    ['expired within the clock skew', { exp: NOW_S - 30 }, {}],
    ['issued a little in the future (within the skew)', { iat: NOW_S + 30 }, {}],
  ])('I1: accepted: %s', async (_label, claims, header) => {
    const verdict = await identity().authenticate(`Bearer ${await token(claims, header)}`);
    expect(verdict.ok).toBe(true);
  });

  it.each([
    ['junk after the token', (jwt: string) => `Bearer ${jwt} junk`],
    ['two tokens', (jwt: string) => `Bearer ${jwt},${jwt}x y`],
    ['another scheme', (jwt: string) => `Basic ${jwt}`],
    ['no token', () => 'Bearer '],
  ])('I1: a malformed Authorization header is 401: %s', async (_label, header) => {
    const verdict = await identity().authenticate(header(await token()));
    expect(verdict.ok ? 200 : verdict.status).toBe(401);
  });

  it('I1: a static token with characters a b64token has not (! : @) is still accepted', async () => {
    const verdict = await identity({
      tokens: { odd: { token: 'odd:token!with@chars-0123', groups: [], scopes: [] } },
    }).authenticate('Bearer odd:token!with@chars-0123');
    expect(verdict.ok && verdict.principal.key).toBe('token:odd');
  });

  it('I1: a silent issuer: the request is answered 500 server_error within the discovery bound', async () => {
    const silent: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
      );
    const verdict = await identity({ fetch: silent, discoveryTimeoutMs: 200 }).authenticate(
      `Bearer ${await token()}`,
    );
    expect(verdict.ok ? 200 : verdict.status).toBe(500);
    expect(verdict.ok ? '' : verdict.body).toContain('server_error');
    // Without the deadline the stub never answers, and the test times out.
  });
});
