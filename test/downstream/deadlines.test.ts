/**
 * P3: the queue deadlines on one timer (downstream/deadlines.ts): each fires at its own time,
 * earlier ones added later included; a cancelled one never fires; one timer at most.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from '../../src/downstream/deadlines.js';
import { systemTimers } from '../../src/wire/timers.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('queue deadlines', () => {
  it('P3: each deadline fires at its own time on one timer; a cancelled one never fires', async () => {
    const deadlines = new Deadlines(systemTimers);
    const fired: string[] = [];
    const at = (ms: number, name: string) => deadlines.add(Date.now() + ms, () => fired.push(name));
    at(1000, 'a');
    at(1000, 'b');
    const cancelled = at(500, 'cancelled');
    at(300, 'early');
    expect(vi.getTimerCount()).toBe(1);
    cancelled.cancel();
    await vi.advanceTimersByTimeAsync(299);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['early']);
    await vi.advanceTimersByTimeAsync(699);
    expect(fired).toEqual(['early']);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['early', 'a', 'b']);
    expect(vi.getTimerCount()).toBe(0);
  });
});
