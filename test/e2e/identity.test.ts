/**
 * I1–I5 end to end: `serve --http` as an OAuth 2.1 resource server in front of real fixtures,
 * with a real authorization server (oidc-provider, fixtures/servers/oauth.ts) issuing JWT
 * access tokens, an SDK 1.x client as the 2025 host and an SDK v2 client pinned to 2026-07-28.
 * The counter fixture counts every call it receives, so a refused call is seen never to reach it.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answersAs, envelope, modernHost, modernRequest, modernToolCall } from '../helpers/hosts.js';
import { startAuthServer, type AuthClient, type AuthServer } from '../../fixtures/servers/oauth.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const RESOURCE = 'urn:mcp-normalizer:e2e';
const OTHER_RESOURCE = 'urn:mcp-normalizer:other';
const ALICE: AuthClient = { id: 'alice', secret: 'alice-secret-0123456789', scope: 'mcp tools.write' };
const BOB: AuthClient = { id: 'bob', secret: 'bob-secret-0123456789', scope: 'mcp' };
// I2: issuer clients named as the gateway's static principals (a client_credentials JWT's sub is its id).
const TOKEN_NAMED: AuthClient = { id: 'token', secret: 'token-named-secret-0123456789', scope: 'mcp' };
const ROBOT_NAMED: AuthClient = { id: 'robot', secret: 'robot-named-secret-0123456789', scope: 'mcp' };
const HTTP_TOKEN = 'static-http-token-0123456789';
const ROBOT_TOKEN = 'static-robot-token-0123456789';
const MODERN = { mode: { pin: '2026-07-28' } } as const;

let as: AuthServer;
let otherAs: AuthServer;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  as = await startAuthServer({
    resources: [RESOURCE, OTHER_RESOURCE],
    clients: [ALICE, BOB, TOKEN_NAMED, ROBOT_NAMED],
    groups: { alice: ['dev'], bob: ['ci'] },
  });
  otherAs = await startAuthServer({ resources: [RESOURCE], clients: [ALICE] });
}, 30_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await as.close();
  await otherAs.close();
});

function config(extra: string[] = [], servers: string[] = [fixtureEntry('c', 'counter')]): string {
  return writeConfig(
    [
      'http:',
      '  auth:',
      `    issuer: ${as.issuer}`,
      `    audience: ${RESOURCE}`,
      '    required_scopes: [mcp]',
      "    admins: ['group:dev']",
      'access:',
      "  - principals: ['group:dev']",
      "    allow: ['c_*', 'g_*', 'n_*', '!c_delete_all']",
      "    scopes: { 'c_add': 'tools.write' }",
      "    resources: ['n+notes://*', '!n+notes://logo.png']",
      "  - principals: ['client:bob']",
      "    allow: ['c_count', 'g_*']",
      ...extra,
      'servers:',
      ...servers,
    ].join('\n'),
  );
}

async function gateway(file: string): Promise<HttpServe> {
  const serve = await serveHttp(file);
  stops.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });

async function legacyClient(
  url: string,
  token: string,
): Promise<{ client: LegacyClient; transport: LegacyHttpTransport }> {
  const transport = new LegacyHttpTransport(new URL(url), { requestInit: bearer(token) });
  const client = new LegacyClient({ name: 'e2e-2025', version: '1.0.0' });
  await client.connect(transport);
  stops.push(() => client.close());
  return { client, transport };
}

async function modernClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'e2e-2026', version: '1.0.0' }, { versionNegotiation: MODERN });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: bearer(token) }));
  stops.push(() => client.close());
  return client;
}

/** A POST of one 2026 request with `token` (or none): its status, challenge and body. */
async function post(url: string, token: string | undefined, name = 'c_count') {
  const response = await modernToolCall(url, name, token !== undefined ? { token } : {});
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate') ?? '',
    body: await response.text(),
  };
}

/** How many calls the counter fixture has received, through an allowed principal. */
async function counted(client: LegacyClient): Promise<number> {
  const result = await client.callTool({ name: 'c_count', arguments: {} });
  return (result.structuredContent as { results: { calls: number } }).results.calls;
}

const names = (tools: { name: string }[]): string[] => tools.map((tool) => tool.name).sort();

/** An unsigned (`alg: none`) or HS256 token with the right claims: never accepted. */
function forged(alg: 'none' | 'HS256', claims: JWTPayload): Promise<string> | string {
  if (alg === 'HS256') {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('x'.repeat(32)));
  }
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

