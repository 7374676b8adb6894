/**
 * U1: a burst of idle connections never takes every file descriptor. `serve --http` under
 * `prlimit --nofile=256`, 400 raw connections that send nothing: the gateway closes the oldest
 * idle ones past its budget, and a real client connecting after the burst is answered (before,
 * with the process out of descriptors, libuv accepted and at once closed every new connection
 * until the 10 s header timeout freed some: the client's connect failed).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionBudget } from '../../src/upstream/http-sockets.js';
import { childEnv, CLI, fixtureEntry, writeConfig } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('file descriptors', () => {
  it.each([
    ['Max open files            256                  256                  files', 120],
    ['Max open files            1024                 524288               files', 696],
    ['Max open files            100                  100                  files', 16],
    ['Max open files            unlimited            unlimited            files', Infinity],
  ])('U1: the connection budget of the limit line %j is %d', (line, budget) => {
    const dir = mkdtempSync(join(tmpdir(), 'limits-'));
    const file = join(dir, 'limits');
    writeFileSync(
      file,
      `Limit                     Soft Limit           Hard Limit           Units\n${line}\n`,
    );
    expect(connectionBudget(file)).toBe(budget);
  });

  it('U1: under ulimit -n 256, 400 idle connections do not keep a real client out', async () => {
    const file = writeConfig(['servers:', fixtureEntry('c', 'counter')].join('\n'));
    const child = spawn(
      'prlimit',
      ['--nofile=256:256', process.execPath, CLI, 'serve', '--http', '--port', '0', '--config', file],
      { env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    cleanup.push(() => child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no endpoint:\n${stderr}`)), 20_000);
      child.stderr.on('data', () => {
        const found = /MCP endpoint[^:]*:\s*(http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
        if (found !== undefined) {
          clearTimeout(timer);
          resolve(found);
        }
      });
    });
    const { port } = new URL(url);
    const sockets: Socket[] = [];
    cleanup.push(() => sockets.forEach((socket) => socket.destroy()));
    await Promise.all(
      Array.from(
        { length: 400 },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect(Number(port), '127.0.0.1', () => resolve());
            socket.on('error', () => resolve());
            socket.on('close', () => resolve());
            sockets.push(socket);
          }),
      ),
    );
    const client = new Client({ name: 'e2e-after-burst', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanup.push(() => client.close());
    const result = await client.callTool({ name: 'c_hit', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(stderr).toContain('too many HTTP connections');
    expect(stderr).not.toContain('EMFILE');
  }, 40_000);
});
