/**
 * The bench's suites. Each starts its targets once, checks that every one answers correctly,
 * then runs rounds that alternate the targets (direct, passthrough, normalizer, direct, ...)
 * so that the machine's drift hits all of them alike.
 */
import type { Figure } from './figures.js';
import {
  bigLatencies,
  checkDeadline,
  echo,
  echoLatencies,
  echoThroughput,
  listLatencies,
  verify,
} from './measure.js';
import { median, percentile } from './stats.js';
import {
  cpuTimeOf,
  expectedTools,
  launch,
  memoryOf,
  type Target,
  type TargetKind,
  type TargetSpec,
  type Wire,
} from './targets.js';

/** How much work each suite does. */
export interface Plan {
  readonly warmup: number;
  readonly latency: { readonly rounds: number; readonly calls: number };
  readonly throughput: {
    readonly rounds: number;
    readonly calls: number;
    readonly inFlight: readonly number[];
  };
  readonly big: { readonly rounds: number; readonly calls: number };
  readonly list: {
    readonly rounds: number;
    readonly calls: number;
    readonly servers: number;
    readonly tools: number;
  };
  readonly cold: { readonly rounds: number; readonly servers: number; readonly calls: number };
  /** Which targets run under `node --cpu-prof`, and where their profiles go. */
  readonly cpuProf?: { readonly dir: string; readonly kinds: readonly TargetKind[] };
}

/** The spec, profiled when the plan asks for its kind. */
function profiled(spec: TargetSpec, plan: Plan): TargetSpec {
  return plan.cpuProf?.kinds.includes(spec.kind) ? { ...spec, cpuProfDir: plan.cpuProf.dir } : spec;
}

/** What a suite hands back: its figures and every correctness problem it met. */
export interface SuiteOutput {
  readonly figures: Figure[];
  readonly problems: string[];
}

/** Start every spec; a target that fails to start is reported and left out, the rest run. */
async function launchAll(specs: readonly TargetSpec[], problems: string[]): Promise<Target[]> {
  const targets: Target[] = [];
  for (const spec of specs) {
    try {
      const target = await launch(spec);
      const found = await verify(target, expectedTools(spec));
      if (found.length > 0) {
        problems.push(...found);
        await target.close();
      } else {
        targets.push(target);
      }
    } catch (error) {
      problems.push(String(error));
    }
  }
  return targets;
}

/** Run `measure` for every target in turn, `rounds` times; per target, one value per round. */
async function alternate(
  targets: readonly Target[],
  rounds: number,
  measure: (target: Target) => Promise<number>,
): Promise<Figure['rounds']> {
  const out: Figure['rounds'] = {};
  for (let round = 0; round < rounds; round += 1) {
    for (const target of targets) {
      const value = await measure(target);
      (out[target.spec.kind] ??= []).push(value);
    }
  }
  return out;
}

/** direct and passthrough in front of one bench server, the normalizer in front of `servers`. */
function specs(wire: Wire, servers: number, plan: Plan): TargetSpec[] {
  const all: TargetSpec[] = [
    { kind: 'direct', wire, servers: 1, tools: 0 },
    { kind: 'passthrough', wire, servers: 1, tools: 0 },
    { kind: 'normalizer', wire, servers, tools: 0 },
  ];
  return all.map((spec) => profiled(spec, plan));
}

