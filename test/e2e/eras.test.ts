/**
 * Both protocol eras end to end (E1–E6), with real processes: `mcp-normalizer serve` as a child,
 * an SDK v2 client pinned to 2026-07-28 as the modern host (stdio and HTTP), and downstreams of
 * each era: an SDK v2 server that refuses 2025 (`legacy: 'reject'`, stdio and HTTP), SDK v1
 * servers (legacy only), and a raw server that exits on any request before `initialize`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer, ROOT as ROOT_DIR } from '../helpers/fixtures.js';
import type { HttpServe } from './cli-process.js';
import { childEnv, CLI, fixtureEntry, runCli, serveHttp, writeConfig } from './cli-process.js';

const MODERN = { mode: { pin: '2026-07-28' } } as const;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function config(format = 'results', extra = ''): string {
  return writeConfig(
    [
      'output:',
      `  format: ${format}`,
      'servers:',
      fixtureEntry('modern', 'modern'),
      fixtureEntry('legacy', 'slow'),
      extra,
    ].join('\n'),
  );
}

/** `serve` over stdio with a v2 client pinned to 2026-07-28; the gateway's stderr is collected. */
async function modernStdio(file: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--config', file],
    env: childEnv(),
    cwd: ROOT_DIR,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'e2e-modern', version: '1.0.0' }, { versionNegotiation: MODERN });
  await client.connect(transport);
  cleanup.push(() => client.close());
  // P1: the gateway answers before its servers are up; these tests want them all.
  await until(() => stderr.includes('first connection round over'), 20_000);
  return { client, stderr: () => stderr };
}

