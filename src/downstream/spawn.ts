/**
 * How a stdio server's child process is spawned and signalled (C3, P5): the one place, used by
 * the stdio transport's own start and by the head start (`head-start.ts`, children spawned while
 * the rest of the gateway is still loading). Node built-ins and cross-spawn only, so that the head
 * start can load it in a few milliseconds.
 */
import type { ChildProcess } from 'node:child_process';
import spawn from 'cross-spawn';
import type { StdioTransportConfig } from '../config/types.js';

/** POSIX: each child leads its own process group, which is signalled as a whole. */
const GROUPS = process.platform !== 'win32';

/**
 * The variables a child inherits from our environment, as the SDK's `getDefaultEnvironment()`
 * has them (its module loads the whole client bundle, ~180 ms; `spawn.test.ts` holds the two
 * equal).
 */
const INHERITED =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'COMSPEC',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'PROGRAMDATA',
        'PROGRAMFILES',
        'PROGRAMFILES(X86)',
        'PROGRAMW6432',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'WINDIR',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** The safe subset of our environment a child gets (a value starting `()` is a shell function: left out). */
export function inheritedEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const key of INHERITED) {
    const value = env[key];
    if (value !== undefined && !value.startsWith('()')) kept[key] = value;
  }
  return kept;
}

/** What is spawned: the command, its arguments, its whole environment and its working directory. */
export interface SpawnSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** The child's whole environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** A configured stdio server's spawn: the safe default set plus the configured `env` (configured wins). */
export function spawnSpec(config: StdioTransportConfig): SpawnSpec {
  return {
    command: config.command,
    args: config.args,
    env: { ...inheritedEnvironment(), ...config.env },
    ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
  };
}

/**
 * Spawns `spec` with three pipes, in a process group of its own (POSIX, P5: the wrapper and
 * everything it started end together). A failure comes as the child's `error` event.
 */
export function spawnChild(spec: SpawnSpec): ChildProcess {
  const child = spawn(spec.command, [...spec.args], {
    env: { ...spec.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    shell: false,
    windowsHide: process.platform === 'win32',
    detached: GROUPS,
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
  });
  const { pid } = child;
  if (pid !== undefined) {
    running.add(pid);
    // 'close', not 'exit': what a wrapper started may still hold the pipes after the wrapper exited.
    child.once('close', () => running.delete(pid));
    if (!exitHooked) hookExit();
    exitHooked = true;
  }
  return child;
}

/**
 * The children still running. However this process ends (a clean stop has ended them already;
 * an uncaught error, `process.exit` or a signal has not), none is left behind: a server that
 * ignores its stdin closing would otherwise run on as an orphan, in its own process group.
 */
const running = new Set<number>();
let exitHooked = false;
function killLeftBehind(): void {
  for (const pid of running) signalProcessTree(pid, 'SIGKILL');
}

/** The signals whose default action ends the process without its 'exit' event. */
const ENDING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function hookExit(): void {
  process.once('exit', killLeftBehind);
  for (const signal of ENDING_SIGNALS) process.on(signal, endBySignal);
}

/**
 * A signal that nothing else in the process handles (a one-shot command, or `serve` before its
 * shutdown is installed, P5) would end it by the default action, past the 'exit' event: the
 * children are killed first, then the process ends by the same signal, as it would have. When
 * another listener handles the signal (the shutdown, the reload's SIGHUP), it is left to it.
 */
function endBySignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  killLeftBehind();
  for (const ending of ENDING_SIGNALS) process.off(ending, endBySignal);
  process.kill(process.pid, signal);
}

/**
 * Sends `signal` to the process group led by `pid` (POSIX), else to the process alone. Never
 * throws: a group that is already gone is what the caller wanted.
 */
export function signalProcessTree(pid: number, signal: NodeJS.Signals): void {
  try {
    // Never the pid alone as a fallback on POSIX: once the group is empty, that pid may already
    // belong to an unrelated process.
    process.kill(GROUPS ? -pid : pid, signal);
  } catch {
    // Gone already: exactly what the caller wanted.
  }
}
