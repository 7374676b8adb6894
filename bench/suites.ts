/**
 * The catalog and start-up suites: tools/list of the aggregated catalog, and cold start with the
 * resident memory that follows it.
 */
import type { Figure } from './figures.js';
import { checkDeadline, echoThroughput, listKiB, listLatencies } from './measure.js';
import { alternate, launchAll, profiled, specs, type Plan, type SuiteOutput } from './rounds.js';
import { median } from './stats.js';
import { memoryOf } from './machine.js';
import { launch, type Target, type TargetSpec, type Wire } from './targets.js';

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

/** Cold start and RSS of one freshly started target; undefined (and a problem noted) if it failed. */
async function coldOnce(
  spec: TargetSpec,
  plan: Plan,
  deadline: number,
  problems: string[],
): Promise<{ coldMs: number; rssMiB: number } | undefined> {
  checkDeadline(deadline);
  let target: Target;
  try {
    target = await launch(spec);
  } catch (error) {
    problems.push(String(error));
    return undefined;
  }
  try {
    await echoThroughput(target, plan.cold.calls, 4, deadline, target.echoTools);
    return { coldMs: target.coldStartMs, rssMiB: memoryOf(target.pid).rssMiB };
  } finally {
    await target.close();
  }
}

/**
 * The floor for a proxy with N downstreams on this machine: N bench servers spawned at once by
 * the bench client itself, until the last has answered tools/list (ms).
 */
async function parallelDirect(
  servers: number,
  deadline: number,
  problems: string[],
): Promise<number | undefined> {
  checkDeadline(deadline);
  const spec: TargetSpec = { kind: 'direct', wire: 'stdio', servers: 1, tools: 0 };
  const started = await Promise.allSettled(Array.from({ length: servers }, () => launch(spec)));
  const targets = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  await Promise.all(targets.map((target) => target.close()));
  const failure = started.find((s) => s.status === 'rejected');
  if (failure !== undefined) {
    problems.push(String(failure.reason));
    return undefined;
  }
  return Math.max(...targets.map((target) => target.coldStartMs));
}

/**
 * Spawn → first complete tools/list, then RSS after some calls over every downstream (stdio);
 * per round also the normalizer with one server (its fixed cost) and the parallel-spawn floor.
 */
export async function coldSuite(plan: Plan, deadline: number): Promise<SuiteOutput> {
  const problems: string[] = [];
  const n = plan.cold.servers;
  const all = specs('stdio', n, plan);
  const cold: Figure['rounds'] = {};
  const rss: Figure['rounds'] = {};
  const coldOne: Figure['rounds'] = {};
  const rssOne: Figure['rounds'] = {};
  const floor: Figure['rounds'] = {};
  const failed = new Set<string>();
  const record = (key: string, into: [Figure['rounds'], Figure['rounds']], spec: TargetSpec) =>
    coldOnce(spec, plan, deadline, problems).then((m) => {
      if (m === undefined) return void failed.add(key);
      (into[0][spec.kind] ??= []).push(m.coldMs);
      (into[1][spec.kind] ??= []).push(m.rssMiB);
    });
  for (let round = 0; round < plan.cold.rounds; round += 1) {
    for (const spec of all) {
      if (!failed.has(spec.kind)) await record(spec.kind, [cold, rss], spec);
      if (spec.kind === 'normalizer' && !failed.has('one')) {
        await record('one', [coldOne, rssOne], { ...spec, servers: 1 });
      }
    }
    if (!failed.has('floor')) {
      const ms = await parallelDirect(n, deadline, problems);
      if (ms === undefined) failed.add('floor');
      else (floor.direct ??= []).push(ms);
    }
  }
  // The one-server normalizer figures compare against the same rounds' direct and passthrough.
  const { normalizer: _coldN, ...coldBaselines } = cold;
  const { normalizer: _rssN, ...rssBaselines } = rss;
  const one: Figure['rounds'] = { ...coldBaselines, ...coldOne };
  const oneRss: Figure['rounds'] = { ...rssBaselines, ...rssOne };
  const setup = { direct: '1 server', passthrough: '1 server', normalizer: `${n} servers` };
  const setupOne = { direct: '1 server', passthrough: '1 server', normalizer: '1 server' };
  const title = `after ${plan.cold.calls} calls, stdio`;
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
        id: 'stdio.cold.one',
        title: 'cold start, one server each, stdio',
        unit: 'ms',
        better: 'lower',
        rounds: one,
        setup: setupOne,
      },
      {
        id: 'stdio.cold.floor',
        title: `cold start floor: ${n} bench servers spawned at once by the client, until the last has listed`,
        unit: 'ms',
        better: 'lower',
        rounds: floor,
        setup: { direct: `${n} servers` },
      },
      {
        id: 'stdio.rss',
        title: `RSS of the target process ${title}`,
        unit: 'MiB',
        better: 'lower',
        rounds: rss,
        setup,
        goal: { against: 'passthrough', bound: 1.2 },
      },
      {
        id: 'stdio.rss.one',
        title: `RSS, one server each, ${title}`,
        unit: 'MiB',
        better: 'lower',
        rounds: oneRss,
        setup: setupOne,
      },
    ],
  };
}
