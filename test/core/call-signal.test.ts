/**
 * P3's cancellation without an AbortController per call (core/call-signal.ts): a LazySignal
 * behaves as an AbortSignal does for what the call path uses, and makes the real one only when
 * asked, aborted alike.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { abortSignalOf, LazySignal, type AbortListener } from '../../src/core/call-signal.js';

let cleanup: (() => void) | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  cleanup?.();
  cleanup = undefined;
});

/** What happens to a LazySignal and to an AbortSignal given the same steps, side by side. */
function bothWays(steps: (signal: LazySignal | AbortSignal, abort: (reason?: unknown) => void) => unknown) {
  const lazy = new LazySignal();
  const controller = new AbortController();
  return {
    lazy: steps(lazy, (reason) => lazy.abort(reason)),
    real: steps(controller.signal, (reason) => controller.abort(reason)),
  };
}

describe('LazySignal', () => {
  const cases: Array<
    [string, (signal: LazySignal | AbortSignal, abort: (reason?: unknown) => void) => unknown]
  > = [
    [
      'listeners run once each, in the order added',
      (signal, abort) => {
        const seen: string[] = [];
        signal.addEventListener('abort', () => seen.push('a'));
        signal.addEventListener('abort', { handleEvent: () => seen.push('b') });
        signal.addEventListener('abort', () => seen.push('c'));
        abort('x');
        abort('y');
        return seen;
      },
    ],
    [
      'a listener added twice runs once',
      (signal, abort) => {
        const seen: string[] = [];
        const listener = (): number => seen.push('once');
        signal.addEventListener('abort', listener);
        signal.addEventListener('abort', listener);
        abort();
        return seen;
      },
    ],
    [
      'a removed listener does not run; the others do',
      (signal, abort) => {
        const seen: string[] = [];
        const first = (): number => seen.push('first');
        const second = { handleEvent: (): number => seen.push('second') };
        signal.addEventListener('abort', first);
        signal.addEventListener('abort', second);
        signal.removeEventListener('abort', first);
        abort();
        return seen;
      },
    ],
    [
      'a listener removed by an earlier one does not run',
      (signal, abort) => {
        const seen: string[] = [];
        const third = (): number => seen.push('third');
        signal.addEventListener('abort', () => {
          seen.push('first');
          signal.removeEventListener('abort', third);
        });
        signal.addEventListener('abort', () => seen.push('second'));
        signal.addEventListener('abort', third);
        abort();
        return seen;
      },
    ],
    [
      'a listener added after the abort never runs',
      (signal, abort) => {
        const seen: string[] = [];
        abort('gone');
        signal.addEventListener('abort', () => seen.push('late'));
        abort('again');
        return seen;
      },
    ],
    [
      'the first reason stays',
      (signal, abort) => {
        abort('first');
        abort('second');
        return [signal.aborted, signal.reason];
      },
    ],
    [
      'no reason gives an AbortError DOMException',
      (signal, abort) => {
        const before = signal.aborted;
        abort();
        const reason = signal.reason as DOMException;
        return [before, signal.aborted, reason instanceof DOMException, reason.name, reason.message];
      },
    ],
  ];
  it.each(cases)('P3: as an AbortSignal does: %s', (_name, steps) => {
    const { lazy, real } = bothWays(steps);
    expect(lazy).toEqual(real);
  });

  it('P3: a throwing listener does not stop the others, and its throw is reported as uncaught', () => {
    const reported: Array<() => void> = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) => reported.push(task));
    const signal = new LazySignal();
    const seen: string[] = [];
    signal.addEventListener('abort', () => {
      throw new Error('listener broke');
    });
    signal.addEventListener('abort', () => seen.push('after'));
    signal.abort();
    expect(seen).toEqual(['after']);
    expect(reported).toHaveLength(1);
    expect(() => reported[0]!()).toThrow('listener broke');
  });

  it('P3, issue 57: the real AbortSignal is made only when asked, once, and aborts with the same reason', () => {
    let made = 0;
    const Real = globalThis.AbortController;
    globalThis.AbortController = class extends Real {
      constructor() {
        super();
        made += 1;
      }
    };
    cleanup = () => (globalThis.AbortController = Real);
    const signal = new LazySignal();
    const listener: AbortListener = () => undefined;
    signal.addEventListener('abort', listener);
    signal.removeEventListener('abort', listener);
    expect(made).toBe(0);

    const real = abortSignalOf(signal);
    expect(abortSignalOf(signal)).toBe(real);
    expect(made).toBe(1);
    const heard: unknown[] = [];
    real.addEventListener('abort', () => heard.push(real.reason));
    signal.abort('stop');
    expect(heard).toEqual(['stop']);

    const late = new LazySignal();
    late.abort('before');
    expect(late.toAbortSignal().aborted).toBe(true);
    expect(late.toAbortSignal().reason).toBe('before');
  });

  it('P3: an AbortSignal is its own real signal', () => {
    const signal = new AbortController().signal;
    expect(abortSignalOf(signal)).toBe(signal);
    expect(abortSignalOf(undefined)).toBeUndefined();
  });
});
