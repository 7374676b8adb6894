/**
 * P1, E1, T10 as a host sees them: the gateway answers `server/discover` and `initialize` before
 * any downstream is up, lists what is ready, and tells a host that listed when more arrives; a
 * server that never finishes starting holds nothing back. The downstreams here start when the
 * test says so (the echo fixture's `--start-after=<file>`), so no test waits on a clock.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer, isAlive, ROOT } from '../helpers/fixtures.js';
import { childEnv, CLI, fixtureEntry, serveStdio, writeConfig } from './cli-process.js';

const running: ChildProcessWithoutNullStreams[] = [];
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  // Ended as a host ends it (stdin closed), so that the gateway stops its servers (P5): a
  // SIGKILLed gateway left its gated servers polling for ever, on the cores of later tests.
  await Promise.all(
    running.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.stdin.end();
      const bound = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(bound);
    }),
  );
});

/** A config of `count` echo servers that start once their gate file exists, plus `extra` lines. */
function gated(count: number, extra: string[] = []): { file: string; open(i: number): void } {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-gates-'));
  const gate = (i: number): string => join(dir, `gate-${i}`);
  const servers = Array.from({ length: count }, (_, i) =>
    fixtureEntry(`s${i}`, 'echo', { protocol: 'legacy' }).replace(
      /args: \[(.*)\]/,
      (_m, args: string) => `args: [${args}, ${JSON.stringify(`--start-after=${gate(i)}`)}]`,
    ),
  );
  return {
    file: writeConfig(['servers:', ...servers, ...extra].join('\n')),
    open: (i) => writeFileSync(gate(i), ''),
  };
}

/** `serve` over stdio spoken to in raw JSON-RPC lines. */
function raw(
  file: string,
  args: string[] = [],
): {
  send(message: Record<string, unknown>): void;
  next(match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Every message written so far, answered ones included. */
  readonly all: Record<string, unknown>[];
  readonly stderr: () => string;
} {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file, ...args], {
    cwd: ROOT,
    env: childEnv(),
  });
  running.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const seen: Record<string, unknown>[] = [];
  const all: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, end)) as Record<string, unknown>;
      seen.push(message);
      all.push(message);
      buffer = buffer.slice(end + 1);
    }
  });
  return {
    all,
    stderr: () => stderr,
    send: (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`),
    async next(match) {
      await expect.poll(() => seen.some(match), { timeout: 15_000 }).toBe(true);
      const index = seen.findIndex(match);
      return seen.splice(index, 1)[0] as Record<string, unknown>;
    },
  };
}

/** A 2025 host's `initialize` params, as every raw exchange here sends them. */
const INITIALIZE_PARAMS = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'raw', version: '1' },
};

const id = (n: number) => (message: Record<string, unknown>) => message['id'] === n;
const names = (message: Record<string, unknown>): string[] =>
  ((message['result'] as { tools: { name: string }[] }).tools ?? []).map((tool) => tool.name);

/**
 * A config of two servers that never start; the shell of each writes its pid to a file first
 * (`exec` keeps that pid: the server itself). `started()` reads the pids written so far.
 */
function neverStartingWithPids(): { file: string; started(): number[] } {
  const pids = join(mkdtempSync(join(tmpdir(), 'mcp-normalizer-pids-')), 'pids');
  const { command, args } = fixtureServer('echo', ['--start-after=/nonexistent/gate']);
  const line = `echo $$ >> ${JSON.stringify(pids)}; exec ${[command, ...args].map((a) => JSON.stringify(a)).join(' ')}`;
  const servers = [0, 1].map((i) => `  s${i}:\n    command: sh\n    args: [-c, ${JSON.stringify(line)}]`);
  return {
    file: writeConfig(['servers:', ...servers].join('\n')),
    started: () => (existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').map(Number) : []),
  };
}

/**
 * `serve` on `file` with `messages` written at once and its input ended, as a pipe does; resolves
 * at its exit with its code, every message it wrote, and what it logged.
 */
async function piped(
  file: string,
  messages: Record<string, unknown>[],
  args: string[] = [],
): Promise<{ code: number | null; written: Record<string, unknown>[]; stderr: string }> {
  const gateway = spawn(process.execPath, [CLI, 'serve', '--config', file, ...args], {
    cwd: ROOT,
    env: childEnv(),
  });
  running.push(gateway);
  let out = '';
  let stderr = '';
  gateway.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  gateway.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  gateway.stdin.end(
    messages.map((message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`).join(''),
  );
  const [code] = (await once(gateway, 'exit')) as [number | null];
  const written = out
    .trim()
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => JSON.parse(text) as Record<string, unknown>);
  return { code, written, stderr };
}

