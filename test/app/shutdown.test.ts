/**
 * P5 shutdown logic with a fake signal target, a fake exit and fake timers: the order of events
 * and the exit codes, without killing anything real (the e2e tests do that).
 */
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installShutdown } from '../../src/app/shutdown.js';

const logger = pino({ level: 'silent' });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function setup(stop: (graceMs: number) => Promise<void>, inputEnded?: Promise<void>) {
  const target = new EventEmitter();
  const exit = vi.fn<(code: number) => void>();
  const forceKill = vi.fn<() => void>();
  const handle = installShutdown({
    stop,
    forceKill,
    logger,
    target,
    exit,
    graceMs: 1000,
    closeMs: 500,
    ...(inputEnded !== undefined ? { inputEnded } : {}),
  });
  return { target, exit, forceKill, handle };
}

describe('P5: graceful shutdown', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'P5: %s runs the graceful stop with the grace period, then exits 0',
    async (signal) => {
      const stop = vi.fn(() => Promise.resolve());
      const { target, exit, forceKill } = setup(stop);
      target.emit(signal, signal);
      await vi.runAllTimersAsync();
      expect(stop).toHaveBeenCalledWith(1000);
      expect(exit).toHaveBeenCalledExactlyOnceWith(0);
      expect(forceKill).not.toHaveBeenCalled();
    },
  );

  it('P5: the end of stdin starts the same shutdown', async () => {
    let end: () => void = () => undefined;
    const stop = vi.fn(() => Promise.resolve());
    const { exit } = setup(stop, new Promise<void>((resolve) => (end = resolve)));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(stop).not.toHaveBeenCalled();
    end();
    await vi.runAllTimersAsync();
    expect(exit).toHaveBeenCalledExactlyOnceWith(0);
  });

  it('P5: a second signal during the shutdown kills the children and exits at once', async () => {
    const stop = vi.fn(() => new Promise<void>(() => undefined));
    const { target, exit, forceKill } = setup(stop);
    target.emit('SIGTERM', 'SIGTERM');
    await vi.advanceTimersByTimeAsync(100);
    expect(exit).not.toHaveBeenCalled();
    target.emit('SIGINT', 'SIGINT');
    expect(forceKill).toHaveBeenCalledOnce();
    expect(exit).toHaveBeenCalledExactlyOnceWith(1);
  });

  it('P5: a stop that hangs past grace + close time is forced, never left running', async () => {
    const stop = vi.fn(() => new Promise<void>(() => undefined));
    const { handle, exit, forceKill } = setup(stop);
    void handle.trigger('test');
    await vi.advanceTimersByTimeAsync(1499);
    expect(exit).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(forceKill).toHaveBeenCalledOnce();
    expect(exit).toHaveBeenCalledExactlyOnceWith(1);
  });

  it('P5: trigger is idempotent: the stop runs once however often it is asked', async () => {
    const stop = vi.fn(() => Promise.resolve());
    const { handle, exit } = setup(stop);
    await Promise.all([handle.trigger('a'), handle.trigger('b')]);
    expect(stop).toHaveBeenCalledOnce();
    expect(exit).toHaveBeenCalledExactlyOnceWith(0);
  });
});
