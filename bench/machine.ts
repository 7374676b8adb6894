/**
 * What /proc says: how busy the machine was with work that is not ours (the bench and every
 * process it started against the whole system, which the load average cannot tell apart), and
 * one target process's memory and CPU time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** CPU ticks so far: the whole system's busy time and ours (self plus reaped children). */
export interface CpuSnapshot {
  readonly systemBusy: number;
  readonly ours: number;
  readonly at: number;
}

/** USER_HZ: 100 on every Linux the bench targets (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/** A snapshot now. Children count once reaped, so take the closing one after the targets exit. */
export function cpuSnapshot(): CpuSnapshot {
  const cpu =
    readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // utime, stime, cutime, cstime are fields 14–17 of /proc/<pid>/stat.
  const ours = (fields[11] ?? 0) + (fields[12] ?? 0) + (fields[13] ?? 0) + (fields[14] ?? 0);
  return { systemBusy: user + nice + system + irq + softirq + steal, ours, at: performance.now() };
}

/** Average number of cores that other processes kept busy between two snapshots. */
export function foreignCores(before: CpuSnapshot, after: CpuSnapshot): number {
  const seconds = (after.at - before.at) / 1000;
  const foreignTicks = after.systemBusy - before.systemBusy - (after.ours - before.ours);
  return seconds > 0 ? Math.max(0, foreignTicks / CLOCK_TICKS / seconds) : 0;
}

/** Resident and peak resident memory of one process (children excluded), in MiB. */
export function memoryOf(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
}

/**
 * CPU time the process has used so far, in ms, to the nanosecond: the run time of each of its
 * threads from /proc/<pid>/task/<tid>/schedstat (the ticks of cpuTimeOf are 10 ms apart, too
 * coarse for a fresh process's first few thousand calls). Threads that have exited are not
 * counted; Node's threads live as long as the process.
 */
export function cpuTimeFineOf(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** CPU time (user + system) the process has used so far, in ms. */
export function cpuTimeOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}
