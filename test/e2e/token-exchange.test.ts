/**
 * D8, I2: each caller reaches a downstream as itself, without a browser. A real authorization
 * server (oidc-provider, with RFC 8693 token exchange registered), two real gateways: B is a
 * resource server (`http.auth`) in front of the counter fixture; A has `http.auth` too and
 * reaches B with `auth: token_exchange` (its listing with the `client_credentials` fallback).
 * Alice's and Bob's hosts call through A; B's log names the principal of every call it serves:
 * alice's and bob's, never A's for theirs, and never a host's token is in B's output.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const ALICE: AuthClient = { id: 'alice', secret: 'alice-secret-0123456789', scope: 'mcp' };
const BOB: AuthClient = { id: 'bob', secret: 'bob-secret-0123456789', scope: 'mcp' };
const GATEWAY: AuthClient = { id: 'gateway-a', secret: 'gateway-a-secret-0123456789', scope: 'mcp' };
const MODERN = { mode: { pin: '2026-07-28' } } as const;

let as: AuthServer;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [ALICE, BOB, GATEWAY],
    exchange: true,
  });
}, 30_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await as.close();
});

async function gateway(lines: string[]): Promise<HttpServe> {
  const serve = await serveHttp(writeConfig(lines.join('\n')));
  stops.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

async function host(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'e2e-host', version: '1.0.0' }, { versionNegotiation: MODERN });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  stops.push(() => client.close());
  return client;
}

describe('token exchange per caller', () => {
  it('D8/I2: alice and bob reach the server behind A each with a token issued for them; A lists with its fallback; no token leaks', async () => {
    const b = await gateway([
      'log_level: debug',
      'http:',
      '  auth:',
      `    issuer: ${as.issuer}`,
      '    required_scopes: [mcp]',
      'servers:',
      fixtureEntry('c', 'counter'),
    ]);
    const a = await gateway([
      'http:',
      '  auth:',
      `    issuer: ${as.issuer}`,
      'servers:',
      '  b:',
      `    url: ${b.url}`,
      '    auth:',
      '      type: token_exchange',
      `      client_id: ${GATEWAY.id}`,
      `      client_secret: ${GATEWAY.secret}`,
      `      issuer: ${as.issuer}`,
      '      scopes: [mcp]',
      '      fallback:',
      '        type: client_credentials',
      `        client_id: ${GATEWAY.id}`,
      `        client_secret: ${GATEWAY.secret}`,
      '        scopes: [mcp]',
    ]);
    const tokens = {
      alice: await as.token(ALICE, { resource: a.url }),
      bob: await as.token(BOB, { resource: a.url }),
    };
    const callLines = (who: string) =>
      b
        .stderr()
        .split('\n')
        .filter((line) => line.includes('"call_end"') && line.includes(`#${who}"`));
    for (const who of ['alice', 'bob'] as const) {
      const client = await host(a.url, tokens[who]);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('b_c_hit');
      const result = await client.callTool({ name: 'b_c_hit', arguments: {} });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      await expect.poll(() => callLines(who).length).toBeGreaterThan(0);
    }
    // Nobody's call ran as A's own client: the fallback only listed.
    expect(callLines(GATEWAY.id)).toEqual([]);
    for (const token of Object.values(tokens)) {
      expect(b.stderr()).not.toContain(token);
      expect(a.stderr()).not.toContain(token);
    }
    // L2: A's client secret is in no output of A.
    expect(a.stderr()).not.toContain(GATEWAY.secret);
  }, 60_000);

  it('D8: without a fallback, the connection no caller owns fails saying there is no token to exchange', async () => {
    const b = await gateway([
      'http:',
      '  auth:',
      `    issuer: ${as.issuer}`,
      'servers:',
      fixtureEntry('c', 'counter'),
    ]);
    const a = await gateway([
      'log_level: debug',
      'servers:',
      '  b:',
      `    url: ${b.url}`,
      '    auth:',
      '      type: token_exchange',
      `      client_id: ${GATEWAY.id}`,
      `      client_secret: ${GATEWAY.secret}`,
    ]);
    await expect
      .poll(() => a.stderr(), { timeout: 15_000 })
      .toContain('token_exchange: this connection serves no caller');
  }, 60_000);
});
