/**
 * `npm run bench -- --hops`: loaded into a bench target with `node --import` (never into the
 * product). It timestamps every read and write of the target's two pipes, its own stdin/stdout
 * (the host) and its child's stdout/stdin (the downstream), and writes them to
 * `<dir>/hops-<pid>.json` at exit, where `<dir>` is this module's `?dir=` query. `hops.ts` turns
 * them into where a call's time goes inside the target (docs/performance.md).
 */
import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { basename, join } from 'node:path';
import type { ChildProcess, spawn as SpawnFn } from 'node:child_process';

const dir = new URL(import.meta.url).searchParams.get('dir');
const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as { spawn: typeof SpawnFn };

/** Flat: kind, then one (read) or two (write start, end) hrtime stamps in ns. */
const events: Array<string | bigint> = [];
/** ns from each write to the downstream until the target's event loop next reaches its check phase. */
const busyAfterCout: number[] = [];
/** The same after each write to the host. */
const busyAfterOut: number[] = [];
const CHILD_OUT = Symbol('child stdout');
const CHILD_IN = Symbol('child stdin');

if (dir !== null) {
  const spawn = childProcess.spawn;
  childProcess.spawn = function (this: unknown, ...args: Parameters<typeof SpawnFn>): ChildProcess {
    const child = (spawn as (...a: unknown[]) => ChildProcess).apply(this, args);
    if (child.stdout !== null) (child.stdout as unknown as Record<symbol, boolean>)[CHILD_OUT] = true;
    if (child.stdin !== null) (child.stdin as unknown as Record<symbol, boolean>)[CHILD_IN] = true;
    return child;
  } as typeof SpawnFn;
  // Our stdio client imports `spawn` as an ES binding of the builtin: refresh it.
  syncBuiltinESMExports();

  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (
    this: net.Socket,
    name: string | symbol,
    ...rest: unknown[]
  ): boolean {
    if (name === 'data') {
      if (this === (process.stdin as unknown)) events.push('in', process.hrtime.bigint());
      else if ((this as unknown as Record<symbol, boolean>)[CHILD_OUT])
        events.push('cin', process.hrtime.bigint());
    }
    return (emit as (...a: unknown[]) => boolean).call(this, name, ...rest);
  } as typeof emit;

  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]): boolean {
    const start = process.hrtime.bigint();
    const written = (write as (...a: unknown[]) => boolean).apply(this, args);
    if (this === (process.stdout as unknown)) {
      const end = process.hrtime.bigint();
      events.push('out', start, end);
      setImmediate(() => busyAfterOut.push(Number(process.hrtime.bigint() - end)));
    } else if ((this as unknown as Record<symbol, boolean>)[CHILD_IN]) {
      const end = process.hrtime.bigint();
      events.push('cout', start, end);
      setImmediate(() => busyAfterCout.push(Number(process.hrtime.bigint() - end)));
    }
    return written;
  } as typeof write;

  process.on('exit', () => {
    const target = basename(process.argv[1] ?? 'unknown');
    writeFileSync(
      join(dir, `hops-${process.pid}.json`),
      JSON.stringify({ target, events: events.map((event) => String(event)), busyAfterCout, busyAfterOut }),
    );
  });
}
