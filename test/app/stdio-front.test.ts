/**
 * The stdio front (app/stdio-front.ts, E1's refinement): which openings it answers before the
 * gateway has loaded, that each answer is exactly the one the server gives, and the hand-over:
 * the server reads every byte again and the opening is answered once. In-memory streams; the
 * process-level path (the CLI's own front) is in test/e2e/fast-start.test.ts.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { createProxy } from '../../src/app/proxy.js';
import { loadInTurns, openingAnswer, openStdioFront, pingId } from '../../src/app/stdio-front.js';
import { PACKAGE_NAME, packageVersion } from '../../src/app/version.js';
import { LEGACY_PROTOCOL_VERSIONS } from '../../src/upstream/capabilities.js';
import type { StdioFront } from '../../src/upstream/stdio.js';
import { memoryConfig, runtimeConfig } from '../helpers/fixtures.js';
import { captureLogger, echoServer, MemoryTransports } from '../helpers/memory-servers.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

const SERVER_INFO = { name: PACKAGE_NAME, version: packageVersion() };
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'host', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};
const discover = (id: unknown, meta: Record<string, unknown> = ENVELOPE) => ({
  jsonrpc: '2.0',
  id,
  method: 'server/discover',
  params: { _meta: meta },
});
const initialize = (id: unknown, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'host', version: '1' },
    ...params,
  },
});

/** Openings the front answers itself. */
const ANSWERED: [string, Record<string, unknown>][] = [
  ['a 2026 server/discover', discover(1)],
  [
    'a 2026 server/discover with a string id and a titled client',
    discover('d', {
      ...ENVELOPE,
      'io.modelcontextprotocol/clientInfo': { name: 'h', version: '2', title: 'Host' },
    }),
  ],
  ...LEGACY_PROTOCOL_VERSIONS.map((version): [string, Record<string, unknown>] => [
    `a 2025 initialize asking for ${version}`,
    initialize(7, { protocolVersion: version }),
  ]),
  ['a 2025 initialize asking for an unknown revision', initialize(8, { protocolVersion: '2024-01-01' })],
  [
    "Claude Code 2.1.332's probe",
    discover('server-discover-probe-1', {
      ...ENVELOPE,
      'io.modelcontextprotocol/clientInfo': {
        name: 'claude-code',
        title: 'Claude Code',
        version: '2.1.332',
        description: "Anthropic's agentic coding tool",
        websiteUrl: 'https://claude.com/claude-code',
      },
      'io.modelcontextprotocol/clientCapabilities': {
        roots: { listChanged: true },
        elicitation: { form: {}, url: {} },
      },
    }),
  ],
  [
    'a 2025 initialize with an icon and a field the schema drops',
    initialize(9, {
      clientInfo: {
        name: 'h',
        version: '1',
        icons: [{ src: 'https://h/i.png', sizes: ['48x48'], theme: 'dark' }],
        extra: 1,
      },
    }),
  ],
  [
    'a 2025 initialize with client capabilities',
    initialize('i', { capabilities: { roots: { listChanged: true }, sampling: {} } }),
  ],
];

/** Openings the front leaves to the server (it answers them otherwise, or with an error). */
const LEFT: [string, unknown][] = [
  ['server/discover without the envelope', { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }],
  [
    'server/discover for another revision',
    discover(1, { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }),
  ],
  [
    'server/discover without client capabilities',
    discover(1, {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'h', version: '1' },
    }),
  ],
  [
    'server/discover with a non-object capability',
    discover(1, { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { sampling: 1 } }),
  ],
  ['initialize with the 2026 envelope', initialize(1, { _meta: ENVELOPE })],
  [
    'initialize without clientInfo',
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {} },
    },
  ],
  [
    'initialize with icons that are no list',
    initialize(1, { clientInfo: { name: 'h', version: '1', icons: 5 } }),
  ],
  [
    'initialize with an icon of another theme',
    initialize(1, { clientInfo: { name: 'h', version: '1', icons: [{ src: 'x', theme: 'blue' }] } }),
  ],
  [
    'initialize with a number for a title',
    initialize(1, { clientInfo: { name: 'h', version: '1', title: 5 } }),
  ],
  ['initialize with id 1.5', initialize(1.5)],
  ['initialize with id null', initialize(null)],
  ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
  ['tools/list', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ['JSON-RPC 1.0', { ...initialize(1), jsonrpc: '1.0' }],
  ['an array', [initialize(1)]],
];

