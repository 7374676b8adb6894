/**
 * `npm run bench -- --hops`: loaded into a bench target with `node --import` (never into the
 * product). It timestamps every read and write of the target's two pipes, its own stdin/stdout
 * (the host) and its child's stdout/stdin (the downstream), and writes them to
 * `<dir>/hops-<pid>.json` at exit, where `<dir>` is this module's `?dir=` query. `hops.ts` turns
 * them into where a call's time goes inside the target (docs/performance-log.md). The bench echo
 * server is loaded with it too: its own reads and writes are those of its stdin and stdout.
 */
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { onSocketIo, onSpawn } from './pipe-taps.js';

const dir = new URL(import.meta.url).searchParams.get('dir');

/** Flat: kind, then one (read) or two (write start, end) hrtime stamps in ns. */
const events: Array<string | bigint> = [];
/** ns from each write to the downstream until the target's event loop next reaches its check phase. */
const busyAfterCout: number[] = [];
/** The same after each write to the host. */
const busyAfterOut: number[] = [];
const CHILD_OUT = Symbol('child stdout');
const CHILD_IN = Symbol('child stdin');
const tagged = (socket: unknown, tag: symbol): boolean => (socket as Record<symbol, boolean>)[tag] === true;

if (dir !== null) {
  onSpawn((child) => {
    if (child.stdout !== null) (child.stdout as unknown as Record<symbol, boolean>)[CHILD_OUT] = true;
    if (child.stdin !== null) (child.stdin as unknown as Record<symbol, boolean>)[CHILD_IN] = true;
  });
  onSocketIo({
    read(socket) {
      if (socket === (process.stdin as unknown)) events.push('in', process.hrtime.bigint());
      else if (tagged(socket, CHILD_OUT)) events.push('cin', process.hrtime.bigint());
    },
    write(socket, start, end) {
      if (socket === (process.stdout as unknown)) {
        events.push('out', start, end);
        setImmediate(() => busyAfterOut.push(Number(process.hrtime.bigint() - end)));
      } else if (tagged(socket, CHILD_IN)) {
        events.push('cout', start, end);
        setImmediate(() => busyAfterCout.push(Number(process.hrtime.bigint() - end)));
      }
    },
  });

  process.on('exit', () => {
    const target = basename(process.argv[1] ?? 'unknown');
    writeFileSync(
      join(dir, `hops-${process.pid}.json`),
      JSON.stringify({
        target,
        parent: process.ppid,
        events: events.map((event) => String(event)),
        busyAfterCout,
        busyAfterOut,
      }),
    );
  });
}
