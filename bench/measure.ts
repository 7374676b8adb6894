/**
 * One batch of work against one target, timed with `performance.now()`. Every loop is bounded
 * in count and by the run's deadline; every call has a timeout.
 */
import { performance } from 'node:perf_hooks';
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { BIG_RESULT_BYTES } from './servers/echo-constants.js';
import type { Target } from './targets.js';

/** Per-request timeout: far above any healthy call, so only a hang trips it. */
const CALL_TIMEOUT_MS = 30_000;

/** Thrown when the run's time budget is spent: the bench stops rather than run on. */
export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/** Throws a DeadlineError once `deadline` (a performance.now() value) has passed. */
export function checkDeadline(deadline: number): void {
  if (performance.now() > deadline) throw new DeadlineError('bench time budget exceeded');
}

async function call(target: Target, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = await target.client.request(
    { method: 'tools/call', params: { name, arguments: args } },
    CallToolResultSchema,
    { timeout: CALL_TIMEOUT_MS },
  );
  if (result.isError === true) {
    throw new Error(`${target.spec.kind}: ${name} answered isError: ${JSON.stringify(result).slice(0, 300)}`);
  }
  return result;
}

/** One echo call through the target. */
export function echo(target: Target, i: number, tool = target.echoTool): Promise<CallToolResult> {
  return call(target, tool, { message: `m${i}` });
}

/**
 * Checks that the target answers correctly: an echo comes back holding the message (as the
 * text block for a plain server, inside the envelope for mcp-normalizer), the big result
 * carries at least its 1 MiB (when `checkBig`), and tools/list had every downstream tool. Returns problems.
 */
export async function verify(target: Target, expectedTools: number, checkBig = true): Promise<string[]> {
  const problems: string[] = [];
  if (target.toolCount < expectedTools) {
    problems.push(`tools/list gave ${target.toolCount} tools, expected ${expectedTools}`);
  }
  const marker = `bench-marker-${target.spec.kind}-${target.spec.wire}`;
  const answer = JSON.stringify(await call(target, target.echoTool, { message: marker }));
  if (!answer.includes(marker)) problems.push(`echo did not return the message: ${answer.slice(0, 200)}`);
  if (checkBig) {
    const big = JSON.stringify(await call(target, target.bigTool, {}));
    if (big.length < BIG_RESULT_BYTES)
      problems.push(`big result is ${big.length} characters, expected ≥ 1 MiB`);
  }
  return problems.map((problem) => `${target.spec.kind}/${target.spec.wire}: ${problem}`);
}

/** `count` sequential echo calls; each call's latency in µs. */
export async function echoLatencies(target: Target, count: number, deadline: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    if ((i & 63) === 0) checkDeadline(deadline);
    const start = performance.now();
    await echo(target, i);
    latencies.push((performance.now() - start) * 1000);
  }
  return latencies;
}

/**
 * `count` echo calls with `inFlight` outstanding at any time (a fixed count, not a duration,
 * so every target does the same work); calls per second. `tools` spreads the calls over several
 * downstreams round-robin when given.
 */
export async function echoThroughput(
  target: Target,
  count: number,
  inFlight: number,
  deadline: number,
  tools: readonly string[] = [target.echoTool],
): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next;
      next += 1;
      if ((i & 63) === 0) checkDeadline(deadline);
      await echo(target, i, tools[i % tools.length]);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return count / ((performance.now() - start) / 1000);
}

/** `count` sequential calls of the ~1 MiB tool; each latency in ms. */
export async function bigLatencies(target: Target, count: number, deadline: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    checkDeadline(deadline);
    const start = performance.now();
    await call(target, target.bigTool, {});
    latencies.push(performance.now() - start);
  }
  return latencies;
}

/** Size of one tools/list result as JSON, in KiB: what every list costs to send and parse. */
export async function listKiB(target: Target): Promise<number> {
  const result = await target.client.request({ method: 'tools/list' }, ListToolsResultSchema, {
    timeout: CALL_TIMEOUT_MS,
  });
  return JSON.stringify(result).length / 1024;
}

/** `count` sequential tools/list requests; each latency in ms. */
export async function listLatencies(target: Target, count: number, deadline: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    checkDeadline(deadline);
    const start = performance.now();
    const { tools } = await target.client.request({ method: 'tools/list' }, ListToolsResultSchema, {
      timeout: CALL_TIMEOUT_MS,
    });
    latencies.push(performance.now() - start);
    if (tools.length !== target.toolCount) {
      throw new Error(`${target.spec.kind}: tools/list changed from ${target.toolCount} to ${tools.length}`);
    }
  }
  return latencies;
}