const ping = (id: unknown, rest: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'ping',
  ...rest,
});

/** Pings the front answers after a 2025 opening. */
const PINGS_ANSWERED: [string, Record<string, unknown>][] = [
  ['a ping', ping(2)],
  ['a ping with a string id', ping('p')],
  ['a ping with empty params', ping(3, { params: {} })],
];

/** Pings the front leaves to the server. */
const PINGS_LEFT: [string, unknown][] = [
  ['a ping with a progress token', ping(2, { params: { _meta: { progressToken: 1 } } })],
  ['a ping with the 2026 envelope', ping(2, { params: { _meta: ENVELOPE } })],
  ['a ping with params that are no object', ping(2, { params: [] })],
  ['a ping with id 1.5', ping(1.5)],
  ['a ping with id null', ping(null)],
  ['a ping notification', { jsonrpc: '2.0', method: 'ping' }],
  ['a ping with a field JSON-RPC does not have', ping(2, { extra: 1 })],
  ['a ping of JSON-RPC 1.0', { ...ping(2), jsonrpc: '1.0' }],
];

/** The gateway served on in-memory stdio; `front` when given; `lines` is every line written. */
async function gateway(front?: (stdin: PassThrough, stdout: PassThrough) => StdioFront) {
  const { logger } = captureLogger();
  const proxy = createProxy(runtimeConfig([memoryConfig('e')]), {
    logger,
    pool: { transports: new MemoryTransports({ e: echoServer }) },
  });
  stops.push(() => proxy.stop({ graceMs: 0 }));
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      lines.push(JSON.parse(buffered.slice(0, end)) as Record<string, unknown>);
      buffered = buffered.slice(end + 1);
    }
  });
  const opened = front?.(stdin, stdout);
  return {
    stdin,
    lines,
    serve: async () => {
      await proxy.start();
      return proxy.serveStdio(opened !== undefined ? { front: opened, stdout } : { stdin, stdout });
    },
  };
}

const answerOf = (lines: Record<string, unknown>[], id: unknown) =>
  expect.poll(() => lines.find((line) => line['id'] === id), { timeout: 5_000 }).toBeDefined();

