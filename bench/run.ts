/**
 * `npm run bench`: direct vs bare passthrough vs mcp-normalizer, over stdio and Streamable HTTP,
 * rounds alternating the targets. Prints a markdown table and writes the raw rounds as JSON to
 * bench/results/. Ratios are reported, never asserted.
 *
 * Flags: `--quick` (a short run, ~1–2 min), `--smoke` (a handful of calls, for the harness test),
 * `--only echo-stdio,echo-http,echo-cold-stdio,echo-cold-http,list-stdio,list-http,cold` (a subset
 * of suites; the `echo-cold-*` ones measure fresh processes' first 3,000 calls),
 * `--parts latency,throughput,big` (which parts of the echo suites run, e.g. to profile one),
 * `--set key=value` (repeatable: a per-server setting for the normalizer's config, e.g.
 * `--set concurrency=64`, to test a hypothesis; the default run uses the defaults),
 * `--json-response` (the HTTP baselines answer with plain JSON instead of SSE),
 * `--cpu-prof normalizer[,passthrough,direct]` (run those targets under `node --cpu-prof`; profiles
 * go to bench/results/profiles/<date>/, summarize them with `node dist/bench/profile.js`),
 * `--hops` (stamp every pipe read and write of the passthrough and mcp-normalizer, and print where
 * a sequential call's time goes inside each, and this process's own pipes to each stdio target,
 * for the round trip and the host's turn: `--only echo-stdio --parts latency --hops`),
 * `--child-session` (the passthrough's downstream runs in a session of its own, through util-linux's
 * `setsid`, as mcp-normalizer spawns every stdio server for P5's process group: on a kernel that
 * schedules each session as a group, `sched_autogroup`, the like-for-like yardstick),
 * `--passthrough-progress` (the passthrough's calls carry a progress token and restart their
 * timeout on progress, as P3 makes ours: the downstream reads the token on every call),
 * `--table <results.json>` (print the table of a saved run again, measuring nothing).
 */
import './scratch.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Figure } from './figures.js';
import { cpuSnapshot, foreignCores } from './machine.js';
import { markdownTable, summarize } from './report.js';
import { coldEchoSuite } from './echo-cold.js';
import { echoSuite } from './echo-suite.js';
import { hopsTable } from './hops.js';
import { hostHopsTable, stampHostPipes } from './hops-host.js';
import { ECHO_PARTS, type EchoPart, type Plan, type SuiteOutput } from './rounds.js';
import { coldSuite, listSuite } from './suites.js';
import { ROOT, missingBuild, type TargetKind } from './targets.js';

/** Every suite, by the name `--only` takes. */
const SUITES = {
  'echo-stdio': (plan: Plan, deadline: number) => echoSuite('stdio', plan, deadline),
  'echo-http': (plan: Plan, deadline: number) => echoSuite('http', plan, deadline),
  'echo-cold-stdio': (plan: Plan, deadline: number) => coldEchoSuite('stdio', plan, deadline),
  'echo-cold-http': (plan: Plan, deadline: number) => coldEchoSuite('http', plan, deadline),
  'list-stdio': (plan: Plan, deadline: number) => listSuite('stdio', plan, deadline),
  'list-http': (plan: Plan, deadline: number) => listSuite('http', plan, deadline),
  cold: (plan: Plan, deadline: number) => coldSuite(plan, deadline),
} satisfies Record<string, (plan: Plan, deadline: number) => Promise<SuiteOutput>>;

/** A suite name. */
export type SuiteName = keyof typeof SUITES;

/** The run sizes: full (default) stays under ~10 min on 2 cores; `budgetMs` bounds it anyway. */
export const PLANS = {
  full: {
    budgetMs: 12 * 60_000,
    warmup: 1000,
    latency: { rounds: 10, calls: 500 },
    throughput: { rounds: 8, calls: 2000, inFlight: [16, 64] },
    big: { rounds: 8, calls: 10 },
    list: { rounds: 8, calls: 20, servers: 20, tools: 100 },
    cold: { rounds: 8, servers: 10, calls: 500 },
    coldEcho: { rounds: 6, calls: 3000 },
  },
  quick: {
    budgetMs: 5 * 60_000,
    warmup: 100,
    latency: { rounds: 3, calls: 200 },
    throughput: { rounds: 3, calls: 300, inFlight: [16, 64] },
    big: { rounds: 3, calls: 3 },
    list: { rounds: 3, calls: 5, servers: 20, tools: 100 },
    cold: { rounds: 2, servers: 10, calls: 100 },
    coldEcho: { rounds: 3, calls: 3000 },
  },
  smoke: {
    budgetMs: 60_000,
    warmup: 3,
    latency: { rounds: 1, calls: 5 },
    throughput: { rounds: 1, calls: 16, inFlight: [16] },
    big: { rounds: 1, calls: 1 },
    list: { rounds: 1, calls: 1, servers: 2, tools: 10 },
    cold: { rounds: 1, servers: 2, calls: 4 },
    coldEcho: { rounds: 1, calls: 20 },
  },
} satisfies Record<string, Plan & { budgetMs: number }>;

