/**
 * Summarize V8 CPU profiles (`node --cpu-prof`) by self time: which functions, and which
 * files/packages, the process spent its CPU in. Idle time is left out of the percentages.
 *
 * Usage: `node dist/bench/profile.js <file.cpuprofile>... [--top 25]`; with
 * `--callers <functionName> [--depth 6]`, the call stacks that lead to that function instead;
 * `--skip <ms>` leaves out the first milliseconds of each profile (start-up, for steady state).
 * (several files are added together, e.g. every normalizer process of one bench run).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ROOT } from './targets.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time in µs per key. */
type Tally = Map<string, number>;

/** `file:///…/dist/src/x/y.js` → `src/x/y.ts`; node_modules → the package; node internals kept. */
export function where(url: string): string {
  if (url === '') return '(native)';
  const path = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (pkg) return `${pkg[1]}/${pkg[2]}`;
  return path.replace(/^dist\/(.*)\.js$/, '$1.ts');
}

/** The module a frame belongs to: a package name, or our source file. */
function moduleOf(url: string): string {
  const path = where(url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url.replace(/^file:\/\//, ''));
  return pkg?.[1] ?? path;
}

function add(tally: Tally, key: string, micros: number): void {
  tally.set(key, (tally.get(key) ?? 0) + micros);
}

/** Per sample, whether it lies `skipMs` or more after the profile's start (startup left out). */
function steady(profile: CpuProfile, skipMs: number): boolean[] {
  let elapsed = 0;
  return profile.timeDeltas.map((delta) => (elapsed += delta) >= skipMs * 1000);
}

/** Self time per function and per module of one profile, added into the tallies. */
export function tallyProfile(profile: CpuProfile, functions: Tally, modules: Tally, skipMs = 0): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const kept = steady(profile, skipMs);
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const micros = profile.timeDeltas[i] ?? 0;
    if (node === undefined || kept[i] !== true) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName === '' ? '(anonymous)' : functionName;
    const line = url.includes('/dist/src/') || url === '' ? '' : `:${lineNumber + 1}`;
    add(functions, url === '' ? name : `${name} — ${where(url)}${line}`, micros);
    add(modules, url === '' ? name : moduleOf(url), micros);
  });
}

/** A frame as one line: `name — where:line`. */
function frame(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName === '' ? '(anonymous)' : functionName;
  if (url === '') return name;
  return `${name} — ${where(url)}${url.includes('/dist/src/') ? '' : `:${lineNumber + 1}`}`;
}

/**
 * Self time of the functions named `name`, split by their call stacks (`depth` frames up,
 * innermost first): answers "who calls the hot native function".
 */
export function tallyCallers(
  profile: CpuProfile,
  name: string,
  depth: number,
  stacks: Tally,
  skipMs = 0,
): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const kept = steady(profile, skipMs);
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (node === undefined || kept[i] !== true || node.callFrame.functionName !== name) return;
    const chain: string[] = [];
    for (let up = parent.get(id); up !== undefined && chain.length < depth; up = parent.get(up)) {
      const caller = byId.get(up);
      if (caller !== undefined) chain.push(frame(caller));
    }
    add(stacks, chain.join(' ← '), profile.timeDeltas[i] ?? 0);
  });
}

function table(title: string, tally: Tally, top: number): string {
  const idle = tally.get('(idle)') ?? 0;
  const busy = [...tally.values()].reduce((sum, v) => sum + v, 0) - idle;
  const rows = [...tally.entries()]
    .filter(([key]) => key !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([key, micros]) =>
        `| ${((micros / busy) * 100).toFixed(1)}% | ${(micros / 1000).toFixed(0)} | ${key} |`,
    );
  return [
    `### ${title} (busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms)`,
    '',
    '| self % | self ms | where |',
    '|--:|--:|---|',
    ...rows,
  ].join('\n');
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '25' },
      callers: { type: 'string' },
      depth: { type: 'string', default: '6' },
      skip: { type: 'string', default: '0' },
    },
  });
  if (positionals.length === 0) throw new Error('Expected one or more .cpuprofile files');
  const top = Number(values.top);
  const profiles = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  if (values.callers !== undefined) {
    const stacks: Tally = new Map();
    for (const profile of profiles) {
      tallyCallers(profile, values.callers, Number(values.depth), stacks, Number(values.skip));
    }
    const rows = [...stacks.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [chain, micros] of rows) console.log(`${(micros / 1000).toFixed(0)} ms  ${chain}`);
    return;
  }
  const functions: Tally = new Map();
  const modules: Tally = new Map();
  for (const profile of profiles) tallyProfile(profile, functions, modules, Number(values.skip));
  console.log(
    `${table('Self time by function', functions, top)}\n\n${table('Self time by module', modules, top)}`,
  );
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) main();
