import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallSlots } from '../../src/downstream/slots.js';

/** A task that runs until `finish()` is called; records the peak number running at once. */
function gate() {
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const finishers = new Map<number, () => void>();
  const task = (id: number) => async () => {
    running++;
    peak = Math.max(peak, running);
    started.push(id);
    await new Promise<void>((resolve) => finishers.set(id, resolve));
    running--;
    return id;
  };
  return {
    task,
    started,
    finish: (id: number) => finishers.get(id)?.(),
    running: () => running,
    peak: () => peak,
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('CallSlots', () => {
  it('P2: a call with a free slot and nobody waiting runs at once', async () => {
    const slots = new CallSlots(2);
    const g = gate();
    const a = slots.run(g.task(1));
    expect(g.started).toEqual([1]);
    expect(slots.inFlight).toBe(1);
    expect(slots.hasFreeSlot).toBe(true);
    g.finish(1);
    expect(await a).toBe(1);
    expect(slots.inFlight).toBe(0);
  });

  it('P2: at most `concurrency` run at once; the rest wait and start in arrival order', async () => {
    const slots = new CallSlots(2);
    const g = gate();
    const all = [1, 2, 3, 4, 5].map((id) => slots.run(g.task(id)));
    await settle();
    expect(g.started).toEqual([1, 2]);
    expect(slots.inFlight).toBe(2);
    expect(slots.waiting).toBe(3);
    expect(slots.hasFreeSlot).toBe(false);
    g.finish(2);
    await settle();
    expect(g.started).toEqual([1, 2, 3]);
    g.finish(1);
    await settle();
    expect(g.started).toEqual([1, 2, 3, 4]);
    g.finish(3);
    g.finish(4);
    await settle();
    g.finish(5);
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5]);
    expect(g.peak()).toBe(2);
  });

  it('P2: a call arriving while others wait queues behind them even if a slot is about to free', async () => {
    const slots = new CallSlots(1);
    const g = gate();
    void slots.run(g.task(1));
    void slots.run(g.task(2));
    g.finish(1);
    // 1 has finished but its finally has not run yet: 3 must not overtake 2.
    void slots.run(g.task(3));
    await settle();
    expect(g.started).toEqual([1, 2]);
    g.finish(2);
    await settle();
    expect(g.started).toEqual([1, 2, 3]);
    g.finish(3);
    await slots.onIdle();
  });

  it('P3: aborting a waiting call rejects it with the reason and it never runs', async () => {
    const slots = new CallSlots(1);
    const g = gate();
    void slots.run(g.task(1));
    const controller = new AbortController();
    const waiting = slots.run(g.task(2), controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    expect(slots.waiting).toBe(0);
    g.finish(1);
    await slots.onIdle();
    expect(g.started).toEqual([1]);
  });

  it('P5: onIdle waits for calls that skipped the queue and for waiting ones', async () => {
    const slots = new CallSlots(1);
    const g = gate();
    void slots.run(g.task(1));
    void slots.run(g.task(2));
    let idle = false;
    void slots.onIdle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    g.finish(1);
    await settle();
    expect(idle).toBe(false);
    g.finish(2);
    await settle();
    expect(idle).toBe(true);
  });

  it('P2: a task that throws frees its slot', async () => {
    const slots = new CallSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(slots.inFlight).toBe(0);
    const g = gate();
    const next = slots.run(g.task(7));
    g.finish(7);
    expect(await next).toBe(7);
  });

  it('P2: any interleaving of arrivals and completions keeps the limit, runs every call once, in arrival order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        async (limit, steps) => {
          const slots = new CallSlots(limit);
          const g = gate();
          const finished = new Set<number>();
          const calls: Promise<number>[] = [];
          let next = 0;
          for (const arrive of steps) {
            if (arrive) calls.push(slots.run(g.task(next++)));
            else {
              // Finish the oldest running call.
              const oldest = g.started.find((id) => !finished.has(id));
              if (oldest !== undefined) {
                finished.add(oldest);
                g.finish(oldest);
              }
            }
            await settle();
            expect(g.running()).toBeLessThanOrEqual(limit);
            expect(slots.inFlight).toBe(g.running());
          }
          while (finished.size < next) {
            for (const id of g.started) {
              if (finished.has(id)) continue;
              finished.add(id);
              g.finish(id);
            }
            await settle();
          }
          expect(await Promise.all(calls)).toEqual([...Array(next).keys()]);
          expect(g.started).toEqual([...Array(next).keys()]);
          expect(g.peak()).toBeLessThanOrEqual(limit);
          await slots.onIdle();
        },
      ),
      { numRuns: 200 },
    );
  });
});