/** What a run produced. */
export interface BenchResult {
  readonly meta: Record<string, unknown>;
  readonly figures: Figure[];
  readonly problems: string[];
}

/**
 * Run the chosen suites in order under one time budget.
 * @example const { figures, problems } = await runBench('smoke', ['echo-stdio']);
 */
export async function runBench(
  size: keyof typeof PLANS,
  only: readonly SuiteName[] = Object.keys(SUITES) as SuiteName[],
  extra: Pick<
    Plan,
    'childSession' | 'cpuProf' | 'hopsDir' | 'parts' | 'passthroughProgress' | 'serverSettings'
  > = {},
): Promise<BenchResult> {
  const missing = missingBuild();
  if (missing.length > 0) throw new Error(`Run \`npm run build\` first; missing: ${missing.join(', ')}`);
  const plan: Plan = { ...PLANS[size], ...extra };
  const deadline = performance.now() + PLANS[size].budgetMs;
  const figures: Figure[] = [];
  const problems: string[] = [];
  const started = new Date();
  // The commit the targets were built from: HEAD now, before other work moves it during the run.
  const commit = gitHead();
  // Cores kept busy by other processes during each suite: says which ran on a quiet machine.
  const foreignLoad: Record<string, number> = {};
  for (const name of only) {
    const before = cpuSnapshot();
    const output = await SUITES[name](plan, deadline);
    foreignLoad[name] = Number(foreignCores(before, cpuSnapshot()).toFixed(2));
    figures.push(...output.figures);
    problems.push(...output.problems);
  }
  const meta = {
    ...describeRun(size, only, started, commit),
    foreignLoad,
    normalizerServerSettings: extra.serverSettings ?? 'defaults',
    passthroughChild: extra.childSession === true ? 'own session' : 'same session',
    passthroughCalls: extra.passthroughProgress === true ? 'with a progress token' : 'as the host sent them',
  };
  return { meta, figures, problems };
}

/** The short hash of HEAD, plus `+dirty` when tracked files differ from it. */
function gitHead(): string {
  const git = (args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) === '' ? '' : '+dirty';
  return `${git(['rev-parse', '--short', 'HEAD'])}${dirty}`;
}