describe('a gateway whose servers are slow to start', { timeout: 60_000 }, () => {
  it('P1/E1: server/discover and initialize are answered while all 8 servers are still starting; tools follow by list_changed (T10)', async () => {
    const { file, open } = gated(8);
    const host = raw(file);
    host.send({
      id: 1,
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
    expect((await host.next(id(1)))['result']).toMatchObject({ supportedVersions: expect.any(Array) });
    host.send({
      id: 2,
      method: 'initialize',
      params: INITIALIZE_PARAMS,
    });
    expect((await host.next(id(2)))['result']).toMatchObject({ serverInfo: { name: 'mcp-normalizer' } });
    host.send({ method: 'notifications/initialized' });
    host.send({ id: 3, method: 'tools/list' });
    expect(names(await host.next(id(3)))).toEqual([]);
    open(0);
    await host.next((message) => message['method'] === 'notifications/tools/list_changed');
    host.send({ id: 4, method: 'tools/list' });
    expect(names(await host.next(id(4)))).toEqual(['s0_echo']);
    // A call to a server still starting waits for it, and is answered once it is up.
    host.send({ id: 5, method: 'tools/call', params: { name: 's5_echo', arguments: { text: 'waited' } } });
    open(5);
    expect((await host.next(id(5)))['result']).toMatchObject({ structuredContent: { results: 'waited' } });
  });

  it.each([['server/discover'], ['initialize']] as const)(
    "E1: the stdio front answers a host's %s while the gateway loads; the gateway answers the rest, that one once",
    async (method) => {
      const { file } = gated(1);
      const host = raw(file, ['--log-level', 'debug']);
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      if (method === 'server/discover') {
        host.send({ id: 1, method, params: { _meta: meta } });
        host.send({ id: 2, method: 'tools/list', params: { _meta: meta } });
      } else {
        host.send({
          id: 1,
          method,
          params: INITIALIZE_PARAMS,
        });
        host.send({ method: 'notifications/initialized' });
        host.send({ id: 2, method: 'tools/list' });
      }
      expect((await host.next(id(1)))['result']).toMatchObject({
        capabilities: { tools: { listChanged: true } },
      });
      expect(names(await host.next(id(2)))).toEqual([]);
      await expect.poll(() => host.stderr(), { timeout: 15_000 }).toMatch(/opening answered while loading/);
      host.send({
        id: 3,
        method: 'ping',
        ...(method === 'server/discover' ? { params: { _meta: meta } } : {}),
      });
      await host.next(id(3));
      expect(host.all.filter((message) => message['id'] === 1)).toHaveLength(1);
    },
  );

  it.each([['2025'], ['2026']] as const)(
    'P1: beside a server that never finishes starting, a %s host lists and calls the working one at once',
    async (era) => {
      const { file } = gated(1, [fixtureEntry('ok', 'echo', { protocol: 'legacy' })]);
      const client =
        era === '2026'
          ? new Client(
              { name: 'host', version: '1' },
              { versionNegotiation: { mode: { pin: '2026-07-28' } } },
            )
          : new Client({ name: 'host', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
      await client.connect(new StdioClientTransport(serveStdio(file)));
      cleanup.push(() => client.close());
      await expect
        .poll(async () => (await client.listTools()).tools.map((tool) => tool.name), { timeout: 10_000 })
        .toEqual(['ok_echo']);
      const answer = await client.callTool({ name: 'ok_echo', arguments: { text: 'served' } });
      expect(answer.structuredContent).toMatchObject({ results: 'served' });
    },
  );

  it('P1, P5: a host that leaves while one server is still starting gets no error lines for servers the shutdown ended', async () => {
    const { file } = gated(1, [fixtureEntry('ok', 'echo', { protocol: 'legacy' })]);
    const host = raw(file, ['--log-level', 'debug']);
    host.send({
      id: 1,
      method: 'initialize',
      params: INITIALIZE_PARAMS,
    });
    await host.next(id(1));
    host.send({ method: 'notifications/initialized' });
    await expect.poll(host.stderr, { timeout: 15_000 }).toContain('"msg":"downstream ready"');
    const gateway = running.at(-1) as ChildProcessWithoutNullStreams;
    const exited = once(gateway, 'exit');
    gateway.stdin.end();
    expect(((await exited) as [number | null])[0]).toBe(0);
    const lines = host
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const messages = lines.map((line) => (JSON.parse(line) as { msg?: string }).msg);
    expect(messages).toContain('shut down cleanly');
    // Before: "downstream failed to start" at error level for both servers, the ready one
    // included, and "first connection round over" with 0 of 2 ready.
    expect(messages.filter((msg) => msg === 'downstream failed to start')).toEqual([]);
    expect(messages.filter((msg) => msg === 'first connection round over')).toEqual([]);
  });

  it('P1, P5: a host that leaves while the gateway loads leaves no server behind, spawned ahead as they were', async () => {
    const { file, started } = neverStartingWithPids();
    // A question the front leaves to the server: the gateway loads and serves it, then stops.
    const { code } = await piped(file, [{ id: 1, method: 'tools/list' }]);
    expect(code).toBe(0);
    const pids = started();
    // The head start spawned one before the gateway looked at its input (the pool spawns the
    // other just before the shutdown, which may stop its shell before it writes its pid)...
    expect(pids.length).toBeGreaterThanOrEqual(1);
    // ...and however far the load got before the host left, neither is left running.
    await expect.poll(() => pids.filter(isAlive), { timeout: 10_000 }).toEqual([]);
  });
});

describe('a host that leaves while the gateway loads (P5)', { timeout: 60_000 }, () => {
  it('P5/E1: a host that asked only what the front answers ends it at once: nothing is started, nothing answered twice', async () => {
    const { file, started } = neverStartingWithPids();
    // A `mcp list`: the opening, its notification and a ping, all written before the gateway
    // has loaded, then the end.
    const { code, written, stderr } = await piped(
      file,
      [
        { id: 1, method: 'initialize', params: INITIALIZE_PARAMS },
        { method: 'notifications/initialized' },
        { id: 2, method: 'ping' },
      ],
      ['--log-level', 'info'],
    );
    expect(code).toBe(0);
    expect(written.map((answer) => answer['id'])).toEqual([1, 2]);
    expect(written[1]).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    const messages = stderr
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => (JSON.parse(text) as { msg?: string }).msg);
    expect(messages).toContain('the host left while the gateway loaded, with nothing to answer: stopping');
    // Before: the gateway loaded, served, started both servers, and shut them down.
    expect(messages).not.toContain('serving MCP on stdio');
    const pids = started();
    await expect.poll(() => pids.filter(isAlive), { timeout: 10_000 }).toEqual([]);
  });
});

describe("input that ends right after its requests, as a pipe's does (P5)", { timeout: 60_000 }, () => {
  it('P5: every request read before the end is answered, the calls with the shutdown refusal, and the gateway exits 0', async () => {
    const file = writeConfig(['servers:', fixtureEntry('e', 'echo', { protocol: 'legacy' })].join('\n'));
    const { code, written } = await piped(file, [
      { id: 1, method: 'initialize', params: INITIALIZE_PARAMS },
      { method: 'notifications/initialized' },
      { id: 2, method: 'tools/list' },
      { id: 3, method: 'tools/call', params: { name: 'e_echo', arguments: { text: 'x' } } },
      { id: 4, method: 'ping' },
    ]);
    expect(code).toBe(0);
    const answers = written.filter((message) => 'id' in message);
    // Before: 1 and 4 only; the list and the call were read, then dropped with the server.
    expect(answers.map((answer) => answer['id']).sort()).toEqual([1, 2, 3, 4]);
    const call = answers.find((answer) => answer['id'] === 3)?.['result'] as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(call.isError).toBe(true);
    expect(call.content[0]?.text).toContain('shutting down');
  });
});

describe(
  'the gated echo fixture these tests rely on (fixtures/servers/echo.ts, --start-after)',
  { timeout: 30_000 },
  () => {
    it('P5: it ends when its stdin ends before its gate opens, so a dead gateway leaves none behind', async () => {
      const { command, args } = fixtureServer('echo', ['--start-after=/nonexistent/gate']);
      const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
      cleanup.push(() => child.kill('SIGKILL'));
      await once(child, 'spawn');
      const exited = once(child, 'exit');
      child.stdin.end();
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    });

    it('P1: what it received before its gate opened is answered once it does', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-gate-'));
      const gate = join(dir, 'gate');
      const { command, args } = fixtureServer('echo', [`--start-after=${gate}`]);
      const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      cleanup.push(() => child.kill('SIGKILL'));
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
      // Written while the gate is shut (the fixture says so on stderr)...
      await expect.poll(() => err, { timeout: 10_000 }).toContain('waiting for');
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: INITIALIZE_PARAMS,
      };
      child.stdin.write(`${JSON.stringify(initialize)}\n`);
      writeFileSync(gate, '');
      // ...and answered once it opens.
      await expect.poll(() => out, { timeout: 10_000 }).toContain('\n');
      const answer = JSON.parse(out.split('\n')[0] ?? '') as {
        id?: unknown;
        result?: { serverInfo?: unknown };
      };
      expect(answer).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    });
  },
);
