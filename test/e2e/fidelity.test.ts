/**
 * Nothing lost between a server and the model (issue 12), end to end with real processes: the
 * gateway as a child, hosts that speak raw JSON-RPC or the SDK, fixture servers that write what
 * real servers write.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/fixtures.js';
import { describeWith } from '../helpers/peers.js';
import { python, PYTHON_FIXTURES, pythonEntry } from '../helpers/python.js';
import { childEnv, CLI, connectStdio, fixtureEntry, writeConfig } from './cli-process.js';

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

type Message = { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown };

/**
 * A host on raw JSON-RPC lines: sees every message in the order the gateway wrote it, unlike the
 * SDK clients, which run a notification's handler a microtask after a response in the same read.
 */
async function rawHost(file: string) {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file], { cwd: ROOT, env: childEnv() });
  children.push(child);
  const seen: Message[] = [];
  const waiting = new Map<number, (message: Message) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Message;
    seen.push(message);
    if (message.method === undefined && message.id !== undefined) waiting.get(message.id)?.(message);
  });
  let next = 0;
  const request = (method: string, params: Record<string, unknown>): Promise<Message> => {
    const id = ++next;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return new Promise((resolve) => waiting.set(id, resolve));
  };
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw-host', version: '1.0.0' },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return { request, seen };
}

describe('progress written in one chunk with its result', () => {
  it('P9: both progress notifications reach the host before the result, every run', async () => {
    const host = await rawHost(
      writeConfig(['servers:', fixtureEntry('raw', 'probe-exit', { protocol: 'legacy' })].join('\n')),
    );
    for (let run = 0; run < 20; run++) {
      const token = `run-${run}`;
      const from = host.seen.length;
      const result = await host.request('tools/call', {
        name: 'raw_progress',
        arguments: {},
        _meta: { progressToken: token },
      });
      expect(JSON.stringify(result.result)).toContain('done');
      const answered = host.seen.indexOf(result);
      const progress = host.seen
        .slice(from, answered)
        .filter((m) => m.method === 'notifications/progress' && m.params?.['progressToken'] === token)
        .map((m) => m.params?.['progress']);
      expect(progress, token).toEqual([1, 2]);
    }
  });
});

describeWith(['python'])('a FastMCP (Python) server behind the gateway, a Python MCP host in front', () => {
  it("P9: a FastMCP tool's two progress reports reach the host in 20 of 20 calls", async () => {
    const file = writeConfig(['servers:', pythonEntry('fast', 'fastmcp_server.py')].join('\n'));
    const { stdout } = await promisify(execFile)(
      python(),
      [join(PYTHON_FIXTURES, 'progress_client.py'), process.execPath, CLI, file, 'fast_steps', '20'],
      { cwd: ROOT, env: childEnv(), timeout: 60_000 },
    );
    const seen = JSON.parse(stdout) as number[][];
    expect(seen).toHaveLength(20);
    expect(seen.filter((values) => values.join() === '1,2')).toHaveLength(20);
  });
});

describe("a tool's own outputSchema through the gateway", () => {
  it("T14: the exposed tool's envelope schema types results with the tool's schema, and an SDK client validating against it accepts the answer", async () => {
    const session = await connectStdio(
      writeConfig(
        ['output:', '  advertise_schema: true', 'servers:', fixtureEntry('s', 'structured')].join('\n'),
      ),
    );
    try {
      const tools = (await session.client.listTools()).tools;
      const weather = tools.find((tool) => tool.name === 's_weather');
      const results = (weather?.outputSchema?.properties as Record<string, { anyOf?: unknown[] }>)['results'];
      expect(JSON.stringify(results?.anyOf?.[0])).toContain('temperature_c');
      // The SDK client checks structuredContent against the advertised outputSchema on callTool.
      const answer = await session.client.callTool({ name: 's_weather', arguments: { city: 'Porto' } });
      expect(answer.isError).not.toBe(true);
      expect((answer.structuredContent as { results: { city: string } }).results.city).toBe('Porto');
    } finally {
      await session.client.close();
    }
  });
});

describeWith(['python'])('a FastMCP (Python) tool that returns a string', () => {
  it("N12/T14: the value is the string itself, FastMCP's wrap_result marker travels in _meta, and the typed schema validates", async () => {
    const session = await connectStdio(
      writeConfig(
        ['output:', '  advertise_schema: true', 'servers:', pythonEntry('fast', 'fastmcp_server.py')].join(
          '\n',
        ),
      ),
    );
    try {
      await session.client.listTools();
      // callTool: the SDK client validates structuredContent against the advertised outputSchema.
      const answer = await session.client.callTool({ name: 'fast_greet', arguments: { name: 'Ada' } });
      expect(answer.isError).not.toBe(true);
      expect((answer.structuredContent as { results: unknown }).results).toBe('Hello, Ada!');
      expect(answer._meta).toMatchObject({ fastmcp: { wrap_result: true } });
    } finally {
      await session.client.close();
    }
  });
});

describe('the lean catalog', () => {
  it("T6: by default no exposed tool carries an outputSchema, its own or the envelope's", async () => {
    const session = await connectStdio(writeConfig(['servers:', fixtureEntry('s', 'structured')].join('\n')));
    try {
      const { tools } = await session.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools) expect(tool.outputSchema, tool.name).toBeUndefined();
      // The SDK client then has nothing to validate against, and the envelope still arrives.
      const answer = await session.client.callTool({ name: 's_weather', arguments: {} });
      expect((answer.structuredContent as { results: { city: string } }).results.city).toBe('Lisbon');
    } finally {
      await session.client.close();
    }
  });
});