/** Sequential latency, CPU per call, throughput, the 1 MiB result and RSS after load. */
export async function echoSuite(wire: Wire, plan: Plan, deadline: number): Promise<SuiteOutput> {
  const problems: string[] = [];
  const targets = await launchAll(specs(wire, 1, plan), problems);
  const figures: Figure[] = [];
  try {
    for (const target of targets) {
      for (let i = 0; i < plan.warmup; i += 1) await echo(target, i);
    }
    const p50: Figure['rounds'] = {};
    const p99: Figure['rounds'] = {};
    const cpu = await alternate(targets, plan.latency.rounds, async (target) => {
      const before = cpuTimeOf(target.pid);
      const latencies = await echoLatencies(target, plan.latency.calls, deadline);
      (p50[target.spec.kind] ??= []).push(percentile(latencies, 50));
      (p99[target.spec.kind] ??= []).push(percentile(latencies, 99));
      return ((cpuTimeOf(target.pid) - before) * 1000) / plan.latency.calls;
    });
    const calls = `${plan.latency.rounds}×${plan.latency.calls} calls`;
    figures.push(
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
        title: `target process CPU per echo call, ${wire}`,
        unit: 'µs',
        better: 'lower',
        rounds: cpu,
      },
    );
    for (const inFlight of plan.throughput.inFlight) {
      const rounds = await alternate(targets, plan.throughput.rounds, (target) =>
        echoThroughput(target, plan.throughput.calls, inFlight, deadline),
      );
      figures.push({
        id: `${wire}.echo.throughput${inFlight}`,
        title: `throughput, ${inFlight} in flight, ${wire} (${plan.throughput.calls} calls/round)`,
        unit: 'calls/s',
        better: 'higher',
        rounds,
        ...(inFlight === 64 ? { goal: { against: 'passthrough', bound: 1 } } : {}),
      });
    }
    const big = await alternate(targets, plan.big.rounds, async (target) =>
      median(await bigLatencies(target, plan.big.calls, deadline)),
    );
    figures.push({
      id: `${wire}.big.p50`,
      title: `1 MiB result, median, ${wire}`,
      unit: 'ms',
      better: 'lower',
      rounds: big,
      goal: { against: 'passthrough', bound: 1 },
    });
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

/** tools/list: the aggregated catalog vs one big server, direct and through the passthrough. */
export async function listSuite(wire: Wire, plan: Plan, deadline: number): Promise<SuiteOutput> {
  const problems: string[] = [];
  // Tool counts are totals per server: every bench server also lists `echo` and `big`.
  const { servers, tools } = plan.list;
  const single = Math.min(500, servers * tools);
  const all = (
    [
      { kind: 'direct', wire, servers: 1, tools: single - 2 },
      { kind: 'passthrough', wire, servers: 1, tools: single - 2 },
      { kind: 'normalizer', wire, servers, tools: tools - 2 },
    ] satisfies TargetSpec[]
  ).map((spec) => profiled(spec, plan));
  const targets = await launchAll(all, problems);
  const figures: Figure[] = [];
  try {
    checkDeadline(deadline);
    const rounds = await alternate(targets, plan.list.rounds, async (target) =>
      median(await listLatencies(target, plan.list.calls, deadline)),
    );
    const one = `1 server × ${single} tools`;
    figures.push({
      id: `${wire}.list.p50`,
      title: `tools/list, median, ${wire}`,
      unit: 'ms',
      better: 'lower',
      rounds,
      setup: { direct: one, passthrough: one, normalizer: `${servers} servers × ${tools} tools` },
      goal: { against: 'direct', bound: 1 },
    });
  } finally {
    await Promise.all(targets.map((target) => target.close()));
  }
  return { figures, problems };
}

/** Spawn → first complete tools/list, then RSS after some calls over every downstream (stdio). */
export async function coldSuite(plan: Plan, deadline: number): Promise<SuiteOutput> {
  const problems: string[] = [];
  const all = specs('stdio', plan.cold.servers, plan);
  const cold: Figure['rounds'] = {};
  const rss: Figure['rounds'] = {};
  const failed = new Set<string>();
  for (let round = 0; round < plan.cold.rounds; round += 1) {
    for (const spec of all) {
      if (failed.has(spec.kind)) continue;
      checkDeadline(deadline);
      let target: Target;
      try {
        target = await launch(spec);
      } catch (error) {
        problems.push(String(error));
        failed.add(spec.kind);
        continue;
      }
      try {
        (cold[spec.kind] ??= []).push(target.coldStartMs);
        await echoThroughput(target, plan.cold.calls, 4, deadline, target.echoTools);
        (rss[spec.kind] ??= []).push(memoryOf(target.pid).rssMiB);
      } finally {
        await target.close();
      }
    }
  }
  const setup = { direct: '1 server', passthrough: '1 server', normalizer: `${plan.cold.servers} servers` };
  return {
    problems,
    figures: [
      {
        id: 'stdio.cold',
        title: 'cold start: spawn → first complete tools/list, stdio',
        unit: 'ms',
        better: 'lower',
        rounds: cold,
        setup,
        goal: { against: 'direct', bound: 1.3 },
      },
      {
        id: 'stdio.rss',
        title: `RSS of the target process after ${plan.cold.calls} calls, stdio`,
        unit: 'MiB',
        better: 'lower',
        rounds: rss,
        setup,
        goal: { against: 'passthrough', bound: 1.2 },
      },
    ],
  };
}
