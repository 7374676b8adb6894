/**
 * The catalog and start-up suites: tools/list of the aggregated catalog, and cold start with the
 * resident memory that follows it.
 */
import type { Figure } from './figures.js';
import { checkDeadline, echoThroughput, listKiB, listLatencies } from './measure.js';
import { alternate, launchAll, profiled, specs, type Plan, type SuiteOutput } from './rounds.js';
import { median } from './stats.js';
import { launch, memoryOf, type Target, type TargetSpec, type Wire } from './targets.js';

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
  const targets = await launchAll(all, problems, false);
  const figures: Figure[] = [];
  try {
    checkDeadline(deadline);
    const rounds = await alternate(targets, plan.list.rounds, async (target) =>
      median(await listLatencies(target, plan.list.calls, deadline)),
    );
    const one = `1 server × ${single} tools`;
    const setup = { direct: one, passthrough: one, normalizer: `${servers} servers × ${tools} tools` };
    figures.push({
      id: `${wire}.list.p50`,
      title: `tools/list, median, ${wire}`,
      unit: 'ms',
      better: 'lower',
      rounds,
      setup,
      goal: { against: 'direct', bound: 1 },
    });
    const size: Figure['rounds'] = {};
    for (const target of targets) size[target.spec.kind] = [await listKiB(target)];
    figures.push({
      id: `${wire}.list.size`,
      title: `tools/list result size, ${wire}`,
      unit: 'KiB',
      better: 'lower',
      rounds: size,
      setup,
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
