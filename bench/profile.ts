/**
 * Summarize V8 CPU profiles (`node --cpu-prof`) by self time: which functions, and which
 * files/packages, the process spent its CPU in. Idle time is left out of the percentages.
 *
 * Usage: `node dist/bench/profile.js <file.cpuprofile>... [--top 25]`
 * (several files are added together, e.g. every normalizer process of one bench run).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ROOT } from './targets.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
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

/** Self time per function and per module of one profile, added into the tallies. */
export function tallyProfile(profile: CpuProfile, functions: Tally, modules: Tally): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const micros = profile.timeDeltas[i] ?? 0;
    if (node === undefined) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName === '' ? '(anonymous)' : functionName;
    const line = url.includes('/dist/src/') || url === '' ? '' : `:${lineNumber + 1}`;
    add(functions, url === '' ? name : `${name} — ${where(url)}${line}`, micros);
    add(modules, url === '' ? name : moduleOf(url), micros);
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
    options: { top: { type: 'string', default: '25' } },
  });
  if (positionals.length === 0) throw new Error('Expected one or more .cpuprofile files');
  const functions: Tally = new Map();
  const modules: Tally = new Map();
  for (const file of positionals) {
    tallyProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, functions, modules);
  }
  const top = Number(values.top);
  console.log(
    `${table('Self time by function', functions, top)}\n\n${table('Self time by module', modules, top)}`,
  );
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) main();