async function http(file: string): Promise<HttpServe> {
  const serve = await serveHttp(file);
  cleanup.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

async function modernHttp(url: string): Promise<Client> {
  const client = new Client({ name: 'e2e-modern', version: '1.0.0' }, { versionNegotiation: MODERN });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanup.push(() => client.close());
  return client;
}

/** Resolves once `probe()` is true, polling every 20 ms; rejects after `ms`. */
async function until(probe: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Host = { name: string; open: (file: string) => Promise<{ client: Client; stderr: () => string }> };
const HOSTS: Host[] = [
  { name: 'stdio', open: modernStdio },
  {
    name: 'Streamable HTTP',
    open: async (file) => {
      const serve = await http(file);
      return { client: await modernHttp(serve.url), stderr: serve.stderr };
    },
  },
];

describe.each(HOSTS)('a modern host (SDK v2 pinned to 2026-07-28) over $name', ({ open }) => {
  it('E1/E2: connects in the modern era and lists the tools in the same order twice', async () => {
    const { client } = await open(config());
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const first = await client.listTools();
    const second = await client.listTools();
    expect(first.tools.map((tool) => tool.name)).toContain('modern_echo');
    expect(first.tools.map((tool) => tool.name)).toContain('legacy_slow');
    expect(JSON.stringify(second.tools)).toBe(JSON.stringify(first.tools));
  });

  it.each([
    ['results', 'results'],
    ['result', 'success'],
    ['response', 'status'],
  ])('E1/F1: calls tools of both downstream eras in the %s format', async (format, key) => {
    const { client } = await open(config(format));
    const modern = await client.callTool({ name: 'modern_echo', arguments: { text: 'hi' } });
    const legacy = await client.callTool({ name: 'legacy_slow', arguments: { duration_ms: 10, steps: 1 } });
    for (const result of [modern, legacy]) {
      expect(result.isError).not.toBe(true);
      expect(Object.keys(result.structuredContent as object)).toContain(key);
      // E2: our identity only, never a downstream's.
      expect(result._meta?.['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'mcp-normalizer' });
    }
  });

  it('E3/P3: progress from a downstream reaches the modern host', async () => {
    const { client } = await open(config());
    const seen: number[] = [];
    const result = await client.callTool(
      { name: 'modern_slow', arguments: { duration_ms: 400 } },
      { onprogress: (progress) => seen.push(progress.progress) },
    );
    expect(result.isError).not.toBe(true);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('E3/P3: a cancelled call is cancelled at the modern downstream too', async () => {
    const { client, stderr } = await open(config());
    const controller = new AbortController();
    // Cancelled on the first progress: the call is then running at the downstream.
    const call = client.callTool(
      { name: 'modern_slow', arguments: { duration_ms: 20_000, text: 'tag-e3' } },
      { signal: controller.signal, onprogress: () => controller.abort('enough') },
    );
    await expect(call).rejects.toThrow();
    // The fixture writes `cancelled <text>` to its stderr, which the gateway logs (P6).
    await until(() => stderr().includes('cancelled tag-e3'));
  });

  it('E4/E6: a list change of a modern downstream reaches the modern host on its listen stream', async () => {
    const { client } = await open(config());
    const before = (await client.listTools()).tools.length;
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter.toolsListChanged).toBe(true);
    await client.callTool({ name: 'modern_grow', arguments: {} });
    await until(() => changed > 0);
    const after = (await client.listTools()).tools.map((tool) => tool.name);
    expect(after).toContain('modern_extra_1');
    expect(after.length).toBe(before + 1);
    await subscription.close();
  });
});

describe('upstream eras', () => {
  it('E2: two gateway processes with the same config list byte-identical tools', async () => {
    const file = config();
    const [a, b] = await Promise.all([modernStdio(file), modernStdio(file)]);
    const [listA, listB] = await Promise.all([a.client.listTools(), b.client.listTools()]);
    expect(JSON.stringify(listA.tools)).toBe(JSON.stringify(listB.tools));
  });

  it('E2: modern list answers carry cache hints', async () => {
    const { client } = await modernStdio(config());
    const result = await client.request({ method: 'tools/list', params: {} });
    expect(result).toMatchObject({ ttlMs: 10_000, cacheScope: 'public' });
  });

  it('E1: server/discover on stdin is answered while every downstream is still starting', async () => {
    // The only server never answers `initialize`: anything that waited for it would not answer.
    const file = writeConfig(
      [
        'servers:',
        '  mute:',
        `    command: ${JSON.stringify(process.execPath)}`,
        '    args: ["-e", "setInterval(() => {}, 1000)"]',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [CLI, 'serve', '--config', file], {
      cwd: ROOT_DIR,
      env: childEnv(),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    cleanup.push(() => child.kill('SIGKILL'));
    const answer = firstLine(child);
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      })}\n`,
    );
    const reply = JSON.parse(await answer) as { id: number; result: Record<string, unknown> };
    expect(reply.id).toBe(1);
    // E2: the raw modern answer, as the wire carries it.
    expect(reply.result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      resultType: 'complete',
      ttlMs: 10_000,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-normalizer' } },
    });
  });

  it('E1: over stdio, a probe answered in the modern era can still be followed by a 2025 initialize', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', config()], {
      cwd: ROOT_DIR,
      env: childEnv(),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    cleanup.push(() => child.kill('SIGKILL'));
    const replies = lines(child);
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } })}\n`,
    );
    expect(JSON.parse(await replies.next())).toMatchObject({
      id: 1,
      result: { supportedVersions: ['2026-07-28'] },
    });
    const initialize = {
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    expect(JSON.parse(await replies.next())).toMatchObject({
      id: 2,
      result: { protocolVersion: '2025-06-18', serverInfo: { name: 'mcp-normalizer' } },
    });
  });

  it('E1: a legacy host (SDK v1) on the same HTTP endpoint keeps its 2025 session', async () => {
    const serve = await http(config());
    const client = new LegacyClient({ name: 'e2e-legacy', version: '1.0.0' });
    const transport = new LegacyHttpTransport(new URL(serve.url));
    await client.connect(transport);
    cleanup.push(() => client.close());
    expect(transport.sessionId).toBeDefined();
    const result = await client.callTool({ name: 'modern_echo', arguments: { text: 'old host' } });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.structuredContent)).toContain('old host');
  });
});

/** The child's stdout lines, one promise at a time. */
function lines(child: ChildProcess): { next(): Promise<string> } {
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (let end = out.indexOf('\n'); end >= 0; end = out.indexOf('\n')) {
      const line = out.slice(0, end);
      out = out.slice(end + 1);
      const resolve = waiting.shift();
      if (resolve !== undefined) resolve(line);
      else queue.push(line);
    }
  });
  return {
    next: () => {
      const line = queue.shift();
      return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${String(code)} before answering`)));
  });
}

describe('downstream eras', () => {
  /** A modern HTTP downstream (SDK v2, `legacy: 'reject'`) on a free loopback port. */
  async function modernHttpServer(): Promise<string> {
    const { command, args } = fixtureServer('modern', ['--http=0']);
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    cleanup.push(() => child.kill('SIGKILL'));
    return new Promise((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => {
        err += chunk.toString('utf8');
        const url = /listening (\S+)/.exec(err)?.[1];
        if (url !== undefined) resolve(url);
      });
      child.once('exit', () => reject(new Error(`modern --http exited: ${err}`)));
    });
  }

  it('E5: a modern-only server (stdio and HTTP), a legacy-only one and one that exits on the probe all serve their tools; each era shows in check and /healthz', async () => {
    const url = await modernHttpServer();
    const file = writeConfig(
      [
        'servers:',
        fixtureEntry('modern', 'modern'),
        `  modernhttp:\n    url: ${url}`,
        fixtureEntry('legacy', 'echo'),
        fixtureEntry('rusty', 'probe-exit'),
      ].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/modern\s+ready\s+modern 2026-07-28\s+8/);
    expect(check.stdout).toMatch(/modernhttp\s+ready\s+modern 2026-07-28\s+8/);
    expect(check.stdout).toMatch(/legacy\s+ready\s+legacy 2025-\d\d-\d\d\s+1/);
    expect(check.stdout).toMatch(/rusty\s+ready\s+legacy 2025-06-18\s+3/);

    const serve = await http(file);
    const health = (await (await fetch(serve.healthUrl)).json()) as {
      servers: { name: string; era?: string; protocol_version?: string }[];
    };
    expect(Object.fromEntries(health.servers.map((s) => [s.name, s.era]))).toEqual({
      modern: 'modern',
      modernhttp: 'modern',
      legacy: 'legacy',
      rusty: 'legacy',
    });
    const client = await modernHttp(serve.url);
    for (const name of ['modern_echo', 'modernhttp_echo', 'legacy_echo', 'rusty_echo']) {
      const result = await client.callTool({ name, arguments: { text: `via ${name}` } });
      expect(result.isError, name).not.toBe(true);
      expect(JSON.stringify(result.structuredContent)).toContain(`via ${name}`);
    }
    // SEP-2243: the modern HTTP server refuses a call without its Mcp-Param-Region header.
    const regional = await client.callTool({ name: 'modernhttp_regional', arguments: { region: 'eu-west' } });
    expect(regional.isError, JSON.stringify(regional)).not.toBe(true);
    expect(JSON.stringify(regional.structuredContent)).toContain('"header":"eu-west"');
    // The server that exits on the probe was spawned twice (probe, then 2025 handshake), not in
    // a restart loop; its stderr lines reach the gateway's log (P6).
    expect(serve.stderr().match(/start \d+/g)).toHaveLength(2);
  });

  it('E5: protocol: legacy against a modern-only server, and a pin against a legacy-only one, fail with the reason', async () => {
    const file = writeConfig(
      [
        'servers:',
        fixtureEntry('modern', 'modern', { protocol: 'legacy', timeout_ms: 3000 }),
        fixtureEntry('legacy', 'echo', { protocol: '2026-07-28', timeout_ms: 3000 }),
      ].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    // Down, or already in its next attempt when the machine is slow enough for the backoff to end
    // before `check` prints (seen with the chaos bench beside the suite): the reason either way.
    expect(check.stdout).toMatch(/modern\s+(down|restarting)\s+.*Unsupported protocol version/);
    expect(check.stdout).toMatch(/legacy\s+(down|restarting)\s+.*(2026-07-28|negotiat)/i);
  });
});
