/**
 * End to end over Streamable HTTP: `mcp-normalizer serve --http` as a child process on
 * config/default.yaml (U4), an SDK client over HTTP, /healthz, the token, and a clean SIGTERM.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServe } from './cli-process.js';
import { alive, DEFAULT_CONFIG, descendants, fixtureEntry, serveHttp, writeConfig } from './cli-process.js';

const serving: HttpServe[] = [];
afterEach(() => {
  for (const serve of serving.splice(0)) if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
});

async function start(env: Record<string, string> = {}): Promise<HttpServe> {
  const serve = await serveHttp(DEFAULT_CONFIG, env);
  serving.push(serve);
  return serve;
}

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'e2e-http', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe('e2e over Streamable HTTP on config/default.yaml', () => {
  it('U4: serve --http prints where to connect, the health URL and the exposed-tool table, and serves /healthz', async () => {
    const serve = await start();
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(serve.stderr()).toMatch(/TOOL\s+SERVER\s+DOWNSTREAM/);
    expect(serve.stderr()).toContain('annotated_delete_file');
    const res = await fetch(serve.healthUrl);
    expect(res.status).toBe(200);
    const health = (await res.json()) as {
      status: string;
      servers: { name: string; state: string; tools: number }[];
    };
    expect(health.status).toBe('ok');
    expect(health.servers.map((server) => server.name)).toEqual([
      'structured',
      'text',
      'files',
      'inband',
      'errors',
      'annotated',
      'slow',
      'notes',
    ]);
    for (const server of health.servers) {
      expect(server.state).toBe('ready');
      expect(server.tools).toBeGreaterThan(0);
    }
  });

  it('U1: an SDK client lists and calls the tools over HTTP, and SIGTERM then exits 0 with no child left', async () => {
    const serve = await start();
    const client = await connect(serve.url);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(7);
    const result = await client.request(
      { method: 'tools/call', params: { name: 'slow_echo', arguments: { text: 'over http' } } },
      CallToolResultSchema,
    );
    expect(result.structuredContent).toMatchObject({ results: 'over http' });
    await client.close();
    const children = descendants(serve.child.pid as number);
    expect(children.length).toBeGreaterThanOrEqual(7);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    await expect.poll(() => children.filter(alive), { timeout: 10_000 }).toEqual([]);
  });

  it('U2: with MCP_NORMALIZER_TOKEN set, requests without the token get 401 and with it they are served; /healthz shows only its status without it', async () => {
    const serve = await start({ MCP_NORMALIZER_TOKEN: 'e2e-secret' });
    const bare = await fetch(serve.healthUrl);
    expect([bare.status, await bare.json()]).toEqual([200, { status: 'ok' }]);
    expect((await fetch(serve.url, { method: 'POST', body: '{}' })).status).toBe(401);
    await expect(connect(serve.url)).rejects.toThrow();
    const client = await connect(serve.url, 'e2e-secret');
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    // L2: the interpolated token never appears in the log.
    expect(serve.stderr()).not.toContain('e2e-secret');
  });
});

describe('bounded sessions, as a process', () => {
  it('U1: with http.max_sessions 3, five clients that initialize and vanish leave three sessions: the oldest ids get 404', async () => {
    const serve = await serveHttp(
      writeConfig(['http:', '  max_sessions: 3', 'servers:', fixtureEntry('echo', 'echo')].join('\n')),
    );
    try {
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await fetch(serve.url, { method: 'POST', headers, body: init });
        expect(res.status).toBe(200);
        ids.push(String(res.headers.get('mcp-session-id')));
        await res.text();
      }
      const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      const status = async (id: string) =>
        (
          await fetch(serve.url, {
            method: 'POST',
            headers: { ...headers, 'mcp-session-id': id },
            body: list,
          })
        ).status;
      expect(await status(ids[0] as string)).toBe(404);
      expect(await status(ids[1] as string)).toBe(404);
      expect(await status(ids[4] as string)).toBe(200);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
