/**
 * C3: what a stdio child inherits. `spawn.ts` keeps its own copy of the SDK's safe default set
 * (the SDK's module loads the whole client bundle): the two must stay equal.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import type { StdioTransportConfig } from '../../src/config/types.js';
import { inheritedEnvironment, spawnSpec } from '../../src/downstream/spawn.js';
import { isAlive, ROOT, stdioTransport } from '../helpers/fixtures.js';

describe('a stdio child environment (C3)', () => {
  it("C3: a child inherits exactly the SDK's safe default set of our environment", () => {
    expect(inheritedEnvironment()).toEqual(getDefaultEnvironment());
  });

  it.each([
    ['kept', { PATH: '/bin', HOME: '/h', SECRET_TOKEN: 'x' }, { PATH: '/bin', HOME: '/h' }],
    ['a shell function left out', { PATH: '/bin', SHELL: '() { :; }' }, { PATH: '/bin' }],
    ['nothing set', {}, {}],
  ])('C3: inherited environment, %s', (_case, env, expected) => {
    if (process.platform === 'win32') return;
    expect(inheritedEnvironment(env)).toEqual(expected);
  });

  it('C3: the configured env wins over the inherited set', () => {
    const spec = spawnSpec({
      ...(stdioTransport('node', ['s.js']) as StdioTransportConfig),
      env: { PATH: '/only/this' },
    });
    expect(spec.env['PATH']).toBe('/only/this');
    expect(spec).toMatchObject({ command: 'node', args: ['s.js'] });
  });
});

/**
 * A stand-in for the gateway: spawns a server that never reads its stdin (so stdin closing does
 * not end it), prints its pid, then runs `then` (module code, `child` in scope).
 */
function standIn(then: string) {
  const script = `
    import { spawnChild, spawnSpec } from ${JSON.stringify(`${ROOT}/dist/src/downstream/spawn.js`)};
    const child = spawnChild(spawnSpec({ type: 'stdio', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1e9)'], env: {} }));
    child.once('spawn', () => { console.log(child.pid); ${then} });
    setInterval(() => {}, 1e9);
  `;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const pid = async (): Promise<number> => {
    for (let i = 0; i < 500 && !out.includes('\n'); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    return Number(out.split('\n')[0]);
  };
  return { parent, pid, out: () => out };
}

/** Waits (bounded: 1 s) for `pid` to be gone, then makes sure it is: nothing is left running. */
async function expectGone(pid: number): Promise<void> {
  try {
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(isAlive(pid)).toBe(false);
  } finally {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
}

describe('no child outlives the gateway (P5)', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'P5: a process that nothing else stops on %s still ends by it, and takes its children with it',
    async (signal) => {
      if (process.platform === 'win32') return;
      const { parent, pid } = standIn('');
      const child = await pid();
      expect(child).toBeGreaterThan(0);
      parent.kill(signal);
      const [code, by] = (await once(parent, 'exit')) as [number | null, NodeJS.Signals | null];
      expect([code, by]).toEqual([null, signal]);
      await expectGone(child);
    },
  );

  it('P5: a signal the process handles itself (the shutdown) is left to it', async () => {
    if (process.platform === 'win32') return;
    const { parent, pid, out } = standIn(
      `process.on('SIGTERM', () => { console.log('handled'); setTimeout(() => process.exit(0), 50); });`,
    );
    const child = await pid();
    parent.kill('SIGTERM');
    const [code] = (await once(parent, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(out()).toContain('handled');
    await expectGone(child);
  });

  it('P5: a process that dies of an uncaught error takes with it the children it spawned, even one that ignores its stdin', async () => {
    if (process.platform === 'win32') return;
    const { parent, pid } = standIn(`setImmediate(() => { throw new Error('crash'); });`);
    // It exits a moment after printing the pid: listen before reading it.
    const exited = once(parent, 'exit');
    const child = await pid();
    expect(child).toBeGreaterThan(0);
    const [code] = (await exited) as [number | null];
    expect(code).toBe(1);
    // The signal goes as the parent exits; its delivery may take a moment.
    await expectGone(child);
  });
});
