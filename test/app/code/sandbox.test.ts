/**
 * Issue 59: code mode's sandbox (app/code/sandbox.ts). A snippet calls tools through the bridge
 * it is given and returns what it joins; what it may not reach is not there; every bound stops
 * it with its kind, and the process is unharmed (the next run runs).
 */
import { describe, expect, it } from 'vitest';
import { runSnippet } from '../../../src/app/code/sandbox.js';
import {
  SandboxError,
  type BridgeAnswer,
  type SandboxLimits,
  type ToolBridge,
} from '../../../src/app/code/sandbox-types.js';

const LIMITS: SandboxLimits = {
  cpuMs: 200,
  wallMs: 2000,
  memoryBytes: 16 * 1024 * 1024,
  outputBytes: 64 * 1024,
  maxCalls: 10,
  maxInFlight: 4,
};

/** A bridge with two tools: echo (after a tick) and fail (a tool error). */
const calls: string[] = [];
async function bridge(name: string, args: unknown): Promise<BridgeAnswer> {
  calls.push(name);
  await new Promise((resolve) => setTimeout(resolve, 1));
  if (name === 'fail')
    return { ok: false, error: { type: 'access_denied', message: 'not yours', instruction: 'ask an admin' } };
  return { ok: true, value: { tool: name, args } };
}

async function failure(
  code: string,
  limits: Partial<SandboxLimits> = {},
  tools: ToolBridge = bridge,
): Promise<SandboxError> {
  const error = await runSnippet(code, tools, { ...LIMITS, ...limits }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(SandboxError);
  return error as SandboxError;
}

describe('code mode sandbox', () => {
  it('M2, M4: a snippet calls tools, in parallel too, joins what they return and logs', async () => {
    const run = await runSnippet(
      `const [a, b] = await Promise.all([tools.echo({ x: 1 }), tools.other({ y: 2 })]);
       const c = await tools.echo({ z: a.args.x + b.args.y });
       console.log('joined', c.args.z);
       return { a: a.tool, b: b.tool, z: c.args.z };`,
      bridge,
      LIMITS,
    );
    expect(run).toEqual({ value: { a: 'echo', b: 'other', z: 3 }, logs: ['joined 3'], calls: 3 });
  });

  it("M2: a tool's error is thrown with its error_type and instruction; caught, the snippet goes on", async () => {
    const caught = await runSnippet(
      `try { await tools.fail({}); } catch (e) { return [e.error_type, e.message, e.instruction]; }`,
      bridge,
      LIMITS,
    );
    expect(caught.value).toEqual(['access_denied', 'not yours', 'ask an admin']);
    const let_through = await failure('await tools.fail({});');
    expect(let_through).toMatchObject({
      kind: 'thrown',
      toolError: { type: 'access_denied', instruction: 'ask an admin' },
    });
  });

  it.each([
    ['require', 'return typeof require'],
    ['process', 'return typeof process'],
    ['fetch', 'return typeof fetch'],
    ['a socket or file module', 'return [typeof std, typeof os, typeof Deno, typeof Bun].join()'],
    ['the host global', "return Object.keys(globalThis).filter((key) => !key.startsWith('__')).join()"],
  ])('M3: %s is not there', async (_name, code) => {
    const { value } = await runSnippet(code, bridge, LIMITS);
    expect(String(value)).not.toMatch(/function|object/);
  });

  it.each([
    ['a loop without end', 'while (true) {}', {}, 'cpu'],
    [
      'memory without bound',
      'const a = []; while (true) a.push("x".repeat(4096));',
      { cpuMs: 5000 },
      'memory',
    ],
    ['an answer too large', 'return "x".repeat(100000);', {}, 'output'],
    [
      'logs too large',
      'for (let i = 0; i < 1000; i++) console.log("y".repeat(200)); return 1;',
      {},
      'output',
    ],
    ['too many calls', 'for (let i = 0; i < 11; i++) await tools.echo({ i });', {}, 'calls'],
    ['too many in flight', 'await Promise.all([1, 2, 3, 4, 5].map((i) => tools.echo({ i })));', {}, 'calls'],
    ['not JavaScript', 'return (;', {}, 'syntax'],
    ['a throw', 'throw new TypeError("mine")', {}, 'thrown'],
  ])('M3: %s stops the run with its kind', async (_name, code, limits, kind) => {
    const error = await failure(code, limits);
    expect(error.kind).toBe(kind);
    expect(error.message.length).toBeGreaterThan(10);
  });

  it('M3: a tool that never answers ends the run at its wall bound, with the bridge told', async () => {
    let aborted = false;
    const never = (_name: string, _args: unknown, signal: AbortSignal): Promise<BridgeAnswer> =>
      new Promise(() => signal.addEventListener('abort', () => (aborted = true)));
    const error = await failure('return await tools.slow({})', { wallMs: 100 }, never);
    expect(error.kind).toBe('wall');
    expect(aborted).toBe(true);
    // The process is unharmed: the next run runs.
    expect((await runSnippet('return 1 + 1', bridge, LIMITS)).value).toBe(2);
  });
});
