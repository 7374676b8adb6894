/**
 * The echo suite in a process's first calls, where a stdio gateway spends its life: a host
 * spawns it per session, so most of its calls are its first few thousand, before the JIT has
 * settled. Each round starts every target afresh twice, measures the first `plan.coldEcho.calls`
 * calls after its first complete tools/list (one echo checks it answers), and stops it: once one
 * at a time (p50, p99 and the target's CPU per call) and once 64 in flight (calls per second and
 * CPU per call). Targets alternate within a round, as in every suite. CPU is read to the
 * nanosecond (`cpuTimeFineOf`): 3,000 calls are a few hundred ms of it.
 */
import type { Figure } from './figures.js';
import { echoLatencies, echoThroughput } from './measure.js';
import { cpuTimeFineOf } from './machine.js';
import { launchAll, specs, type Plan, type SuiteOutput } from './rounds.js';
import { percentile } from './stats.js';
import type { Target, TargetSpec, Wire } from './targets.js';

type Rounds = Figure['rounds'];

function push(rounds: Rounds, target: Target, value: number): void {
  (rounds[target.spec.kind] ??= []).push(value);
}

/** Start `spec` afresh, run `work` on it, stop it; undefined (and a problem) if it did not start. */
async function fresh<T>(
  spec: TargetSpec,
  problems: string[],
  work: (target: Target) => Promise<T>,
): Promise<T | undefined> {
  const [target] = await launchAll([spec], problems, false);
  if (target === undefined) return undefined;
  try {
    return await work(target);
  } finally {
    await target.close();
  }
}

/** The work of one fresh process, and its CPU per call in µs. */
async function withCpu(target: Target, calls: number, work: () => Promise<void>): Promise<number> {
  const before = cpuTimeFineOf(target.pid);
  await work();
  return ((cpuTimeFineOf(target.pid) - before) * 1000) / calls;
}

/** Cold echo figures over `wire`: p50, p99, CPU per call one at a time; calls/s and CPU at 64. */
export async function coldEchoSuite(wire: Wire, plan: Plan, deadline: number): Promise<SuiteOutput> {
  const problems: string[] = [];
  const { rounds, calls } = plan.coldEcho;
  const p50: Rounds = {};
  const p99: Rounds = {};
  const cpu1: Rounds = {};
  const rate64: Rounds = {};
  const cpu64: Rounds = {};
  const failed = new Set<string>();
  for (let round = 0; round < rounds; round += 1) {
    for (const spec of specs(wire, 1, plan)) {
      if (failed.has(spec.kind)) continue;
      const ok = await fresh(spec, problems, async (target) => {
        let latencies: number[] = [];
        push(
          cpu1,
          target,
          await withCpu(target, calls, async () => {
            latencies = await echoLatencies(target, calls, deadline);
          }),
        );
        push(p50, target, percentile(latencies, 50));
        push(p99, target, percentile(latencies, 99));
        return true;
      });
      const ok64 = await fresh(spec, problems, async (target) => {
        let rate = 0;
        push(
          cpu64,
          target,
          await withCpu(target, calls, async () => {
            rate = await echoThroughput(target, calls, 64, deadline);
          }),
        );
        push(rate64, target, rate);
        return true;
      });
      if (ok === undefined || ok64 === undefined) failed.add(spec.kind);
    }
  }
  const first = `first ${calls} calls of a fresh process, ${rounds} rounds`;
  const id = `${wire}.cold.echo`;
  const against = wire === 'http' ? 'supergateway' : 'passthrough';
  return {
    problems,
    figures: [
      {
        id: `${id}.p50`,
        title: `cold echo p50, ${wire} (${first})`,
        unit: 'µs',
        better: 'lower',
        rounds: p50,
        ...(wire === 'stdio' ? { goal: { against: 'passthrough', bound: 1.05 } } : {}),
      },
      { id: `${id}.p99`, title: `cold echo p99, ${wire}`, unit: 'µs', better: 'lower', rounds: p99 },
      {
        id: `${id}.cpu`,
        title: `cold target CPU per call, one at a time, ${wire}`,
        unit: 'µs',
        better: 'lower',
        rounds: cpu1,
      },
      {
        id: `${id}.throughput64`,
        title: `cold throughput, 64 in flight, ${wire}`,
        unit: 'calls/s',
        better: 'higher',
        rounds: rate64,
        ...(wire === 'stdio' ? { goal: { against: 'passthrough', bound: 0.95 } } : {}),
      },
      {
        id: `${id}.cpu64`,
        title: `cold target CPU per call, 64 in flight, ${wire}`,
        unit: 'µs',
        better: 'lower',
        rounds: cpu64,
        goal: { against, bound: wire === 'http' ? 0.9 : 1.1 },
      },
    ],
  };
}
