/**
 * Process behaviour of `mcp-normalizer serve` over stdio, with raw JSON-RPC lines: stdout carries
 * only protocol lines even next to a noisy downstream (L1, P6), and SIGTERM or the end of stdin
 * stops it with exit code 0 and no child process left behind (P5).
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, childEnv, CLI, descendants, fixtureEntry, writeConfig } from './cli-process.js';
import { ROOT } from '../helpers/fixtures.js';

interface RawServe {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  /** Every stdout line so far. */
  lines(): string[];
  send(message: Record<string, unknown>): void;
  /** Resolves with the response to request `id`. */
  response(id: number): Promise<Record<string, unknown>>;
}

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function serveRaw(config: string, extraArgs: readonly string[] = [], readStderr = true): RawServe {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config, ...extraArgs], {
    cwd: ROOT,
    env: childEnv(),
  });
  running.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let buffer = '';
  const lines: string[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      lines.push(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  });
  if (readStderr) child.stderr.resume();
  return {
    child,
    exited,
    lines: () => [...lines],
    send: (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`),
    async response(id) {
      await expect
        .poll(() => lines.some((line) => line.includes(`"id":${id}`)), { timeout: 15_000 })
        .toBe(true);
      return JSON.parse(lines.find((line) => line.includes(`"id":${id}`)) ?? '{}') as Record<string, unknown>;
    },
  };
}

async function initialize(serve: RawServe): Promise<void> {
  serve.send({
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    },
  });
  await serve.response(1);
  serve.send({ method: 'notifications/initialized' });
  // tools/list waits for the first connection round: afterwards every child is running.
  serve.send({ id: 2, method: 'tools/list' });
  await serve.response(2);
}

const config = () =>
  writeConfig(['servers:', fixtureEntry('noisy', 'noisy'), fixtureEntry('counter', 'counter')].join('\n'));

describe('serve over stdio as a process', () => {
  it('L1/P6: stdout carries only JSON-RPC lines, even with a downstream that floods stderr and stdout', async () => {
    const serve = serveRaw(config());
    await initialize(serve);
    serve.send({ id: 3, method: 'tools/call', params: { name: 'noisy_flood', arguments: { lines: 200 } } });
    const flood = await serve.response(3);
    expect(flood['result']).toMatchObject({ isError: false });
    serve.send({ id: 4, method: 'tools/call', params: { name: 'counter_hit', arguments: {} } });
    await serve.response(4);
    const lines = serve.lines();
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    }
    serve.child.kill('SIGTERM');
    await serve.exited;
  });

  it('P5: SIGTERM stops serve with exit code 0 and leaves no child process', async () => {
    const serve = serveRaw(config());
    await initialize(serve);
    const children = descendants(serve.child.pid as number);
    expect(children.length).toBeGreaterThanOrEqual(2);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    await expect.poll(() => children.filter(alive), { timeout: 10_000 }).toEqual([]);
  });

  it('P5: the end of stdin stops serve with exit code 0 and leaves no child process', async () => {
    const serve = serveRaw(config());
    await initialize(serve);
    const children = descendants(serve.child.pid as number);
    expect(children.length).toBeGreaterThanOrEqual(2);
    serve.child.stdin.end();
    expect(await serve.exited).toBe(0);
    await expect.poll(() => children.filter(alive), { timeout: 10_000 }).toEqual([]);
  });

  it('P5: a call in flight at SIGTERM still gets its answer before the exit', async () => {
    const serve = serveRaw(writeConfig(['servers:', fixtureEntry('slow', 'slow')].join('\n')));
    await initialize(serve);
    serve.send({
      id: 3,
      method: 'tools/call',
      params: {
        name: 'slow_slow',
        arguments: { duration_ms: 600, interval_ms: 50 },
        _meta: { progressToken: 'p' },
      },
    });
    // The first progress line proves the call is running downstream.
    await expect
      .poll(() => serve.lines().some((line) => line.includes('notifications/progress')), { timeout: 10_000 })
      .toBe(true);
    serve.child.kill('SIGTERM');
    const answer = await serve.response(3);
    expect(answer['result']).toMatchObject({ isError: false });
    expect(await serve.exited).toBe(0);
  });

  // Gemini CLI's `mcp list` closes its end of our stderr and then our stdin. A host that had not
  // read our stderr left log lines waiting for the full pipe at exit, and the exit's flush wrote
  // them again every 100 ms for ever (EAGAIN while held, EPIPE once closed), every child alive.
  it.each([
    ['closes our stderr, then stdin', 'close', 0],
    ['closes our stderr, then stdin 500 ms later', 'close', 500],
    ['never reads our stderr and closes stdin', 'hold', 0],
  ] as const)(
    'P5: a host that %s sees serve exit within 10 s and no child left',
    async (_how, stderr, pauseMs) => {
      const file = writeConfig(
        [
          'servers:',
          fixtureEntry('noisy', 'noisy'),
          fixtureEntry('counter', 'counter'),
          fixtureEntry('echo', 'echo'),
        ].join('\n'),
      );
      // trace logs every call's arguments: the calls below fill the 64 KiB pipe nobody reads.
      const serve = serveRaw(file, ['--log-level', 'trace'], false);
      await initialize(serve);
      const children = descendants(serve.child.pid as number);
      expect(children.length).toBeGreaterThanOrEqual(3);
      const text = 'x'.repeat(2_000);
      for (let id = 10; id < 110; id++)
        serve.send({ id, method: 'tools/call', params: { name: 'echo_echo', arguments: { text } } });
      await serve.response(109);
      if (stderr === 'close') serve.child.stderr.destroy();
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      serve.child.stdin.end();
      const exited = await Promise.race([
        serve.exited.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000)),
      ]);
      expect(exited).toBe(true);
      await expect.poll(() => children.filter(alive), { timeout: 10_000 }).toEqual([]);
    },
  );
});