function describeRun(
  size: string,
  only: readonly string[],
  started: Date,
  commit: string,
): Record<string, unknown> {
  const sdk = JSON.parse(
    readFileSync(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8'),
  ) as {
    version: string;
  };
  return {
    date: started.toISOString(),
    seconds: Math.round((Date.now() - started.getTime()) / 1000),
    size,
    suites: only,
    node: process.version,
    sdk: sdk.version,
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    loadAverageAtEnd: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    commit,
    command: `node ${process.argv.slice(1).join(' ')}`,
    baselineHttpResponses: process.env['BENCH_JSON_RESPONSE'] === '1' ? 'json' : 'sse',
  };
}

/** What a run writes to bench/results/ (and `--table` reads back). */
interface SavedRun {
  readonly meta: Record<string, unknown>;
  readonly figures: Figure[];
}

/** The machine line, the markdown table, the cores others kept busy, and where the rounds are. */
function printReport(meta: Record<string, unknown>, figures: readonly Figure[], where: string): void {
  console.log(
    `\n${meta['cores']} cores (${meta['cpu']}), Node ${meta['node']}, SDK ${meta['sdk']}, commit ${meta['commit']}, ` +
      `${meta['date']}, ${meta['size']} run, ${meta['seconds']} s\n`,
  );
  console.log(markdownTable(figures));
  if (meta['passthroughChild'] === 'own session') {
    console.log(
      "\nthe passthrough's downstream ran in a session of its own (`--child-session`), as P5 spawns ours",
    );
  }
  if (meta['passthroughCalls'] === 'with a progress token') {
    console.log(
      "\nthe passthrough's calls carried a progress token (`--passthrough-progress`), as P3 makes ours",
    );
  }
  const load = Object.entries((meta['foreignLoad'] ?? {}) as Record<string, number>);
  console.log(
    `\ncores busy with other processes, per suite: ${load.map(([k, v]) => `${k} ${v}`).join(', ')}`,
  );
  console.log(`\nraw results: ${where}`);
}

/** `--set concurrency=64` → `{concurrency: 64}` (numbers and booleans parsed as JSON). */
function parseSettings(pairs: readonly string[]): Record<string, number | string | boolean> | undefined {
  if (pairs.length === 0) return undefined;
  const settings: Record<string, number | string | boolean> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`Expected \`--set key=value\`, got \`${pair}\``);
    const raw = pair.slice(eq + 1);
    settings[pair.slice(0, eq)] = /^(-?\d+(\.\d+)?|true|false)$/.test(raw)
      ? (JSON.parse(raw) as number | boolean)
      : raw;
  }
  return settings;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
      hops: { type: 'boolean', default: false },
      parts: { type: 'string' },
      set: { type: 'string', multiple: true },
      'json-response': { type: 'boolean', default: false },
      table: { type: 'string' },
      'child-session': { type: 'boolean', default: false },
      'passthrough-progress': { type: 'boolean', default: false },
    },
  });
  if (values.table !== undefined) {
    const saved = JSON.parse(readFileSync(values.table, 'utf8')) as SavedRun;
    printReport(saved.meta, saved.figures, values.table);
    return;
  }
  const size = values.smoke ? 'smoke' : values.quick ? 'quick' : 'full';
  const only = (values.only?.split(',') ?? Object.keys(SUITES)) as SuiteName[];
  const unknown = only.filter((name) => !(name in SUITES));
  if (unknown.length > 0)
    throw new Error(`Unknown suite ${unknown.join(', ')}; known: ${Object.keys(SUITES).join(', ')}`);
  const results = join(ROOT, 'bench/results');
  let cpuProf: Plan['cpuProf'];
  if (values['cpu-prof'] !== undefined) {
    const kinds = values['cpu-prof'].split(',') as TargetKind[];
    const dir = join(results, 'profiles', new Date().toISOString().replace(/[:.]/g, '-'));
    mkdirSync(dir, { recursive: true });
    cpuProf = { dir, kinds };
    console.error(`CPU profiles of ${kinds.join(', ')} go to ${dir}`);
  }
  let hopsDir: string | undefined;
  if (values.hops) {
    hopsDir = join(results, 'hops', new Date().toISOString().replace(/[:.]/g, '-'));
    mkdirSync(hopsDir, { recursive: true });
    stampHostPipes();
  }
  const parts = values.parts?.split(',') as EchoPart[] | undefined;
  const wrong = parts?.filter((part) => !ECHO_PARTS.includes(part)) ?? [];
  if (wrong.length > 0) throw new Error(`Unknown part ${wrong.join(', ')}; known: ${ECHO_PARTS.join(', ')}`);
  const serverSettings = parseSettings(values.set ?? []);
  // Read by bench/http-host.ts in the baseline processes, which inherit our environment.
  if (values['json-response']) process.env['BENCH_JSON_RESPONSE'] = '1';
  const result = await runBench(size, only, {
    ...(cpuProf === undefined ? {} : { cpuProf }),
    ...(hopsDir === undefined ? {} : { hopsDir }),
    ...(parts === undefined ? {} : { parts }),
    ...(serverSettings === undefined ? {} : { serverSettings }),
    ...(values['child-session'] ? { childSession: true } : {}),
    ...(values['passthrough-progress'] ? { passthroughProgress: true } : {}),
  });
  mkdirSync(results, { recursive: true });
  const stamp = String(result.meta['date']).replace(/[:.]/g, '-');
  const json = JSON.stringify({ ...result, rows: result.figures.map(summarize) }, null, 2);
  writeFileSync(join(results, `bench-${stamp}.json`), json);
  writeFileSync(join(results, 'latest.json'), json);
  printReport(result.meta, result.figures, `bench/results/bench-${stamp}.json`);
  if (hopsDir !== undefined) {
    console.log(`\nInside each target, median µs per sequential call (${hopsDir}):\n\n${hopsTable(hopsDir)}`);
    console.log(`\nFrom the host (this process), median µs per sequential call:\n\n${hostHopsTable()}`);
  }
  if (result.problems.length > 0) {
    console.error(`\n${result.problems.length} problem(s):\n${result.problems.join('\n')}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  await main();
}
