/**
 * D1, D8, I2: the gateway logs in to a remote server behind OAuth, and never passes its host's
 * token on. A real authorization server (oidc-provider, with RFC 8693 token exchange registered),
 * two real gateways: B is a resource server (`http.auth`) in front of the counter fixture; A has
 * `http.auth` too, and reaches B as a downstream. With `auth: { type: client_credentials }` B's
 * log names A's own client for every call, never alice; with `auth: token_exchange` it names
 * alice for alice's calls and bob for bob's (A's listing with its `client_credentials`
 * fallback), and no host's token is in either gateway's output.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { fixtureEntry, modernHttpClient, serveHttpLines, type HttpServe } from './cli-process.js';

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

const gateway = (lines: string[]): Promise<HttpServe> => serveHttpLines(lines, stops);

/** B: a resource server of the authorization server's tokens in front of the counter fixture. */
const resourceServer = (): Promise<HttpServe> =>
  gateway([
    'log_level: debug',
    'http:',
    '  auth:',
    `    issuer: ${as.issuer}`,
    '    required_scopes: [mcp]',
    'servers:',
    fixtureEntry('c', 'counter'),
  ]);

/** A: a resource server too, reaching `b` as its server `b` with `auth` (YAML lines under it). */
const front = (b: HttpServe, auth: string[]): Promise<HttpServe> =>
  gateway([
    'http:',
    '  auth:',
    `    issuer: ${as.issuer}`,
    'servers:',
    '  b:',
    `    url: ${b.url}`,
    '    auth:',
    ...auth,
  ]);

/** A's client at the authorization server, as `auth` lines at `indent`. */
const gatewayClient = (indent: string): string[] => [
  `${indent}client_id: ${GATEWAY.id}`,
  `${indent}client_secret: ${GATEWAY.secret}`,
  `${indent}scopes: [mcp]`,
];

/** The `call_end` lines of `b` that name `who` as the caller. */
const callLines = (b: HttpServe, who: string): string[] =>
  b
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"call_end"') && line.includes(`#${who}"`));

describe('logging in to a remote server', () => {
  it('D1/I2: a client_credentials login reaches a server behind OAuth; the host’s token never goes past the gateway', async () => {
    const b = await resourceServer();
    const a = await front(b, [
      '      type: client_credentials',
      ...gatewayClient('      '),
      `      issuer: ${as.issuer}`,
    ]);
    const hostToken = await as.token(ALICE, { resource: a.url });
    const client = new Client({ name: 'e2e-host', version: '1.0.0' }, { versionNegotiation: MODERN });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(a.url), {
        requestInit: { headers: { Authorization: `Bearer ${hostToken}` } },
      }),
    );
    stops.push(() => client.close());
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('b_c_hit');
    const result = await client.callTool({ name: 'b_c_hit', arguments: {} });
    expect(result.isError).toBeFalsy();

    const ended = () =>
      b
        .stderr()
        .split('\n')
        .filter((line) => line.includes('"call_end"'));
    await expect.poll(() => ended().length).toBeGreaterThan(0);
    for (const line of ended()) expect(line).toContain(`#${GATEWAY.id}"`);
    expect(b.stderr()).not.toContain(hostToken);
    expect(b.stderr()).not.toContain('#alice"');
    // L2: A's client secret is in no output of A.
    expect(a.stderr()).not.toContain(GATEWAY.secret);
  }, 60_000);

  it('D8/I2: alice and bob reach the server behind A each with a token issued for them; A lists with its fallback; no token leaks', async () => {
    const b = await resourceServer();
    const a = await front(b, [
      '      type: token_exchange',
      ...gatewayClient('      '),
      `      issuer: ${as.issuer}`,
      '      fallback:',
      '        type: client_credentials',
      ...gatewayClient('        '),
    ]);
    const tokens = {
      alice: await as.token(ALICE, { resource: a.url }),
      bob: await as.token(BOB, { resource: a.url }),
    };
    for (const who of ['alice', 'bob'] as const) {
      const client = await modernHttpClient(a.url, tokens[who]);
      stops.push(() => client.close());
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('b_c_hit');
      const result = await client.callTool({ name: 'b_c_hit', arguments: {} });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      await expect.poll(() => callLines(b, who).length).toBeGreaterThan(0);
    }
    // Nobody's call ran as A's own client: the fallback only listed.
    expect(callLines(b, GATEWAY.id)).toEqual([]);
    for (const token of Object.values(tokens)) {
      expect(b.stderr()).not.toContain(token);
      expect(a.stderr()).not.toContain(token);
    }
    // L2: A's client secret is in no output of A.
    expect(a.stderr()).not.toContain(GATEWAY.secret);
  }, 60_000);

  it('D8: without a fallback, the connection no caller owns fails saying there is no token to exchange', async () => {
    const b = await resourceServer();
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
