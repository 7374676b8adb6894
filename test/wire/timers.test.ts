/**
 * The real clock's helpers (wire/timers.ts): turns of the event loop for CPU-only work (S2).
 */
import { describe, expect, it } from 'vitest';
import { turns } from '../../src/wire/timers.js';

describe('turns', () => {
  it('S2: work queued in one tick runs one piece per turn of the event loop, with I/O between', async () => {
    const turn = turns();
    const order: string[] = [];
    const work = [1, 2, 3].map((n) => turn().then(() => order.push(`search ${n}`)));
    // Stands for I/O callbacks: one per turn of the loop while the searches wait.
    let ticks = 0;
    const ticking = new Promise<void>((resolve) => {
      const tick = (): void => {
        order.push('tick');
        if (++ticks < 6) setImmediate(tick);
        else resolve();
      };
      setImmediate(tick);
    });
    await Promise.all([...work, ticking]);
    const searches = order.flatMap((entry, i) => (entry.startsWith('search') ? [i] : []));
    expect(order.filter((entry) => entry.startsWith('search'))).toEqual(['search 1', 'search 2', 'search 3']);
    for (let i = 1; i < searches.length; i++) expect(searches[i]! - searches[i - 1]!).toBeGreaterThan(1);
  });
});