describe('who is calling', () => {
  it('I1: no token gets 401 naming the metadata, which names the issuer and the resource', async () => {
    const serve = await gateway(config());
    const answer = await post(serve.url, undefined);
    expect(answer.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(answer.challenge)?.[1];
    expect(metadataUrl).toBe(serve.url.replace('/mcp', '/.well-known/oauth-protected-resource/mcp'));
    const metadata = (await (await fetch(metadataUrl as string)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: serve.url, authorization_servers: [as.issuer] });
  });

  it('I1: tokens for another audience, from another issuer, unsigned, HS256 or tampered are refused before any downstream', async () => {
    const serve = await gateway(config());
    const good = await as.token(ALICE);
    const claims = JSON.parse(
      Buffer.from(good.split('.')[1] as string, 'base64url').toString(),
    ) as JWTPayload;
    const signature = good.split('.')[2] as string;
    const tampered = `${good.split('.').slice(0, 2).join('.')}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    const { privateKey } = await generateKeyPair('ES256');
    const ownKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
      .sign(privateKey);
    const refused = {
      'another audience': await as.token(ALICE, { resource: OTHER_RESOURCE }),
      'another issuer': await otherAs.token(ALICE),
      'alg none': await forged('none', claims),
      HS256: await forged('HS256', claims),
      tampered,
      'signed by another key with the same kid': ownKey,
      'not a JWT': 'x'.repeat(40),
    };
    for (const [why, token] of Object.entries(refused)) {
      const answer = await post(serve.url, token, 'c_hit');
      expect(answer.status, why).toBe(401);
      expect(answer.challenge, why).toContain('invalid_token');
    }
    const { client } = await legacyClient(serve.url, good);
    expect(await counted(client)).toBe(0);
  });

  it('I1: an expired token is refused (clock_skew_s: 0)', async () => {
    const shortLived = await startAuthServer({ resources: [RESOURCE], clients: [ALICE], ttlSeconds: 3 });
    stops.push(() => shortLived.close());
    const file = writeConfig(
      [
        'http:',
        '  auth:',
        `    issuer: ${shortLived.issuer}`,
        `    audience: ${RESOURCE}`,
        '    clock_skew_s: 0',
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    );
    const serve = await gateway(file);
    const token = await shortLived.token(ALICE);
    const first = await post(serve.url, token);
    expect(first.status, first.body).toBe(200);
    // The token's own lifetime (3 s, long enough for the first request on a busy machine) has to
    // pass: a real clock, bounded.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const answer = await post(serve.url, token);
    expect(answer.status).toBe(401);
    expect(answer.challenge).toContain('invalid_token');
  });

  it('I3/I2/E2: two principals, both eras: each lists and calls only what policy allows; a denied call never reaches the server and its log line names the caller', async () => {
    const serve = await gateway(config());
    const aliceToken = await as.token(ALICE);
    const bobToken = await as.token(BOB);
    const alice = await legacyClient(serve.url, aliceToken);
    const bob = await modernClient(serve.url, bobToken);
    expect(names((await alice.client.listTools()).tools)).toEqual(['c_add', 'c_count', 'c_hit']);
    expect(names((await bob.listTools()).tools)).toEqual(['c_count']);
    // E2, I3: a list that varies by caller is cached per caller, never shared.
    const listed = (await (await modernRequest(serve.url, 'tools/list', {}, { token: bobToken })).json()) as {
      result: { cacheScope: string; tools: unknown[] };
    };
    expect(listed.result).toMatchObject({ cacheScope: 'private', tools: [{ name: 'c_count' }] });

    const denied = await bob.callTool({ name: 'c_hit', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent).toMatchObject({ meta_data: { error_type: 'access_denied' } });
    const deniedToAlice = await alice.client.callTool({
      name: 'c_delete_all',
      arguments: { explicit_action: true },
    });
    expect(deniedToAlice.structuredContent).toMatchObject({ meta_data: { error_type: 'access_denied' } });
    expect(await counted(alice.client)).toBe(0);

    await alice.client.callTool({ name: 'c_hit', arguments: {} });
    expect(await counted(alice.client)).toBe(1);
    // I2: the refusal's L1 line names the principal; no token reaches the log.
    await expect
      .poll(() =>
        serve
          .stderr()
          .split('\n')
          .some(
            (line) => line.includes('"call_end"') && line.includes('#bob"') && line.includes('access_denied'),
          ),
      )
      .toBe(true);
    expect(serve.stderr()).not.toContain(bobToken);
    expect(serve.stderr()).not.toContain(aliceToken);
    // O4: the status page's recent calls name the caller too (read by an admin: alice is dev).
    const page = await fetch(serve.url.replace(/\/mcp$/, '/status/data'), {
      headers: { authorization: `Bearer ${aliceToken}` },
    });
    const calls = ((await page.json()) as { calls: { principal?: string; outcome: string }[] }).calls;
    expect(
      calls.some((call) => call.principal === `${as.issuer}#bob` && call.outcome === 'access_denied'),
    ).toBe(true);
    expect(JSON.stringify(calls)).not.toContain(bobToken);
  });

  it('I5/O4: /metrics, the per-server /healthz and the status page need an admin principal', async () => {
    const serve = await gateway(config());
    const base = serve.url.replace(/\/mcp$/, '');
    const alice = { authorization: `Bearer ${await as.token(ALICE)}` };
    const bob = { authorization: `Bearer ${await as.token(BOB)}` };
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: bob })).status).toBe(403);
    expect((await fetch(`${base}/metrics`, { headers: alice })).status).toBe(200);
    const health = async (headers: Record<string, string>) =>
      (await (await fetch(`${base}/healthz`, { headers })).json()) as { status: string; servers?: unknown[] };
    expect((await health(bob)).servers).toBeUndefined();
    expect((await health(alice)).servers).toHaveLength(1);
    expect((await fetch(`${base}/status/data`, { headers: bob })).status).toBe(403);
    expect((await fetch(`${base}/status/data`, { headers: alice })).status).toBe(200);
    expect((await fetch(`${base}/status`)).status).toBe(401);
  });

  it('I4: a tool that needs a scope the token lacks gets 403 insufficient_scope naming it', async () => {
    const serve = await gateway(config());
    const narrow = await as.token(ALICE, { scope: 'mcp' });
    const answer = await post(serve.url, narrow, 'c_add');
    expect(answer.status).toBe(403);
    expect(answer.challenge).toContain('error="insufficient_scope"');
    expect(answer.challenge).toContain('scope="tools.write"');
    // O1, O4: the refusal is a call's end: in recent calls (with its principal) and the metrics.
    const admin = { headers: { authorization: `Bearer ${await as.token(ALICE)}` } };
    const base = serve.url.replace(/\/mcp$/, '');
    const calls = (
      (await (await fetch(`${base}/status/data`, admin)).json()) as {
        calls: { tool: string; outcome: string; principal?: string }[];
      }
    ).calls;
    expect(calls).toContainEqual(
      expect.objectContaining({ tool: 'c_add', outcome: 'access_denied', principal: `${as.issuer}#alice` }),
    );
    const metrics = await (await fetch(`${base}/metrics`, admin)).text();
    expect(metrics).toMatch(
      /mcp_normalizer_tool_calls_total\{[^}]*tool="add"[^}]*outcome="access_denied"[^}]*\} 1/,
    );
    const wide = await legacyClient(serve.url, await as.token(ALICE));
    const added = await wide.client.callTool({ name: 'c_add', arguments: { a: 1, b: 2 } });
    expect(added.structuredContent).toMatchObject({ results: { sum: 3 } });
  });

  it('I5: principal B presenting A’s session id is told the session does not exist', async () => {
    const serve = await gateway(config());
    const alice = await legacyClient(serve.url, await as.token(ALICE));
    const sessionId = alice.transport.sessionId as string;
    const response = await fetch(serve.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await as.token(BOB)}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(404);
    // Alice's own session goes on.
    expect(names((await alice.client.listTools()).tools)).toContain('c_hit');
  });

  it('I5/Q3: principal B presenting A’s requestState is refused as input_state_mismatch; A’s own answer completes the call', async () => {
    const serve = await gateway(config([], [fixtureEntry('c', 'counter'), fixtureEntry('g', 'asking')]));
    const host = async (client: AuthClient) => {
      const c = modernHost(answersAs('modern'), stops);
      await c.connect(
        new StreamableHTTPClientTransport(new URL(serve.url), {
          requestInit: bearer(await as.token(client)),
        }),
      );
      return c;
    };
    const alice = await host(ALICE);
    const bob = await host(BOB);
    const params = { name: 'g_ask', arguments: { question: 'Name?' } };
    const Lenient = z.looseObject({});
    const round = (await alice.request({ method: 'tools/call', params }, Lenient, {
      allowInputRequired: true,
    })) as {
      requestState?: string;
      inputRequests?: Record<string, unknown>;
    };
    expect(typeof round.requestState).toBe('string');
    const reply = {
      ...params,
      inputResponses: Object.fromEntries(
        Object.keys(round.inputRequests ?? {}).map((key) => [
          key,
          { action: 'accept', content: { name: 'x' } },
        ]),
      ),
      requestState: round.requestState,
    };
    const stolen = envelope(
      await bob.request({ method: 'tools/call', params: reply } as never, Lenient, {
        allowInputRequired: true,
      }),
    );
    expect(stolen).toMatchObject({
      error_type: 'invalid_arguments',
      error_data: { reason: 'input_state_mismatch' },
    });
    // The round stays Alice's: her own answer (a decline) completes the parked call.
    const declined = {
      ...reply,
      inputResponses: Object.fromEntries(
        Object.keys(round.inputRequests ?? {}).map((key) => [key, { action: 'decline' }]),
      ),
    };
    const own = envelope(
      await alice.request({ method: 'tools/call', params: declined } as never, Lenient, {
        allowInputRequired: true,
      }),
    );
    expect(own.error_type, JSON.stringify(own)).toBeUndefined();
    expect(own.results).toMatchObject({ action: 'decline' });
  });

  it('I3: prompts follow the same rules: listed and got only where the caller’s rule allows', async () => {
    const serve = await gateway(
      config([], [fixtureEntry('c', 'counter'), fixtureEntry('n', 'prompts-resources')]),
    );
    const alice = await legacyClient(serve.url, await as.token(ALICE));
    const bob = await modernClient(serve.url, await as.token(BOB));
    expect(names((await alice.client.listPrompts()).prompts)).toEqual(['n_greeting', 'n_summarize']);
    expect((await bob.listPrompts()).prompts).toEqual([]);
    const got = await alice.client.getPrompt({ name: 'n_greeting' });
    expect(got.messages.length).toBeGreaterThan(0);
    await expect(bob.getPrompt({ name: 'n_greeting' })).rejects.toThrow(/not allowed for this caller/);
  });

  it('I3: resources and templates follow the rule’s own resources globs: listed, read and completed only where allowed', async () => {
    const serve = await gateway(
      config([], [fixtureEntry('c', 'counter'), fixtureEntry('n', 'prompts-resources')]),
    );
    const alice = await legacyClient(serve.url, await as.token(ALICE));
    const bob = await modernClient(serve.url, await as.token(BOB));
    const uris = (list: { uri: string }[]): string[] => list.map((resource) => resource.uri).sort();
    expect(uris((await alice.client.listResources()).resources)).toEqual(['n+notes://readme']);
    expect((await alice.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'n+notes://note/{name}',
    ]);
    expect((await alice.client.readResource({ uri: 'n+notes://readme' })).contents).toHaveLength(1);
    await expect(alice.client.readResource({ uri: 'n+notes://logo.png' })).rejects.toThrow(
      /Resource "n\+notes:\/\/logo.png" is not allowed for this caller/,
    );
    // Bob's rule names no resources: none listed, none read, no template completed.
    expect((await bob.listResources()).resources).toEqual([]);
    expect((await bob.listResourceTemplates()).resourceTemplates).toEqual([]);
    await expect(bob.readResource({ uri: 'n+notes://readme' })).rejects.toThrow(
      /not allowed for this caller/,
    );
    await expect(
      bob.complete({
        ref: { type: 'ref/resource', uri: 'n+notes://note/{name}' },
        argument: { name: 'name', value: '' },
      }),
    ).rejects.toThrow(/not allowed for this caller/);
  });

  it('I5/F7: principal B cannot read a file link made for A (2026, no session); A can', async () => {
    const serve = await gateway(
      config(['output:', '  files: resource'], [fixtureEntry('c', 'counter'), fixtureEntry('g', 'files')]),
    );
    const alice = await modernClient(serve.url, await as.token(ALICE));
    const bob = await modernClient(serve.url, await as.token(BOB));
    const answer = await alice.callTool({ name: 'g_big_image', arguments: {} });
    const link = (answer.content as { type: string; uri?: string }[]).find(
      (block) => block.type === 'resource_link',
    );
    expect(link?.uri).toMatch(/^mcp-normalizer:\/\/files\//);
    await expect(bob.readResource({ uri: link?.uri ?? '' })).rejects.toThrow(/belongs to another/);
    expect((await alice.readResource({ uri: link?.uri ?? '' })).contents).toHaveLength(1);
  });

  it('I3: in search mode a caller finds only what it may call, and call_tool cannot reach the rest', async () => {
    const serve = await gateway(config(['expose: search']));
    const bob = await modernClient(serve.url, await as.token(BOB));
    const found = await bob.callTool({
      name: 'search_tools',
      arguments: { query: 'calls hit count delete add' },
    });
    const tools = (found.structuredContent as { results: { tools: { name: string }[] } }).results.tools;
    expect(names(tools)).toEqual(['c_count']);
    const reached = await bob.callTool({ name: 'call_tool', arguments: { name: 'c_hit', arguments: {} } });
    expect(reached.structuredContent).toMatchObject({ meta_data: { error_type: 'access_denied' } });
  });

  it('P10: two 2026 clients with their own tokens each get their own copy of a per-session server', async () => {
    const serve = await gateway(config([], [fixtureEntry('g', 'stateful', { instances: 'per_session' })]));
    const alice = await modernClient(serve.url, await as.token(ALICE));
    const bob = await modernClient(serve.url, await as.token(BOB));
    await alice.callTool({ name: 'g_set_dir', arguments: { dir: '/alice' } });
    await bob.callTool({ name: 'g_set_dir', arguments: { dir: '/bob' } });
    const status = async (client: Client) =>
      (
        (await client.callTool({ name: 'g_status', arguments: {} })).structuredContent as {
          results: { dir: string };
        }
      ).results.dir;
    expect(await status(alice)).toBe('/alice');
    expect(await status(bob)).toBe('/bob');
  });

  it('I2: JWTs whose sub is a static token’s name reach none of its session, file links or copies', async () => {
    const file = writeConfig(
      [
        'output:',
        '  files: resource',
        'http:',
        `  token: ${HTTP_TOKEN}`,
        '  auth:',
        `    issuer: ${as.issuer}`,
        `    audience: ${RESOURCE}`,
        '    required_scopes: [mcp]',
        `    tokens: { robot: { token: ${ROBOT_TOKEN} } }`,
        'access:',
        "  - principals: ['*']",
        "    allow: ['*']",
        'servers:',
        fixtureEntry('g', 'files'),
        fixtureEntry('s', 'stateful', { instances: 'per_session' }),
      ].join('\n'),
    );
    const serve = await gateway(file);
    // The static http.token (token:token) opens a 2025 session; a JWT whose sub is "token" presents it.
    const owner = await legacyClient(serve.url, HTTP_TOKEN);
    const crossed = await fetch(serve.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await as.token(TOKEN_NAMED)}`,
        'mcp-session-id': owner.transport.sessionId as string,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(crossed.status).toBe(404);

    // The static robot (2026, no session) makes a file link and has its own copy of `s`.
    const robot = await modernClient(serve.url, ROBOT_TOKEN);
    const named = await modernClient(serve.url, await as.token(ROBOT_NAMED));
    const answer = await robot.callTool({ name: 'g_big_image', arguments: {} });
    const link = (answer.content as { type: string; uri?: string }[]).find(
      (block) => block.type === 'resource_link',
    );
    await expect(named.readResource({ uri: link?.uri ?? '' })).rejects.toThrow(/belongs to another/);
    expect((await robot.readResource({ uri: link?.uri ?? '' })).contents).toHaveLength(1);
    await robot.callTool({ name: 's_set_dir', arguments: { dir: '/robot' } });
    const dir = async (client: Client) =>
      (
        (await client.callTool({ name: 's_status', arguments: {} })).structuredContent as {
          results: { dir: string };
        }
      ).results.dir;
    expect(await dir(named)).not.toBe('/robot');
    expect(await dir(robot)).toBe('/robot');
  });

  it('I1: a silent issuer (accepts, never answers): 50 JWT requests at once are each answered 500 server_error', async () => {
    const silent = createNetServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    stops.push(() => {
      silent.close();
    });
    const issuer = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const serve = await gateway(
      writeConfig(
        ['http:', '  auth:', `    issuer: ${issuer}`, 'servers:', fixtureEntry('c', 'counter')].join('\n'),
      ),
    );
    // A JWT-shaped token: checking it needs the issuer's keys, which never come.
    const token = `${Buffer.from('{"alg":"ES256","kid":"k"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2ln`;
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(serve.url, token)));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 50 }, () => 500));
    expect(answers[0]?.body).toContain('server_error');
  }, 30_000);
});
