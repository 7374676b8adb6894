/** I1: RFC 7662 answers → a principal or a refusal, and how long each is kept (a table, fake clock). */
import { describe, expect, it } from 'vitest';
import {
  createIntrospection,
  INTROSPECTIONS_AT_ONCE,
  INTROSPECTIONS_WAITING,
} from '../../src/upstream/introspection.js';

const AUDIENCE = 'https://mcp.example.com/mcp';
const ISSUER = 'https://idp.example.com';
const NOW_S = 1_800_000_000;

function introspector(answer: unknown, options: { cacheSeconds?: number; status?: number } = {}) {
  let clock = NOW_S * 1000;
  const asked: { authorization: string; body: string }[] = [];
  const introspect = createIntrospection({
    endpoint: () => Promise.resolve('https://idp.example.com/introspect'),
    clientId: 'gateway',
    clientSecret: 's3cret:with/odd chars',
    issuer: ISSUER,
    audience: AUDIENCE,
    resource: new URL(AUDIENCE),
    groupsClaim: 'roles',
    cacheSeconds: options.cacheSeconds ?? 60,
    clockSkewSeconds: 0,
    now: () => clock,
    fetch: (_url, init) => {
      asked.push({
        authorization: new Headers(init?.headers).get('authorization') ?? '',
        body: String(init?.body),
      });
      return Promise.resolve(Response.json(answer, { status: options.status ?? 200 }));
    },
  });
  return { introspect, asked, advance: (seconds: number) => (clock += seconds * 1000) };
}

const ACTIVE = {
  active: true,
  iss: ISSUER,
  aud: [AUDIENCE, 'other'],
  sub: 'alice',
  client_id: 'host',
  scope: 'mcp tools.write',
  roles: ['dev'],
  exp: NOW_S + 3600,
};

describe('introspection', () => {
  it('I1: an active answer for this audience is the principal: sub, groups claim, scopes, client', async () => {
    const { introspect, asked } = introspector(ACTIVE);
    const auth = await introspect('opaque-token');
    expect(auth.extra?.['principal']).toEqual({
      kind: 'issuer',
      key: `${ISSUER}#alice`,
      subject: 'alice',
      groups: ['dev'],
      scopes: ['mcp', 'tools.write'],
      clientId: 'host',
    });
    expect(auth.expiresAt).toBe(NOW_S + 3600);
    // client_secret_basic, each part form-encoded (RFC 6749 §2.3.1).
    expect(Buffer.from(asked[0]?.authorization.slice(6) ?? '', 'base64').toString()).toBe(
      'gateway:s3cret%3Awith%2Fodd%20chars',
    );
    expect(new URLSearchParams(asked[0]?.body).get('token_type_hint')).toBe('access_token');
  });

  it('I1: a machine client without sub is its client_id', async () => {
    const { sub: _sub, ...machine } = ACTIVE;
    const auth = await introspector(machine).introspect('t');
    expect((auth.extra?.['principal'] as { subject: string }).subject).toBe('host');
  });

  it.each([
    ['inactive', { active: false }],
    ['issuer', { ...ACTIVE, iss: 'https://evil.example.com' }],
    ['audience', { ...ACTIVE, aud: 'https://other.example.com/mcp' }],
    ['audience', { ...ACTIVE, aud: undefined }],
    ['expired', { ...ACTIVE, exp: NOW_S - 1 }],
    ['not_yet_valid', { ...ACTIVE, nbf: NOW_S + 60 }],
    ['subject', { ...ACTIVE, sub: undefined, client_id: undefined }],
  ])('I1: refused as %s', async (why, answer) => {
    await expect(introspector(answer).introspect('t')).rejects.toThrow(`Invalid token: ${why}`);
  });

  it('I1: the server refusing the gateway is a server error naming the setting, not an invalid token', async () => {
    const { introspect } = introspector({ error: 'invalid_client' }, { status: 401 });
    await expect(introspect('t')).rejects.toMatchObject({
      code: 'server_error',
      message: expect.stringContaining('http.auth.introspection'),
    });
  });

  it('I1: an answer is kept for cache_s, never past exp; a refusal for a few seconds; 0 asks every time', async () => {
    const kept = introspector({ ...ACTIVE, exp: NOW_S + 30 });
    await kept.introspect('t');
    await kept.introspect('t');
    expect(kept.asked).toHaveLength(1);
    kept.advance(31);
    await expect(kept.introspect('t')).rejects.toThrow('expired');
    expect(kept.asked).toHaveLength(2);

    const refused = introspector({ active: false });
    await expect(refused.introspect('bad')).rejects.toThrow();
    await expect(refused.introspect('bad')).rejects.toThrow();
    expect(refused.asked).toHaveLength(1);
    refused.advance(6);
    await expect(refused.introspect('bad')).rejects.toThrow();
    expect(refused.asked).toHaveLength(2);

    const never = introspector(ACTIVE, { cacheSeconds: 0 });
    await never.introspect('t');
    await never.introspect('t');
    expect(never.asked).toHaveLength(2);
  });

  it('I1: many distinct tokens at once are not as many requests to the issuer; one token at once is one', async () => {
    let inFlight = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const introspect = createIntrospection({
      endpoint: () => Promise.resolve('https://idp.example.com/introspect'),
      clientId: 'gateway',
      clientSecret: 'secret',
      issuer: ISSUER,
      audience: AUDIENCE,
      resource: new URL(AUDIENCE),
      groupsClaim: 'roles',
      cacheSeconds: 60,
      clockSkewSeconds: 0,
      fetch: () => {
        most = Math.max(most, ++inFlight);
        return new Promise((resolve) =>
          release.push(() => {
            inFlight -= 1;
            resolve(Response.json({ active: false }));
          }),
        );
      },
    });
    const bogus = Array.from({ length: 200 }, (_, i) => introspect(`bogus-${i}`).catch((e: Error) => e));
    const same = Array.from({ length: 50 }, () => introspect('one-token').catch((e: Error) => e));
    // Past the places and the queue: answered at once, as a server error the host may retry.
    const early = await Promise.all(bogus.slice(INTROSPECTIONS_AT_ONCE + INTROSPECTIONS_WAITING));
    expect(early.every((error) => (error as { code?: string }).code === 'server_error')).toBe(true);
    while (release.length > 0 || inFlight > 0) {
      release.splice(0).forEach((go) => go());
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([...bogus, ...same]);
    expect(most).toBe(INTROSPECTIONS_AT_ONCE);

    const coalesced = introspector(ACTIVE);
    await Promise.all(Array.from({ length: 50 }, () => coalesced.introspect('presented-at-once')));
    expect(coalesced.asked).toHaveLength(1);
  });
});
