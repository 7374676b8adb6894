/**
 * `npm run bench:search-load` (issue 27 item 16): do hostile searches starve other calls?
 *
 * The gateway as a real process (`serve --http`) in front of two downstreams: `catalog`, 2,000
 * tools with the real servers' vocabulary (bench/servers/catalog.ts) in search mode, and the
 * bench `echo` server listed as usual. A probe client calls `echo_echo` one call at a time,
 * first with nothing else running (idle), then while four clients loop `search_tools` with the
 * queries that cost most (one word repeated to 500 characters, 500 characters of one word, many
 * distinct words). Prints the probe's p50 and p99 in both phases, their ratio, and the gateway's
 * CPU per search (from /proc/<pid>/stat over the loaded phase).
 *
 * Flags: `--probes N` (default 300) calls per phase. Loopback only; bounded in count and time.
 */
import './scratch.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { config, httpServe, openSession, postCall, ROOT } from './gateway.js';
import { percentile } from './stats.js';

const { values } = parseArgs({ options: { probes: { type: 'string', default: '300' } } });
const PROBES = Number(values.probes);
/** The loaded phase ends by this time whatever the probe got done. */
const PHASE_LIMIT_MS = 120_000;
const LOOPERS = 4;

const QUERIES = [
  'tool '.repeat(100),
  'search '.repeat(71),
  'abcdefghijklmnopqrstuvwxyz'.repeat(19).slice(0, 500),
  'tool list file data user repo name page item issue pull create update delete search query path text time date '
    .repeat(3)
    .slice(0, 500),
];

function cpuMs(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name): utime and stime, in ticks.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The worker's side: `loopers` sessions looping searches; counts on `mark` and at `stop`. */
async function loop(url: string, loopers: number): Promise<void> {
  let searches = 0;
  let stop = false;
  parentPort?.on('message', (message: string) => {
    if (message === 'mark') parentPort?.postMessage(searches);
    if (message === 'stop') stop = true;
  });
  const sessions = await Promise.all(Array.from({ length: loopers }, () => openSession(url)));
  let id = 1;
  const started = Date.now();
  await Promise.all(
    sessions.map(async (session, n) => {
      for (let i = n; !stop && Date.now() - started < 2 * PHASE_LIMIT_MS; i++) {
        const query = QUERIES[i % QUERIES.length] as string;
        await postCall(url, session, id++, { name: 'search_tools', arguments: { query } });
        searches++;
      }
    }),
  );
  parentPort?.postMessage(searches);
  parentPort?.close();
}

if (!isMainThread) {
  const { url, loopers } = workerData as { url: string; loopers: number };
  await loop(url, loopers);
} else {
  const node = JSON.stringify(process.execPath);
  const file = config(
    [
      'servers:',
      '  catalog:',
      `    command: ${node}`,
      `    args: [${JSON.stringify(join(ROOT, 'dist', 'bench', 'servers', 'catalog.js'))}, --tools, '2000']`,
      '    protocol: legacy',
      '    expose: search',
      '  echo:',
      `    command: ${node}`,
      `    args: [${JSON.stringify(join(ROOT, 'dist', 'bench', 'servers', 'echo.js'))}]`,
      '    protocol: legacy',
    ].join('\n'),
  );
  const { child, url } = await httpServe(file);
  const pid = child.pid as number;
  try {
    const probe = await openSession(url);
    let id = 1;
    // Ready once a search finds the catalog's tools (bounded: 30 s).
    for (const started = Date.now(); ;) {
      const answer = await postCall(url, probe, id++, {
        name: 'search_tools',
        arguments: { query: 'click element' },
      });
      if (JSON.stringify(answer ?? {}).includes('catalog_')) break;
      if (Date.now() - started > 30_000)
        throw new Error(`the catalog never became searchable: ${JSON.stringify(answer)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    async function probePhase(deadline: number): Promise<number[]> {
      const times: number[] = [];
      for (let i = 0; i < PROBES && Date.now() < deadline; i++) {
        const start = performance.now();
        const answer = await postCall(url, probe, id++, {
          name: 'echo_echo',
          arguments: { message: `p${i}` },
        });
        if (answer === undefined || 'error' in answer)
          throw new Error(`probe failed: ${JSON.stringify(answer)}`);
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b);
    }

    const idle = await probePhase(Date.now() + PHASE_LIMIT_MS);
    // The loopers run in a worker thread: their answers must not queue behind the probe's in
    // this thread's event loop (the gateway is what is measured, not the bench client).
    const looper = new Worker(new URL(import.meta.url), { workerData: { url, loopers: LOOPERS } });
    const counts: number[] = [];
    looper.on('message', (count: number) => counts.push(count));
    // Let the loops reach full speed before the probe measures.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    looper.postMessage('mark');
    const cpuBefore = cpuMs(pid);
    const loaded = await probePhase(Date.now() + PHASE_LIMIT_MS);
    const cpu = cpuMs(pid) - cpuBefore;
    looper.postMessage('stop');
    await new Promise((resolve) => looper.once('exit', resolve));
    const searched = (counts[1] ?? 0) - (counts[0] ?? 0);
    const ms = (sorted: number[], p: number): number => Number(percentile(sorted, p * 100).toFixed(1));
    process.stdout.write(
      `${JSON.stringify({
        bench: 'search-load',
        tools: 2000,
        probes: { idle: idle.length, loaded: loaded.length },
        idle_p50_ms: ms(idle, 0.5),
        idle_p99_ms: ms(idle, 0.99),
        loaded_p50_ms: ms(loaded, 0.5),
        loaded_p99_ms: ms(loaded, 0.99),
        p50_ratio: Number((percentile(loaded, 50) / percentile(idle, 50)).toFixed(2)),
        searches_while_probing: searched,
        gateway_cpu_ms_per_search: searched === 0 ? null : Number((cpu / searched).toFixed(2)),
      })}\n`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}
