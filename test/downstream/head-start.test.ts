/**
 * P1's head start against real child processes: `serve` spawns its stdio servers before the pool
 * has loaded, and the pool takes each child over; a child that failed or exited is not used, so
 * the server starts and fails exactly as it would have; children never taken are stopped (P5).
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { StdioTransportConfig } from '../../src/config/types.js';
import { Pool } from '../../src/downstream/pool.js';
import { startEarly } from '../../src/app/head-start.js';
import { spawnChild } from '../../src/downstream/spawn.js';
import { transportFactory } from '../../src/downstream/transport.js';
import { fixtureConfig, serverConfig, stdioTransport } from '../helpers/fixtures.js';
import { captureLogger } from '../helpers/memory-servers.js';

const pools: Pool[] = [];
const spawned: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close({ graceMs: 0 })));
  for (const child of spawned.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** spawnChild, keeping each child for the test. */
const watched = (spec: Parameters<typeof spawnChild>[0]): ChildProcess => {
  const child = spawnChild(spec);
  spawned.push(child);
  return child;
};

const exited = (child: ChildProcess): Promise<unknown> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit');

describe('the head start (P1)', () => {
  it('P1: the pool takes over the child spawned ahead of it: the server starts once, and serves', async () => {
    const server = fixtureConfig('raw', 'probe-exit', { protocol: 'legacy' });
    const early = startEarly([server], { spawn: watched, max: 8 });
    const [child] = spawned;
    await once(child!, 'spawn');
    const { logger, lines } = captureLogger();
    const pool = new Pool({ servers: [server], logger, transports: transportFactory(early) });
    pools.push(pool);
    await pool.start();
    expect(early.waiting).toBe(0);
    expect(await pool.callTool('raw', 'echo', { text: 'hi' })).toMatchObject({ success: true });
    // probe-exit writes `start <pid>` on every start: one start, by the child spawned early.
    const starts = lines.filter((line) => /^start \d+$/.test(String(line['msg'])));
    expect(starts.map((line) => line['msg'])).toEqual([`start ${child!.pid}`]);
  });

  it('P1, P4: a child that exited before the pool came is not used: the server is started again and fails as it always did', async () => {
    const command = "console.error('fatal: no API key'); process.exit(3)";
    const server = serverConfig('dies', stdioTransport(process.execPath, ['-e', command]), {
      protocol: 'legacy',
    });
    const early = startEarly([server], { spawn: watched, max: 8 });
    await exited(spawned[0]!);
    const { logger } = captureLogger();
    const pool = new Pool({ servers: [server], logger, transports: transportFactory(early) });
    pools.push(pool);
    await pool.start();
    expect(spawned).toHaveLength(1);
    const [snapshot] = pool.snapshot();
    expect(snapshot?.state).not.toBe('ready');
    expect(snapshot?.lastError).toMatch(/exited with code 3; its stderr ended with: fatal: no API key/);
  });

  it('P1: a command that cannot be spawned raises nothing early; the pool reports it as always', async () => {
    const server = serverConfig('missing', stdioTransport('no-such-command-mcp-normalizer', []), {
      protocol: 'legacy',
    });
    const early = startEarly([server], { spawn: watched, max: 8 });
    await new Promise<void>((resolve) => spawned[0]!.once('error', () => resolve()));
    const { logger } = captureLogger();
    const pool = new Pool({ servers: [server], logger, transports: transportFactory(early) });
    pools.push(pool);
    await pool.start();
    expect(pool.snapshot()[0]?.lastError).toMatch(
      /cannot start "no-such-command-mcp-normalizer": no such file/,
    );
  });

  it('P1: only enabled stdio servers are spawned early', () => {
    const http = serverConfig('remote', {
      type: 'streamable-http',
      url: 'http://127.0.0.1:9/mcp',
      headers: {},
    } as never);
    const off = serverConfig('off', stdioTransport(process.execPath, ['-e', '']), { enabled: false });
    const early = startEarly([http, off], { spawn: watched, max: 8 });
    expect(spawned).toHaveLength(0);
    expect(early.waiting).toBe(0);
  });

  it('P1: no more servers are spawned early than there are cores to spare; the pool spawns the rest', async () => {
    const servers = [0, 1, 2].map((i) =>
      fixtureConfig(`s${i}`, 'probe-exit', { protocol: 'legacy', prefix: `s${i}` }),
    );
    const early = startEarly(servers, { spawn: watched, max: 2 });
    expect(spawned).toHaveLength(2);
    await Promise.all(spawned.map((child) => once(child, 'spawn')));
    const { logger, lines } = captureLogger();
    const pool = new Pool({ servers, logger, transports: transportFactory(early) });
    pools.push(pool);
    await pool.start();
    for (const name of ['s0', 's1', 's2'])
      expect(await pool.callTool(name, 'echo', { text: name })).toMatchObject({ success: true });
    // Three servers, three starts: two children taken over, one spawned by the pool.
    const starts = lines.filter((line) => /^start \d+$/.test(String(line['msg'])));
    expect(starts).toHaveLength(3);
    expect(starts.map((line) => line['msg'])).toEqual(
      expect.arrayContaining(spawned.map((child) => `start ${child.pid}`)),
    );
  });

  it('P5: release() stops every child not taken, and nothing is handed out after it', async () => {
    const server = fixtureConfig('raw', 'probe-exit', { protocol: 'legacy' });
    const early = startEarly([server], { spawn: watched, max: 8 });
    const [child] = spawned;
    await once(child!, 'spawn');
    early.release();
    await exited(child!);
    expect(early.waiting).toBe(0);
    expect(early.take(server.transport as StdioTransportConfig)).toBeUndefined();
  });
});
