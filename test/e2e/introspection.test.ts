/**
 * I1 with opaque tokens: `serve --http` validates them by RFC 7662 introspection at a real
 * authorization server (oidc-provider issuing opaque access tokens), and the principal, its
 * groups and scopes come from the introspection answer, as they come from a JWT's claims.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernToolCall } from '../helpers/hosts.js';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const RESOURCE = 'urn:mcp-normalizer:introspected';
const OTHER_RESOURCE = 'urn:mcp-normalizer:elsewhere';
const ALICE: AuthClient = { id: 'alice', secret: 'alice-secret-0123456789', scope: 'mcp' };
const BOB: AuthClient = { id: 'bob', secret: 'bob-secret-0123456789', scope: 'mcp' };
const GATEWAY: AuthClient = { id: 'gateway', secret: 'gateway-introspection-secret-42', scope: 'mcp' };

let as: AuthServer;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  as = await startAuthServer({
    resources: [RESOURCE, OTHER_RESOURCE],
    clients: [ALICE, BOB, GATEWAY],
    groups: { alice: ['dev'] },
    opaque: true,
  });
}, 30_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await as.close();
});

async function gateway(secret = GATEWAY.secret): Promise<HttpServe> {
  const file = writeConfig(
    [
      'http:',
      '  auth:',
      `    issuer: ${as.issuer}`,
      `    audience: ${RESOURCE}`,
      '    introspection:',
      `      client_id: ${GATEWAY.id}`,
      `      client_secret: ${secret}`,
      'access:',
      "  - principals: ['group:dev']",
      "    allow: ['c_*']",
      "  - principals: ['client:bob']",
      "    allow: ['c_count']",
      'servers:',
      fixtureEntry('c', 'counter'),
    ].join('\n'),
  );
  const serve = await serveHttp(file);
  stops.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

describe('introspection', () => {
  it('I1: opaque tokens are validated by RFC 7662 introspection: principal, groups and client from the answer; another audience or an unknown token is 401', async () => {
    const serve = await gateway();
    const aliceToken = await as.token(ALICE);
    expect(aliceToken.split('.')).toHaveLength(1);
    const names = async (token: string): Promise<string[]> => {
      const client = new Client(
        { name: 'e2e', version: '1' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(serve.url), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      stops.push(() => client.close());
      return (await client.listTools()).tools.map((tool) => tool.name).sort();
    };
    // alice's groups come from the introspection answer (group:dev); bob is a client: rule.
    expect(await names(aliceToken)).toEqual(['c_add', 'c_count', 'c_delete_all', 'c_hit']);
    expect(await names(await as.token(BOB))).toEqual(['c_count']);

    const elsewhere = await modernToolCall(serve.url, 'c_count', {
      token: await as.token(ALICE, { resource: OTHER_RESOURCE }),
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const unknown = await modernToolCall(serve.url, 'c_count', { token: 'no-such-opaque-token-0123456789' });
    expect(unknown.status).toBe(401);
    // L2: the gateway's introspection secret and the tokens reach no output.
    expect(serve.stderr()).not.toContain(GATEWAY.secret);
    expect(serve.stderr()).not.toContain(aliceToken);
  });

  it('I1: wrong introspection credentials are the gateway’s failure (not the token’s), and say so without the secret', async () => {
    const wrong = 'not-the-gateway-secret-987654321';
    const serve = await gateway(wrong);
    const answer = await modernToolCall(serve.url, 'c_count', { token: await as.token(ALICE) });
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(await answer.text()).toContain('check http.auth.introspection');
    expect(serve.stderr()).not.toContain(wrong);
  });
});
