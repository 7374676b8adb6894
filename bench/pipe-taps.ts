/**
 * The hooks `--hops` stamps pipes with, in a bench target (`hops-preload.ts`) and in the bench
 * process itself (`hops-host.ts`): every child spawned from now on, and every read and write of
 * a `net.Socket` (child and process pipes are sockets). Bench only, never the product.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import type { ChildProcess, spawn as SpawnFn } from 'node:child_process';

/**
 * Calls `seen` with each child this process spawns from now on, and the command line it was
 * started with. Patches `child_process.spawn`, which `cross-spawn` (the SDK's stdio client) calls,
 * and refreshes the ES binding of the builtin that our own stdio client imports.
 */
export function onSpawn(seen: (child: ChildProcess, command: string) => void): void {
  const require = createRequire(import.meta.url);
  const childProcess = require('node:child_process') as { spawn: typeof SpawnFn };
  const spawn = childProcess.spawn;
  childProcess.spawn = function (this: unknown, ...args: Parameters<typeof SpawnFn>): ChildProcess {
    const child = (spawn as (...a: unknown[]) => ChildProcess).apply(this, args);
    const argv = Array.isArray(args[1]) ? (args[1] as readonly string[]) : [];
    seen(child, [String(args[0]), ...argv].join(' '));
    return child;
  } as typeof SpawnFn;
  syncBuiltinESMExports();
}

/** What to do on each socket read (before its `data` listeners run) and after each write. */
export interface SocketTaps {
  read(socket: net.Socket): void;
  /** `start` and `end`: `process.hrtime.bigint()` around the write. */
  write(socket: net.Socket, start: bigint, end: bigint): void;
}

/** Runs `taps` on every `net.Socket` read and write from now on. */
export function onSocketIo(taps: SocketTaps): void {
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (
    this: net.Socket,
    name: string | symbol,
    ...rest: unknown[]
  ): boolean {
    if (name === 'data') taps.read(this);
    return (emit as (...a: unknown[]) => boolean).call(this, name, ...rest);
  } as typeof emit;
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: net.Socket, ...args: unknown[]): boolean {
    const start = process.hrtime.bigint();
    const written = (write as (...a: unknown[]) => boolean).apply(this, args);
    taps.write(this, start, process.hrtime.bigint());
    return written;
  } as typeof write;
}
