/**
 * `--hops` from the host's side: the bench process stamps its own pipes to every stdio target it
 * starts (the SDK v1 client's children), where `hops-preload.ts` stamps inside the targets. Per
 * sequential call it gives the **round trip** (our request written → the target's answer read:
 * everything the target and its downstream do, pipes and wake-ups included) and the **host's
 * turn** (that answer read → the next request written: the SDK client's parse and schema check
 * of the answer, the bench's loop, the next request's serialization). Two targets whose round
 * trips are equal differ in p50 only by what their answers cost the host (docs/performance-log.md).
 */
import { median } from './stats.js';
import { onSocketIo, onSpawn } from './pipe-taps.js';

/** One target process: what it was started as, and each pipe event in order (read or write, ns). */
interface Pipes {
  readonly command: string;
  readonly kinds: Array<'read' | 'write'>;
  readonly times: number[];
}

const TAG = Symbol('host hops');
const children: Pipes[] = [];
const pipesOf = (socket: unknown): Pipes | undefined => (socket as Record<symbol, Pipes | undefined>)[TAG];

/** Stamps the pipes of every child this process spawns from now on: call before the targets start. */
export function stampHostPipes(): void {
  onSpawn((child, command) => {
    const pipes: Pipes = { command, kinds: [], times: [] };
    children.push(pipes);
    for (const stream of [child.stdout, child.stdin]) {
      if (stream !== null) (stream as unknown as Record<symbol, Pipes>)[TAG] = pipes;
    }
  });
  onSocketIo({
    read(socket) {
      const pipes = pipesOf(socket);
      if (pipes === undefined) return;
      pipes.kinds.push('read');
      pipes.times.push(Number(process.hrtime.bigint()));
    },
    write(socket, start) {
      const pipes = pipesOf(socket);
      if (pipes === undefined) return;
      pipes.kinds.push('write');
      pipes.times.push(Number(start));
    },
  });
}

/** The bench's name for a target, from the command it was started with. */
function targetName(command: string): string {
  if (command.includes('passthrough.js')) return 'passthrough';
  if (command.includes('cli/main.js')) return 'mcp-normalizer';
  return 'direct';
}

/**
 * One markdown row per stdio target: medians in µs. Only strictly sequential stretches count
 * (write, read, write, read), so throughput rounds, where calls overlap, are left out.
 */
export function hostHopsTable(): string {
  const rows = [
    "| target | calls | round trip (request written → answer read) | host's turn (answer read → next request written) |",
    '|---|--:|--:|--:|',
  ];
  for (const { command, kinds, times } of children) {
    const trips: number[] = [];
    const turns: number[] = [];
    for (let i = 1; i + 2 < kinds.length; i++) {
      const pattern = kinds.slice(i - 1, i + 3).join(' ');
      const gap = ((times[i + 1] as number) - (times[i] as number)) / 1000;
      if (pattern === 'read write read write') trips.push(gap);
      else if (pattern === 'write read write read') turns.push(gap);
    }
    if (trips.length === 0) continue;
    rows.push(
      `| ${targetName(command)} | ${trips.length} | ${median(trips).toFixed(1)} | ${median(turns).toFixed(1)} |`,
    );
  }
  return rows.join('\n');
}
