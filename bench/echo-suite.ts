/**
 * The echo suite, over one wire: the three targets in front of one bench server; sequential
 * latency, the target's CPU per call, throughput at 16 and 64 in flight, the ~1 MiB result,
 * and the target's RSS afterwards.
 */
import type { Figure } from './figures.js';
import { bigLatencies, echo, echoLatencies, echoThroughput } from './measure.js';
import { ECHO_PARTS, alternate, launchAll, specs, type Plan, type SuiteOutput } from './rounds.js';
import { median, percentile } from './stats.js';
import { cpuTimeFineOf, memoryOf } from './machine.js';
import type { Target, Wire } from './targets.js';

/** Sequential echo latency p50/p99 and the target's CPU per call. */
async function latencyFigures(
  wire: Wire,
  targets: readonly Target[],
  plan: Plan,
  deadline: number,
): Promise<Figure[]> {
  const p50: Figure['rounds'] = {};
  const p99: Figure['rounds'] = {};
  const cpu = await alternate(targets, plan.latency.rounds, async (target) => {
    const before = cpuTimeFineOf(target.pid);
    const latencies = await echoLatencies(target, plan.latency.calls, deadline);
    (p50[target.spec.kind] ??= []).push(percentile(latencies, 50));
    (p99[target.spec.kind] ??= []).push(percentile(latencies, 99));
    return ((cpuTimeFineOf(target.pid) - before) * 1000) / plan.latency.calls;
  });
  const calls = `${plan.latency.rounds}×${plan.latency.calls} calls`;
  return [
    {
      id: `${wire}.echo.p50`,
      title: `echo p50, ${wire} (${calls})`,
      unit: 'µs',
      better: 'lower',
      rounds: p50,
      ...(wire === 'stdio' ? { goal: { against: 'passthrough', bound: 1 } } : {}),
    },
    { id: `${wire}.echo.p99`, title: `echo p99, ${wire}`, unit: 'µs', better: 'lower', rounds: p99 },
    {
      id: `${wire}.echo.cpu`,
      title: `target CPU per echo call, ${wire}`,
      unit: 'µs',
      better: 'lower',
      rounds: cpu,
      ...(wire === 'http' ? { goal: { against: 'supergateway', bound: 0.8 } } : {}),
    },
  ];
}

/** Calls per second with a fixed count of calls and 16 or 64 in flight. */
async function throughputFigures(
  wire: Wire,
  targets: readonly Target[],
  plan: Plan,
  deadline: number,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  const cpu64: Figure['rounds'] = {};
  for (const inFlight of plan.throughput.inFlight) {
    const rounds = await alternate(targets, plan.throughput.rounds, async (target) => {
      const before = cpuTimeFineOf(target.pid);
      const rate = await echoThroughput(target, plan.throughput.calls, inFlight, deadline);
      const perCall = ((cpuTimeFineOf(target.pid) - before) * 1000) / plan.throughput.calls;
      if (inFlight === 64) (cpu64[target.spec.kind] ??= []).push(perCall);
      return rate;
    });
    figures.push({
      id: `${wire}.echo.throughput${inFlight}`,
      title: `throughput, ${inFlight} in flight, ${wire} (${plan.throughput.calls} calls/round)`,
      unit: 'calls/s',
      better: 'higher',
      rounds,
      ...(inFlight === 64 ? { goal: { against: 'passthrough', bound: 1 } } : {}),
    });
  }
  if (Object.keys(cpu64).length > 0) {
    figures.push({
      id: `${wire}.echo.cpu64`,
      title: `target CPU per echo call, 64 in flight, ${wire}`,
      unit: 'µs',
      better: 'lower',
      rounds: cpu64,
      ...(wire === 'http' ? { goal: { against: 'supergateway', bound: 0.8 } } : {}),
    });
  }
  return figures;
}

/** Median latency of the ~1 MiB result. */
async function bigFigures(
  wire: Wire,
  targets: readonly Target[],
  plan: Plan,
  deadline: number,
): Promise<Figure[]> {
  const rounds = await alternate(targets, plan.big.rounds, async (target) =>
    median(await bigLatencies(target, plan.big.calls, deadline)),
  );
  return [
    {
      id: `${wire}.big.p50`,
      title: `1 MiB result, median, ${wire}`,
      unit: 'ms',
      better: 'lower',
      rounds,
      goal: { against: 'passthrough', bound: 1 },
    },
  ];
}

/** Echo latency, CPU per call, throughput, the 1 MiB result (each unless `plan.parts` leaves it out), RSS. */
export async function echoSuite(wire: Wire, plan: Plan, deadline: number): Promise<SuiteOutput> {
  const problems: string[] = [];
  const parts = plan.parts ?? ECHO_PARTS;
  const targets = await launchAll(specs(wire, 1, plan), problems, parts.includes('big'));
  const figures: Figure[] = [];
  try {
    for (const target of targets) {
      for (let i = 0; i < plan.warmup; i += 1) await echo(target, i);
    }
    if (parts.includes('latency')) figures.push(...(await latencyFigures(wire, targets, plan, deadline)));
    if (parts.includes('throughput'))
      figures.push(...(await throughputFigures(wire, targets, plan, deadline)));
    if (parts.includes('big')) figures.push(...(await bigFigures(wire, targets, plan, deadline)));
    const rss: Figure['rounds'] = {};
    for (const target of targets) rss[target.spec.kind] = [memoryOf(target.pid).rssMiB];
    figures.push({
      id: `${wire}.rss.after`,
      title: `RSS of the target process after this suite, 1 server, ${wire}`,
      unit: 'MiB',
      better: 'lower',
      rounds: rss,
    });
  } finally {
    await Promise.all(targets.map((target) => target.close()));
  }
  return { figures, problems };
}
