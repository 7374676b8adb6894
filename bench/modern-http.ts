/**
 * What the two 2026-07-28 HTTP benches share (`bench/modern.ts`, `bench/replicas.ts`): their
 * command line, a child that serves HTTP and says where on stderr, a client pinned to the modern
 * era, and echo throughput with a bounded number of calls in flight and a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '64' },
  },
});

/** `[--rounds 5] [--calls 2000] [--in-flight 64]`, and the bounds every loop keeps. */
export const BENCH = {
  rounds: Number(values.rounds),
  calls: Number(values.calls),
  inFlight: Number(values['in-flight']),
  deadline: performance.now() + 15 * 60_000,
  callTimeoutMs: 30_000,
} as const;

/** Spawns `node <args>` and resolves with its MCP URL once its stderr names it (60 s at most). */
export async function spawnHttp(
  label: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    let started = false;
    const timer = setTimeout(() => reject(new Error(`${label} did not start: ${err.slice(-2000)}`)), 60_000);
    // Keeps draining the pipe for the child's whole life, holding only the last 4 KiB.
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = err + chunk.toString('utf8');
      err = text.slice(-4096);
      if (started) return;
      // Matched before trimming: the URL may sit at the start of one large chunk.
      const found = /(?:listening|MCP endpoint[^:]*:)\s*(http:\/\/\S+\/mcp)/.exec(text)?.[1];
      if (found !== undefined) {
        started = true;
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`${label} exited with ${String(code)}: ${err.slice(-2000)}`)),
    );
  });
  return { child, url };
}

/** An SDK v2 client pinned to 2026-07-28, connected to `url`. */
export async function pinnedClient(name: string, url: string): Promise<Client> {
  const client = new Client(
    { name, version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/**
 * `BENCH.calls` calls of echo tool `tool` with `BENCH.inFlight` outstanding, worker `w` on
 * `clients[w % clients.length]`; calls per second. The raw request, as bench/measure.ts does:
 * `callTool` would also validate every result against the tool's cached outputSchema in this
 * (bench) process, on the same 2 cores.
 */
export async function echoThroughput(
  clients: readonly Client[],
  tool: string,
  label: string,
): Promise<number> {
  let next = 0;
  const worker = async (w: number): Promise<void> => {
    const client = clients[w % clients.length] as Client;
    while (next < BENCH.calls) {
      const i = next++;
      if (performance.now() > BENCH.deadline) throw new Error('bench time budget exceeded');
      const result = (await client.request(
        { method: 'tools/call', params: { name: tool, arguments: { message: `m${i}` } } },
        { timeout: BENCH.callTimeoutMs },
      )) as { isError?: boolean };
      if (result.isError === true)
        throw new Error(`${label}: isError ${JSON.stringify(result).slice(0, 200)}`);
    }
  };
  const begin = performance.now();
  await Promise.all(Array.from({ length: Math.min(BENCH.inFlight, BENCH.calls) }, (_, w) => worker(w)));
  return BENCH.calls / ((performance.now() - begin) / 1000);
}
