/**
 * P10: per-caller copies of a server (`instances: per_session`), on connections that only count
 * their starts and closes, and a clock the test moves.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { TimerHandle, Timers } from '../../src/core/timers.js';
import type { Connection } from '../../src/downstream/connection.js';
import type { DispatchTarget } from '../../src/downstream/dispatch.js';
import { Instances } from '../../src/downstream/instances.js';
import { serverConfig, stdioTransport } from '../helpers/fixtures.js';

/** A clock that moves only when told; due timers run on `advance`. */
class ManualTimers implements Timers {
  #now = 0;
  readonly #due = new Map<number, { at: number; fn: () => void }>();
  #next = 0;
  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    this.#next += 1;
    this.#due.set(this.#next, { at: this.#now + ms, fn });
    return this.#next;
  }
  clearTimeout(handle: TimerHandle): void {
    this.#due.delete(handle as number);
  }
  get pending(): number {
    return this.#due.size;
  }
  advance(ms: number): void {
    this.#now += ms;
    for (const [handle, timer] of [...this.#due]) {
      if (timer.at > this.#now) continue;
      this.#due.delete(handle);
      timer.fn();
    }
  }
}

interface FakeConnection {
  readonly id: number;
  closed: boolean;
}

function setup(max = 2, idleMs = 1000) {
  const timers = new ManualTimers();
  const made: FakeConnection[] = [];
  const server = serverConfig('git', stdioTransport('node', []), {
    instances: { mode: 'per_session', max, idleMs },
  });
  const instances = new Instances({
    server,
    logger: pino({ level: 'silent' }),
    timers,
    connect: () => {
      const fake: FakeConnection = { id: made.length + 1, closed: false };
      made.push(fake);
      return {
        start: () => Promise.resolve(),
        close: () => {
          fake.closed = true;
          return Promise.resolve();
        },
        killNow: () => (fake.closed = true),
        fake,
      } as unknown as Connection;
    },
  });
  /** Which fake connection served a call of `key`. */
  const call = async (key: string): Promise<number | string> => {
    const out = await instances.run(key, 'status', (target: DispatchTarget) =>
      Promise.resolve((target.connection as unknown as { fake: FakeConnection }).fake.id),
    );
    return typeof out === 'number' ? out : out.success ? 'ok' : out.errorType;
  };
  return { timers, made, instances, call };
}

/** Lets the copies' closes (after their slots drain) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('per-caller copies', () => {
  it('P10: each caller key gets its own copy, started at its first call and reused after', async () => {
    const { instances, call, made } = setup(4);
    expect(await call('a')).toBe(1);
    expect(await call('b')).toBe(2);
    expect(await call('a')).toBe(1);
    expect(made).toHaveLength(2);
    expect(instances.size).toBe(2);
  });

  it('P10: at max_instances a new caller replaces the copy idle the longest', async () => {
    const { instances, call, made } = setup(2);
    await call('a');
    await call('b');
    await call('a'); // b is now the least recently used
    expect(await call('c')).toBe(3);
    await settle();
    expect(made.map((c) => c.closed)).toEqual([false, true, false]);
    expect(instances.size).toBe(2);
  });

  it('P10: at max_instances with a call open on every copy, a new caller is answered overloaded', async () => {
    const { instances, call } = setup(1);
    let release!: () => void;
    const open = instances.run('a', 'hold', () => new Promise<void>((resolve) => (release = resolve)));
    await settle();
    expect(await call('b')).toBe('overloaded');
    release();
    await open;
    expect(await call('b')).toBe(2);
  });

  it('P10: a copy with no call for instance_idle_ms is stopped; a copy in use is kept', async () => {
    const { instances, call, timers, made } = setup(4, 1000);
    await call('a');
    timers.advance(600);
    await call('b');
    timers.advance(600); // a idle 1,200 ms, b 600 ms
    await settle();
    expect(made.map((c) => c.closed)).toEqual([true, false]);
    timers.advance(1000);
    await settle();
    expect(made.map((c) => c.closed)).toEqual([true, true]);
    expect(instances.size).toBe(0);
    // An idle gateway keeps no sweep timer.
    expect(timers.pending).toBe(0);
  });

  it('P10: when a caller goes away its copy stops, and its next call starts a new one', async () => {
    const { instances, call, made } = setup(4);
    await call('a');
    instances.release('a');
    await settle();
    expect(made[0]?.closed).toBe(true);
    expect(instances.size).toBe(0);
    expect(await call('a')).toBe(2);
  });

  it('P10: after close, a new caller is answered downstream_unavailable and every copy is stopped', async () => {
    const { instances, call, made } = setup(4);
    await call('a');
    await instances.close();
    expect(made[0]?.closed).toBe(true);
    expect(await call('b')).toBe('downstream_unavailable');
  });
});
