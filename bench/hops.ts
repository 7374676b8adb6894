/**
 * Where one call's time goes inside a bench target, from the stamps `hops-preload.ts` wrote
 * (`npm run bench -- --only echo-stdio --parts latency --hops`). A sequential call is the four
 * pipe events in a row: the host's request read (`in`), the request written to the downstream
 * (`cout`), its answer read (`cin`), the answer written to the host (`out`); the host's next
 * request (`in` again) closes it ("out → next in" is the host's turn). "busy after downstream
 * write" and "busy after host write" are how long the target keeps running after each such
 * write, until its event loop reaches its check phase: work that may delay the reader it has
 * just woken (docs/performance-log.md).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './stats.js';

/** The `--import` argument that loads the preload writing into `dir`. */
export function hopsImport(dir: string): string[] {
  const url = pathToFileURL(join(import.meta.dirname, 'hops-preload.js'));
  url.searchParams.set('dir', dir);
  return ['--import', url.href];
}

interface Stamp {
  readonly kind: string;
  readonly start: number;
  readonly end: number;
}

function stamps(events: readonly string[]): Stamp[] {
  const out: Stamp[] = [];
  for (let i = 0; i < events.length;) {
    const kind = events[i] as string;
    const start = Number(events[i + 1]);
    const write = kind === 'out' || kind === 'cout';
    out.push({ kind, start, end: write ? Number(events[i + 2]) : start });
    i += write ? 3 : 2;
  }
  return out;
}

interface HopsFile {
  readonly target: string;
  /** The process that spawned it (a downstream's is its target's). */
  readonly parent?: number;
  readonly events: string[];
  readonly busyAfterCout?: number[];
  readonly busyAfterOut?: number[];
}

/** µs from each request the downstream read to its answer written: its own time per call. */
function ownTimes(all: readonly Stamp[]): number[] {
  const times: number[] = [];
  for (let i = 0; i + 1 < all.length; i++) {
    const [read, written] = [all[i] as Stamp, all[i + 1] as Stamp];
    if (read.kind === 'in' && written.kind === 'out') times.push((written.start - read.start) / 1000);
  }
  return times;
}

/**
 * One markdown row per target process: medians in µs of each hop of a sequential call, and the
 * downstream's own time on that target's requests (the echo server, stamped as well).
 */
export function hopsTable(dir: string): string {
  const rows = [
    "| target | calls | host → downstream write | downstream turnaround | downstream → host write | in → out | out → next in | busy after downstream write | busy after host write | the downstream's own time |",
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const files = readdirSync(dir)
    .filter((name) => name.startsWith('hops-'))
    .map((name) => ({
      pid: Number(name.slice(5, -5)),
      ...(JSON.parse(readFileSync(join(dir, name), 'utf8')) as HopsFile),
    }));
  const downstreamOf = new Map<number, number[]>();
  for (const file of files)
    if (file.target === 'echo.js' && file.parent !== undefined)
      downstreamOf.set(file.parent, ownTimes(stamps(file.events)));
  for (const { pid, target, events, busyAfterCout, busyAfterOut } of files) {
    if (target === 'echo.js') continue;
    const all = stamps(events);
    const hops: number[][] = [[], [], [], [], []];
    for (let i = 0; i + 4 < all.length; i++) {
      const [a, b, c, d, e] = all.slice(i, i + 5) as [Stamp, Stamp, Stamp, Stamp, Stamp];
      if (a.kind !== 'in' || b.kind !== 'cout' || c.kind !== 'cin' || d.kind !== 'out' || e.kind !== 'in')
        continue;
      const values = [
        b.start - a.start,
        c.start - b.end,
        d.start - c.start,
        d.end - a.start,
        e.start - d.end,
      ];
      values.forEach((value, k) => hops[k]?.push(value / 1000));
    }
    if (hops[0]?.length === 0) continue;
    const busy = [busyAfterCout ?? [], busyAfterOut ?? []].map((list) => list.map((ns) => ns / 1000));
    const cells = [...hops, ...busy, downstreamOf.get(pid) ?? []].map((values) =>
      values.length > 0 ? median(values).toFixed(1) : '–',
    );
    const name = target === 'main.js' ? 'mcp-normalizer' : target.replace(/\.js$/, '');
    rows.push(`| ${name} | ${hops[0]?.length} | ${cells.join(' | ')} |`);
  }
  return rows.join('\n');
}
