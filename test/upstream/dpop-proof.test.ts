/**
 * I8: the proof of a DPoP request (upstream/dpop-proof.ts), checked as RFC 9449 §4.3 says: a
 * table of proofs that hold and that do not, each refusal saying why, and a replayed one refused.
 */
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProofChecker, DpopRefused, verifyDpopRequest } from '../../src/upstream/dpop-proof.js';

const URL_ = 'https://gw.example/mcp';
const TOKEN = 'eyJ.token.sig';
const NOW = 1_800_000_000_000;
let key: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let jwk: JWK;
let privateJwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = pair.privateKey;
  jwk = await exportJWK(pair.publicKey);
  privateJwk = await exportJWK(pair.privateKey);
});

interface Proof {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
}

async function proof({ header = {}, claims = {} }: Proof = {}): Promise<string> {
  return new SignJWT({
    jti: randomUUID(),
    htm: 'POST',
    htu: URL_,
    iat: NOW / 1000,
    ath: createHash('sha256').update(TOKEN).digest('base64url'),
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...header })
    .sign(key);
}

describe('DPoP proofs', () => {
  it('I8: a proof that holds gives its key’s thumbprint; the same proof again is a replay', async () => {
    const checker = createProofChecker(() => NOW);
    const one = await proof();
    expect(await checker.check({ proof: one, method: 'post', url: `${URL_}?x=1`, token: TOKEN })).toEqual({
      ok: true,
      jkt: await calculateJwkThumbprint(jwk),
    });
    expect(await checker.check({ proof: one, method: 'POST', url: URL_, token: TOKEN })).toEqual({
      ok: false,
      why: 'the DPoP proof was used before',
    });
  });

  it.each([
    ['no proof', async () => undefined, /no DPoP proof/],
    ['two proofs', async () => [await proof(), await proof()], /more than one/],
    ['not a JWT', async () => 'nope', /not a JWT/],
    ['another typ', async () => proof({ header: { typ: 'JWT' } }), /typ/],
    ['a private key in its jwk', async () => proof({ header: { jwk: privateJwk } }), /not a public key/],
    ['another method', async () => proof({ claims: { htm: 'GET' } }), /another method/],
    ['another URL', async () => proof({ claims: { htu: 'https://gw.example/other' } }), /another URL/],
    ['an old iat', async () => proof({ claims: { iat: NOW / 1000 - 301 } }), /too old/],
    [
      'an iat in the future',
      async () => proof({ claims: { iat: NOW / 1000 + 301 } }),
      /too old or from the future/,
    ],
    ['another token', async () => proof({ claims: { ath: 'x' } }), /not for this token/],
    ['no jti', async () => proof({ claims: { jti: undefined } }), /no jti/],
  ])('I8: %s is refused', async (_name, make, why) => {
    const verdict = await createProofChecker(() => NOW).check({
      proof: (await make()) as string | string[] | undefined,
      method: 'POST',
      url: URL_,
      token: TOKEN,
    });
    expect(verdict.ok).toBe(false);
    expect(verdict.ok === false && verdict.why).toMatch(why);
  });

  it('I8: a token bound to another key, or to none, is refused with a DPoP challenge', async () => {
    const proofs = createProofChecker(() => NOW);
    const check = (jkt: string | undefined) =>
      verifyDpopRequest(
        TOKEN,
        { proof: undefined, method: 'POST', url: URL_ },
        { verify: async () => ({ extra: jkt === undefined ? {} : { jkt } }), proofs, nowMs: () => NOW },
      );
    await expect(check(undefined)).rejects.toThrow('not bound to a DPoP key');
    const other = verifyDpopRequest(
      TOKEN,
      { proof: await proof(), method: 'POST', url: URL_ },
      { verify: async () => ({ extra: { jkt: 'another-thumbprint' } }), proofs, nowMs: () => NOW },
    );
    const refused = await other.catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DpopRefused);
    const answer = (refused as DpopRefused).response();
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(
      /^DPoP error="invalid_token", error_description="the token is bound to another key", algs="ES256 /,
    );
  });
});
