/** The one bounded wait of every layer (core/timers.ts), on a hand-made clock. */
import { describe, expect, it } from 'vitest';
import { raceTimeout, type Timers } from '../../src/core/timers.js';

/** A clock whose timers fire only when `fire()` is called; `cleared` counts cleared timers. */
function manualClock(): Timers & { fire(): void; cleared: number; pending: number } {
  const timers = new Map<number, () => void>();
  let next = 0;
  const clock = {
    cleared: 0,
    get pending() {
      return timers.size;
    },
    now: () => 0,
    setTimeout(fn: () => void) {
      timers.set(++next, fn);
      return next;
    },
    clearTimeout(handle: unknown) {
      if (timers.delete(handle as number)) clock.cleared++;
    },
    fire() {
      for (const [id, fn] of [...timers]) {
        timers.delete(id);
        fn();
      }
    },
  };
  return clock;
}

describe('raceTimeout', () => {
  it.each([
    ['a promise that resolves first', () => Promise.resolve(1), 'done'],
    [
      'a promise that rejects first (it ended: that is all a bounded wait asks)',
      () => Promise.reject(new Error('x')),
      'done',
    ],
  ] as const)('arch: %s is done, and its timer is cleared', async (_label, promise, expected) => {
    const clock = manualClock();
    expect(await raceTimeout(promise(), 1000, clock)).toBe(expected);
    expect(clock.pending).toBe(0);
  });

  it('arch: a promise that never settles times out when its timer fires', async () => {
    const clock = manualClock();
    const waiting = raceTimeout(new Promise(() => {}), 1000, clock);
    clock.fire();
    expect(await waiting).toBe('timeout');
  });
});
