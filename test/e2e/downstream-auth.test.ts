/**
 * D1, I2: the gateway logs in to a remote server behind OAuth, and never passes its host's token
 * on. A real authorization server (oidc-provider), two real gateways: B is a resource server
 * (`http.auth`) in front of the counter fixture; A has `http.auth` too, and reaches B as a
 * downstream with `auth: { type: client_credentials }`. The host logs in to A as alice; B's log
 * names the principal of every call it serves: always A's own client, never alice.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const ALICE: AuthClient = { id: 'alice', secret: 'alice-secret-0123456789', scope: 'mcp' };
const GATEWAY: AuthClient = { id: 'gateway-a', secret: 'gateway-a-secret-0123456789', scope: 'mcp' };
const MODERN = { mode: { pin: '2026-07-28' } } as const;

let as: AuthServer;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  as = await startAuthServer({
    resources: ['urn:unused'],
    accept: (resource) => /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(resource),
    clients: [ALICE, GATEWAY],
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

describe('logging in to a remote server', () => {
  it('D1/I2: a client_credentials login reaches a server behind OAuth; the host’s token never goes past the gateway', async () => {
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
      '      type: client_credentials',
      `      client_id: ${GATEWAY.id}`,
      `      client_secret: ${GATEWAY.secret}`,
      `      issuer: ${as.issuer}`,
      '      scopes: [mcp]',
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

    const callLines = () =>
      b
        .stderr()
        .split('\n')
        .filter((line) => line.includes('"call_end"'));
    await expect.poll(() => callLines().length).toBeGreaterThan(0);
    for (const line of callLines()) expect(line).toContain(`#${GATEWAY.id}"`);
    expect(b.stderr()).not.toContain(hostToken);
    expect(b.stderr()).not.toContain('#alice"');
    // L2: A's client secret is in no output of A.
    expect(a.stderr()).not.toContain(GATEWAY.secret);
  }, 60_000);
});
