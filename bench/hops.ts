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

/** One markdown row per target process: medians in µs of each hop of a sequential call. */
export function hopsTable(dir: string): string {
  const rows = [
    '| target | calls | host → downstream write | downstream turnaround | downstream → host write | in → out | out → next in | busy after downstream write | busy after host write |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const file of readdirSync(dir).filter((name) => name.startsWith('hops-'))) {
    const { target, events, busyAfterCout, busyAfterOut } = JSON.parse(
      readFileSync(join(dir, file), 'utf8'),
    ) as {
      target: string;
      events: string[];
      busyAfterCout?: number[];
      busyAfterOut?: number[];
    };
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
    const cells = [...hops, ...busy].map((values) => (values.length > 0 ? median(values).toFixed(1) : '–'));
    const name = target === 'main.js' ? 'mcp-normalizer' : target.replace(/\.js$/, '');
    rows.push(`| ${name} | ${hops[0]?.length} | ${cells.join(' | ')} |`);
  }
  return rows.join('\n');
}
