/**
 * I8: the gateway as a resource server of DPoP-bound tokens, with a real authorization server
 * (oidc-provider, which binds a token to the key of the proof its token request carried) and a
 * real host (the SDK v2 client with `client_credentials` and DPoP): the host's calls go through
 * with `Authorization: DPoP` and a fresh proof each; the same token with a proof of another key,
 * or as a Bearer token, is refused with a DPoP challenge.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  Client,
  ClientCredentialsProvider,
  DpopSession,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const ALICE: AuthClient = { id: 'alice', secret: 'alice-secret-0123456789', scope: 'mcp' };

let as: AuthServer;
let gateway: HttpServe;

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [ALICE],
  });
  gateway = await serveHttp(
    writeConfig(
      ['http:', '  auth:', `    issuer: ${as.issuer}`, 'servers:', fixtureEntry('c', 'counter')].join('\n'),
    ),
  );
}, 30_000);

afterAll(async () => {
  if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
  await as.close();
});

/** A proof of `key` for POST /mcp with `token`, as a thief holding only the token would make. */
async function proofOf(token: string): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return new SignJWT({
    jti: randomUUID(),
    htm: 'POST',
    htu: gateway.url,
    iat: Math.floor(Date.now() / 1000),
    ath: createHash('sha256').update(token).digest('base64url'),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
    .sign(privateKey);
}

function post(authorization: string, dpop?: string): Promise<Response> {
  return fetch(gateway.url, {
    method: 'POST',
    headers: {
      authorization,
      ...(dpop !== undefined ? { dpop } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

describe('DPoP-bound callers', () => {
  it('I8: a DPoP host is served; its token with another key’s proof, or as Bearer, is refused', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: ALICE.id,
      clientSecret: ALICE.secret,
      scope: 'mcp',
      expectedIssuer: as.issuer,
    });
    const session = DpopSession.create();
    Object.assign(provider, { dpop: () => session });
    const client = new Client(
      { name: 'dpop-host', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), { authProvider: provider }));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('c_hit');
      expect((await client.callTool({ name: 'c_hit', arguments: {} })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const token = provider.tokens()?.access_token ?? '';
    expect(provider.tokens()?.token_type?.toLowerCase()).toBe('dpop');

    const stolen = await post(`DPoP ${token}`, await proofOf(token));
    expect(stolen.status).toBe(401);
    expect(stolen.headers.get('www-authenticate')).toMatch(
      /^DPoP error="invalid_token", error_description="the token is bound to another key"/,
    );
    const asBearer = await post(`Bearer ${token}`);
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toContain('DPoP scheme and its proof');
    const noProof = await post(`DPoP ${token}`);
    expect(noProof.status).toBe(401);
    expect(noProof.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
    // L2: the refusals are logged by their reason, never with the token.
    expect(gateway.stderr()).not.toContain(token);
  }, 60_000);
});