describe('the stdio front', () => {
  it("E1: its 2025 revisions are the SDK's, newest first", () => {
    expect(LEGACY_PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
    expect(LEGACY_PROTOCOL_VERSIONS[0]).toBe(LATEST_PROTOCOL_VERSION);
  });

  it.each(ANSWERED)('E1: answers %s exactly as the server does', async (_name, opening) => {
    const ours = openingAnswer(opening, SERVER_INFO);
    expect(ours).toBeDefined();
    const { stdin, lines, serve } = await gateway();
    await serve();
    stdin.write(`${JSON.stringify(opening)}\n`);
    await answerOf(lines, opening['id']);
    expect(lines).toEqual([ours]);
  });

  it.each(LEFT)('E1: leaves %s to the server', (_name, opening) => {
    expect(openingAnswer(opening, SERVER_INFO)).toBeUndefined();
  });

  it('E1: answers the opening before the server is up; the server reads every byte and answers the rest, the opening once', async () => {
    const { stdin, lines, serve } = await gateway((input, output) =>
      openStdioFront(input, output, SERVER_INFO),
    );
    // Split mid-line: the front waits for the whole first line.
    const opening = `${JSON.stringify(initialize(1))}\n`;
    stdin.write(opening.slice(0, 20));
    stdin.write(opening.slice(20));
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    await answerOf(lines, 1);
    expect(lines).toEqual([openingAnswer(initialize(1), SERVER_INFO)]);
    await serve();
    await answerOf(lines, 2);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' })}\n`);
    await answerOf(lines, 3);
    expect(lines.map((line) => line['id'])).toEqual([1, 2, 3]);
    expect((lines[1]?.['result'] as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'e_echo',
    ]);
  });

  it.each(PINGS_ANSWERED)(
    'E1: answers %s after a 2025 opening exactly as the server does',
    async (_n, message) => {
      const id = pingId(message);
      expect(id).toBe(message['id']);
      const { stdin, lines, serve } = await gateway();
      await serve();
      stdin.write(`${JSON.stringify(initialize(1))}\n`);
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      stdin.write(`${JSON.stringify(message)}\n`);
      await answerOf(lines, id);
      expect(lines.find((line) => line['id'] === id)).toEqual({ jsonrpc: '2.0', id, result: {} });
    },
  );

  it.each(PINGS_LEFT)('E1: leaves %s to the server', (_name, message) => {
    expect(pingId(message)).toBeUndefined();
  });

  it('E1: after a 2025 opening, answers each ping before the server is up; the server answers the rest, and each ping once', async () => {
    const { stdin, lines, serve } = await gateway((input, output) =>
      openStdioFront(input, output, SERVER_INFO),
    );
    stdin.write(`${JSON.stringify(initialize(1))}\n`);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    // Split mid-line, and two lines in one chunk.
    const first = `${JSON.stringify(ping(2))}\n`;
    stdin.write(first.slice(0, 9));
    stdin.write(
      `${first.slice(9)}${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' })}\n${JSON.stringify(ping('p'))}\n`,
    );
    await answerOf(lines, 'p');
    expect(lines).toEqual([
      openingAnswer(initialize(1), SERVER_INFO),
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 'p', result: {} },
    ]);
    await serve();
    await answerOf(lines, 3);
    stdin.write(`${JSON.stringify(ping(4))}\n`);
    await answerOf(lines, 4);
    expect(lines.map((line) => line['id'])).toEqual([1, 2, 'p', 3, 4]);
  });

  it('E1: a request that reuses the id of a ping the front answered gets its own answer', async () => {
    const { stdin, lines, serve } = await gateway((input, output) =>
      openStdioFront(input, output, SERVER_INFO),
    );
    stdin.write(`${JSON.stringify(initialize(1))}\n`);
    stdin.write(`${JSON.stringify(ping(2))}\n`);
    await answerOf(lines, 2);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    await serve();
    await expect.poll(() => lines.length, { timeout: 5_000 }).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines).toHaveLength(3);
    expect(lines[1]).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect((lines[2]?.['result'] as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'e_echo',
    ]);
  });

  it("E1: the server's answer to a ping the front answered is dropped only when it is `{}`, once per ping", async () => {
    const stdin = new PassThrough();
    const front = openStdioFront(stdin, new PassThrough(), SERVER_INFO);
    stdin.write(`${JSON.stringify(initialize(1))}\n${JSON.stringify(ping(2))}\n${JSON.stringify(ping(2))}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    // Answered in whatever order the server writes them: another request that reused the id first.
    expect(front.answered(2, { tools: [] })).toBe(false);
    expect(front.answered(2, {})).toBe(true);
    expect(front.answered(2, {})).toBe(true);
    expect(front.answered(2, {})).toBe(false);
    expect(front.answered(1, { protocolVersion: '2025-06-18' })).toBe(true);
    expect(front.answered(1, { protocolVersion: '2025-06-18' })).toBe(false);
  });

  it('E1: pings after a 2026 opening, or after a line longer than it reads, wait for the server, which answers each once', async () => {
    const long = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'x'.repeat(70_000) } })}\n`;
    for (const [opening, before] of [
      [discover(1), []],
      // A long line held in parts: past 64 KiB without its end, the front stops reading.
      [initialize(1), [long.slice(0, 66_000), long.slice(66_000)]],
    ] as const) {
      const { stdin, lines, serve } = await gateway((input, output) =>
        openStdioFront(input, output, SERVER_INFO),
      );
      stdin.write(`${JSON.stringify(opening)}\n`);
      for (const part of before) stdin.write(part);
      stdin.write(`${JSON.stringify(ping(2))}\n`);
      await answerOf(lines, 1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines.map((line) => line['id'])).toEqual([1]);
      await serve();
      await answerOf(lines, 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines.map((line) => line['id'])).toEqual([1, 2]);
    }
  });

  it('E1: a long line held whole is passed over, and the pings after it are answered', async () => {
    const { stdin, lines, serve } = await gateway((input, output) =>
      openStdioFront(input, output, SERVER_INFO),
    );
    stdin.write(`${JSON.stringify(initialize(1))}\n`);
    const reason = 'x'.repeat(70_000);
    stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason } })}\n${JSON.stringify(ping(2))}\n`,
    );
    await answerOf(lines, 2);
    await serve();
    stdin.write(`${JSON.stringify(ping(3))}\n`);
    await answerOf(lines, 3);
    expect(lines.map((line) => line['id'])).toEqual([1, 2, 3]);
  });

  it('E1: an opening it leaves is answered by the server, once', async () => {
    const { stdin, lines, serve } = await gateway((input, output) =>
      openStdioFront(input, output, SERVER_INFO),
    );
    stdin.write(`${JSON.stringify(initialize(1, { _meta: ENVELOPE }))}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([]);
    await serve();
    await answerOf(lines, 1);
    expect(lines).toHaveLength(1);
  });

  it('P5: input that ends before the server is up still reaches it, and its end ends the session', async () => {
    const { stdin, lines, serve } = await gateway((input, output) =>
      openStdioFront(input, output, SERVER_INFO),
    );
    stdin.write(`${JSON.stringify(discover(1))}\n`);
    stdin.end(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } })}\n`,
    );
    await answerOf(lines, 1);
    const handle = await serve();
    await answerOf(lines, 2);
    await handle.ended;
    expect(lines.map((line) => line['id'])).toEqual([1, 2]);
  });
});

const line = (message: unknown): string => `${JSON.stringify(message)}\n`;
const INITIALIZED = line({ jsonrpc: '2.0', method: 'notifications/initialized' });

/** Input a host wrote and then ended, before the server took over: nothing waits for an answer. */
const LEFT_WITH_NOTHING_TO_ANSWER: [string, string[]][] = [
  ['nothing at all', []],
  [
    'a 2025 opening, its notification and pings',
    [line(initialize(1)), INITIALIZED, line(ping(2)), line(ping(3))],
  ],
  ['a 2026 opening alone', [line(discover(1))]],
  ['a 2025 opening and empty lines', [line(initialize(1)), '\n', '\r\n']],
  ['a notification alone', [INITIALIZED]],
];

/** Input that waits for the server however early the host left. */
const LEFT_WITH_A_QUESTION: [string, string[]][] = [
  [
    'a request after the opening',
    [line(initialize(1)), INITIALIZED, line({ jsonrpc: '2.0', id: 2, method: 'tools/list' })],
  ],
  [
    'a request after a 2026 opening',
    [line(discover(1)), line({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } })],
  ],
  ['an opening left to the server', [line(initialize(1, { _meta: ENVELOPE }))]],
  ['a line that is not JSON', [line(initialize(1)), 'hello\n']],
  ['a blank line of spaces', [line(initialize(1)), '   \n']],
  ['a last line without its end', [line(initialize(1)), '{"jsonrpc":"2.0","id":2,"method":"ping"}']],
  ['a first line without its end', ['{"jsonrpc":"2.0","id":1']],
  ['a ping after a 2026 opening', [line(discover(1)), line(ping(2))]],
  ['a line longer than the front reads', [line(initialize(1)), `${' '.repeat(70_000)}${INITIALIZED}`]],
];

describe('a host that leaves before the server takes over (P5)', () => {
  /** Writes `parts`, ends the input, and tells whether the front says the host left. */
  async function leaves(parts: string[]): Promise<boolean> {
    const stdin = new PassThrough();
    const front = openStdioFront(stdin, new PassThrough(), SERVER_INFO);
    let left = false;
    void front.hostLeft.then(() => (left = true));
    for (const part of parts) stdin.write(part);
    stdin.end();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(front.hostHasLeft).toBe(left);
    return left;
  }

  it.each(LEFT_WITH_NOTHING_TO_ANSWER)('P5: after %s, the front says the host left', async (_name, parts) => {
    expect(await leaves(parts)).toBe(true);
  });

  it.each(LEFT_WITH_A_QUESTION)('P5: after %s, the input waits for the server', async (_name, parts) => {
    expect(await leaves(parts)).toBe(false);
  });

  it("P5: once the server has taken the input, its end is the server's", async () => {
    const stdin = new PassThrough();
    const front = openStdioFront(stdin, new PassThrough(), SERVER_INFO);
    let left = false;
    void front.hostLeft.then(() => (left = true));
    stdin.write(line(initialize(1)));
    const input = front.input();
    input.resume();
    stdin.end();
    await once(input, 'end');
    expect([left, front.hostHasLeft]).toEqual([false, false]);
  });
});

/** Two ends of a Unix socket on loopback: bytes written to `write` are read from `read`. */
async function socketPair(): Promise<{ read: Socket; write: Socket; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-front-'));
  const path = join(dir, 's');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const write = createConnection(path);
  await new Promise<void>((resolve) => write.once('connect', resolve));
  const read = await accepted;
  return {
    read,
    write,
    close() {
      read.destroy();
      write.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('loading in turns (the front answers between steps)', () => {
  /** A front on in-memory streams, and `steps` that record that they ran (`act` runs in the step). */
  function setup(act: Partial<Record<number, (stdin: PassThrough) => void>> = {}) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const front = openStdioFront(stdin, stdout, SERVER_INFO);
    const ran: number[] = [];
    const steps = [0, 1, 2].map((n) => async () => {
      ran.push(n);
      act[n]?.(stdin);
    });
    return { stdin, stdout, front, ran, steps };
  }
  const opening = `${JSON.stringify(discover(1))}\n`;

  it('P1: an opening already written is answered before any step loads, and no step runs', async () => {
    const { stdin, front, ran, steps } = setup();
    stdin.write(opening);
    await loadInTurns(steps, front);
    expect(ran).toEqual([]);
    expect(front.answeredAtMs).toBeDefined();
  });

  it('P1: an opening that arrives during a step is answered at the next turn; the later steps are left to the caller', async () => {
    // The bytes come in as I/O does, in a later turn of the loop than the step that is running.
    const { front, ran, steps, stdout } = setup({ 1: (stdin) => setImmediate(() => stdin.write(opening)) });
    await loadInTurns(steps, front);
    expect(ran).toEqual([0, 1]);
    expect(front.openingSeen).toBe(true);
    expect(JSON.parse(String(stdout.read()))).toEqual(openingAnswer(discover(1), SERVER_INFO));
  });

  it('P1: an opening that became readable while a step ended in a poll callback is read before the next step', async () => {
    // A real socket pair: the bytes reach the front through the kernel and the loop's poll, as a
    // host's do. The step ends in a file read's completion (a poll callback) and the opening
    // becomes readable after that poll: an immediate queued there runs before the next poll.
    const pair = await socketPair();
    const front = openStdioFront(pair.read, new PassThrough(), SERVER_INFO);
    const ran: number[] = [];
    const steps = [0, 1].map((n) => async () => {
      ran.push(n);
      if (n > 0) return;
      await readFile(import.meta.filename);
      pair.write.write(opening);
    });
    try {
      await loadInTurns(steps, front);
      expect(ran).toEqual([0]);
      expect(front.answeredAtMs).toBeDefined();
    } finally {
      pair.close();
    }
  });

  it('P1: with no opening yet, every step runs, in order', async () => {
    const { front, ran, steps } = setup();
    await loadInTurns(steps, front);
    expect(ran).toEqual([0, 1, 2]);
    expect(front.openingSeen).toBe(false);
  });

  it('P1: an opening the front leaves to the server, or an input that ends, also ends the steps', async () => {
    const left = setup({
      0: (stdin) =>
        setImmediate(() => stdin.write(`${JSON.stringify(initialize(1, { _meta: ENVELOPE }))}\n`)),
    });
    await loadInTurns(left.steps, left.front);
    expect(left.ran).toEqual([0]);
    expect(left.front.answeredAtMs).toBeUndefined();
    const ended = setup({ 0: (stdin) => setImmediate(() => stdin.end()) });
    await loadInTurns(ended.steps, ended.front);
    expect(ended.ran).toEqual([0]);
  });
});
