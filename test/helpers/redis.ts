/**
 * A real Redis for the tests that share state between replicas (issue 48): Debian's
 * `redis-server` on a free port of 127.0.0.1, nothing saved to disk, stopped by the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { peerPath } from './peers.js';

/** A free port of 127.0.0.1 (taken and given back). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A running redis-server and its URL. */
export interface RedisPeer {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts redis-server (it must be installed: `describeWith(['redis-server'])`), on `port` (an
 * earlier one's, to restart it empty) or a free one.
 */
export async function startRedis(port?: number): Promise<RedisPeer> {
  port ??= await freePort();
  const child = spawn(
    peerPath('redis-server') ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${String(code)}:\n${output}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/**
 * Waits, when the fixed rate-limit window of `windowMs` (aligned to the epoch) ends within
 * `marginMs`, until the next one began: a test's calls then all fall in one window.
 */
export async function awayFromWindowEnd(windowMs: number, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
