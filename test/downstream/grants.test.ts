/**
 * D5–D8 in the small: the token a grant reads (file or variable, re-read, bounded, a clear error
 * naming the step and never the token), the workload grant's token request, and the DPoP keys:
 * a machine grant's lives with the process, a login's is kept with its tokens and taken again.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isStoredDpopKey, storedSession, type StoredDpopKey } from '../../src/downstream/dpop-keys.js';
import { JWT_BEARER, JwtBearerProvider, machineProvider, readToken } from '../../src/downstream/grants.js';
import {
  TOKEN_EXCHANGE,
  TokenExchangeProvider,
  tokenExchangeProvider,
} from '../../src/downstream/token-exchange.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mcpn-grants-'));
const file = (name: string, text: string): string => {
  const where = path.join(dir, name);
  writeFileSync(where, text);
  return where;
};

afterEach(() => {
  delete process.env['MCPN_TEST_TOKEN'];
});

describe('the token a grant reads', () => {
  it.each([
    ['a file, trimmed', () => ({ file: file('ok.jwt', ' eyJ.a.b \n') }), 'eyJ.a.b'],
    [
      'a variable',
      () => {
        process.env['MCPN_TEST_TOKEN'] = 'eyJ.c.d';
        return { env: 'MCPN_TEST_TOKEN' };
      },
      'eyJ.c.d',
    ],
  ])('D5: %s', async (_name, source, expected) => {
    expect(await readToken(source(), 'step')).toBe(expected);
  });

  it.each([
    [
      'a missing file',
      () => ({ file: path.join(dir, 'nope.jwt') }),
      /^step: cannot read .*nope\.jwt \(ENOENT\)$/,
    ],
    ['an empty file', () => ({ file: file('empty.jwt', '\n') }), /^step: .*empty\.jwt is empty$/],
    ['two tokens', () => ({ file: file('two.jwt', 'secret-one secret-two') }), /does not hold one token/],
    [
      'an unset variable',
      () => ({ env: 'MCPN_TEST_TOKEN' }),
      /^step: the environment variable MCPN_TEST_TOKEN is not set$/,
    ],
  ])('D5: %s is an error naming the step and the place, never the token', async (_name, source, message) => {
    const error = await readToken(source(), 'step').catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('secret-one');
  });
});

describe('the workload grant', () => {
  it('D5: each token request carries the JWT the file holds then (a rotated token is used) and the scope', async () => {
    const where = file('rotating.jwt', 'eyJ.first.sig');
    const provider = new JwtBearerProvider({
      type: 'jwt_bearer',
      assertion: { file: where },
      scopes: ['mcp'],
    });
    const first = await provider.prepareTokenRequest();
    expect(Object.fromEntries(first)).toEqual({
      grant_type: JWT_BEARER,
      assertion: 'eyJ.first.sig',
      scope: 'mcp',
    });
    writeFileSync(where, 'eyJ.second.sig');
    const second = await provider.prepareTokenRequest('other');
    expect(Object.fromEntries(second)).toEqual({
      grant_type: JWT_BEARER,
      assertion: 'eyJ.second.sig',
      scope: 'other',
    });
    expect(provider.clientMetadata).toMatchObject({
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: 'none',
    });
    expect(provider.clientInformation()).toBeUndefined();
  });

  it('D7: with dpop a machine grant has one DPoP session for the life of the process; without, none', async () => {
    const source = { file: file('dpop.jwt', 'eyJ.x.y') };
    const bound = machineProvider({ type: 'jwt_bearer', assertion: source, dpop: true });
    const session = await bound.dpop?.();
    expect(session?.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await bound.dpop?.()).toBe(session);
    expect(machineProvider({ type: 'jwt_bearer', assertion: source }).dpop).toBeUndefined();
  });
});

describe("a login's DPoP key", () => {
  it('D7: made once and saved before use; the same key (thumbprint) is taken from the store again', async () => {
    let kept: StoredDpopKey | undefined;
    const first = await storedSession(
      () => kept,
      (key) => (kept = key),
    );
    expect(isStoredDpopKey(kept)).toBe(true);
    const again = await storedSession(
      () => kept,
      () => expect.unreachable('a kept key is not replaced'),
    );
    expect(again.thumbprint).toBe(first.thumbprint);
    // The proof's public key is in its header; the private part never is.
    const proof = await again.buildProof({ htm: 'POST', htu: 'https://rs.example/mcp?x=1' });
    const header = JSON.parse(Buffer.from(proof.split('.')[0] ?? '', 'base64url').toString()) as {
      jwk: Record<string, string>;
    };
    expect(header.jwk['d']).toBeUndefined();
    expect(proof).not.toContain(kept?.d);
  });

  it.each([
    ['nothing', undefined],
    ['a string', 'key'],
    ['another curve', { kty: 'EC', crv: 'P-384', x: 'a'.repeat(43), y: 'a'.repeat(43), d: 'a'.repeat(43) }],
    [
      'a key that does not import',
      { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43), d: 'A'.repeat(43) },
    ],
  ])('D7: %s in the store is replaced by a new key, saved', async (_name, stored) => {
    let saved: StoredDpopKey | undefined;
    await storedSession(
      () => stored,
      (key) => (saved = key),
    );
    expect(isStoredDpopKey(saved)).toBe(true);
    expect(saved).not.toEqual(stored);
  });
});

describe('the token exchange of a caller', () => {
  const config = { type: 'token_exchange', clientId: 'gw', clientSecret: 's3cret-value' } as const;

  it("D8: a caller's copy sends that caller's current token as the subject, with the audience and scope", () => {
    const provider = new TokenExchangeProvider({
      ...config,
      audience: 'tickets',
      scopes: ['mcp'],
      principal: 'iss#alice',
      subjectToken: () => 'alice-token',
    });
    expect(Object.fromEntries(provider.prepareTokenRequest())).toEqual({
      grant_type: TOKEN_EXCHANGE,
      subject_token: 'alice-token',
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'tickets',
      scope: 'mcp',
    });
    expect(provider.clientInformation()).toEqual({ client_id: 'gw', client_secret: 's3cret-value' });
  });

  it.each([
    ['the connection no caller owns', {}, /serves no caller .* give auth\.fallback/],
    [
      'a caller whose token expired',
      { principal: 'iss#alice', subjectToken: () => undefined },
      /the caller iss#alice has no current token/,
    ],
  ])('D8: %s has nothing to exchange, and says so', (_name, extra, message) => {
    expect(() => new TokenExchangeProvider({ ...config, ...extra }).prepareTokenRequest()).toThrow(message);
  });

  it('D8: the connection no caller owns uses the fallback grant when there is one', async () => {
    const fallback = { type: 'jwt_bearer', assertion: { file: file('fallback.jwt', 'eyJ.f.b') } } as const;
    const provider = tokenExchangeProvider({ ...config, fallback });
    expect(provider).toBeInstanceOf(JwtBearerProvider);
    expect(tokenExchangeProvider({ ...config, fallback, principal: 'iss#bob' })).toBeInstanceOf(
      TokenExchangeProvider,
    );
  });
});
