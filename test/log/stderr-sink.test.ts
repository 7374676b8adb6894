/**
 * L1, P5: the log's stderr never waits and never keeps the process alive: a full pipe is tried
 * again later, a gone reader (EPIPE) ends the sink, and the exit's flush is bounded.
 */
import { describe, expect, it } from 'vitest';
import { StderrSink, type SinkFs } from '../../src/log/stderr-sink.js';

type Step = { readonly error?: string; readonly take?: number };

/** A fake fd: each write takes the next step (default: everything written). */
function fakeFs(steps: Step[] = []): SinkFs & { written: string; syncCalls: number } {
  const fake = {
    written: '',
    syncCalls: 0,
    write(
      _fd: number,
      buffer: Uint8Array,
      offset: number,
      length: number,
      _position: null,
      callback: (error: NodeJS.ErrnoException | null, written: number) => void,
    ) {
      // Like the kernel: the bytes are taken now, the callback comes later.
      const step = steps.shift() ?? {};
      if (step.error !== undefined) {
        const error = Object.assign(new Error(step.error), { code: step.error });
        setImmediate(() => callback(error, 0));
        return;
      }
      const n = Math.min(length, step.take ?? length);
      fake.written += Buffer.from(buffer.subarray(offset, offset + n)).toString('utf8');
      setImmediate(() => callback(null, n));
    },
    writeSync(_fd: number, buffer: Uint8Array, offset: number, length: number) {
      fake.syncCalls++;
      const step = steps.shift() ?? {};
      if (step.error !== undefined) throw Object.assign(new Error(step.error), { code: step.error });
      const n = Math.min(length, step.take ?? length);
      fake.written += Buffer.from(buffer.subarray(offset, offset + n)).toString('utf8');
      return n;
    },
  };
  return fake;
}

describe('StderrSink', () => {
  it('L1: lines go out in order, a partial write continues where it stopped', async () => {
    const fs = fakeFs([{ take: 3 }]);
    const sink = new StderrSink({ fs });
    sink.write('first\n');
    sink.write('second\n');
    // Polled, not slept: on a loaded machine a few event-loop turns can outlast a 5 ms timer.
    await expect.poll(() => fs.written).toBe('first\nsecond\n');
  });

  it('L1: a full pipe (EAGAIN) is tried again later, nothing lost', async () => {
    const fs = fakeFs([{ error: 'EAGAIN' }, { error: 'EAGAIN' }]);
    const sink = new StderrSink({ fs, retryMs: 1 });
    sink.write('line\n');
    await expect.poll(() => fs.written).toBe('line\n');
    expect(sink.dropped).toBe(0);
  });

  it('L1: lines beyond the backlog bound are dropped and counted', async () => {
    const fs = fakeFs([{ error: 'EAGAIN' }]);
    const sink = new StderrSink({ fs, maxBytes: 10, retryMs: 1 });
    sink.write('in flight\n');
    sink.write('12345678\n');
    sink.write('too much\n');
    await expect.poll(() => fs.written).toBe('in flight\n12345678\n');
    expect(sink.dropped).toBe(1);
  });

  it('P5: a reader that is gone (EPIPE) ends the sink: later lines are dropped, the exit flush writes nothing', async () => {
    const fs = fakeFs([{ error: 'EPIPE' }]);
    const sink = new StderrSink({ fs });
    sink.write('lost\n');
    await expect.poll(() => sink.broken).toBe('EPIPE');
    sink.write('after\n');
    sink.flushSync();
    expect(fs.syncCalls).toBe(0);
    expect(sink.dropped).toBe(2);
  });

  it('P5: the exit flush gives up on EPIPE at once instead of retrying for ever', () => {
    const fs = fakeFs([{ error: 'EAGAIN' }, { error: 'EPIPE' }, {}, {}]);
    const sink = new StderrSink({ fs, flushDeadlineMs: 60_000, retryMs: 60_000 });
    sink.write('in flight\n');
    sink.write('waiting\n');
    sink.flushSync();
    expect(fs.syncCalls).toBe(1);
    expect(sink.broken).toBe('EPIPE');
  });

  it('P5: the exit flush into a pipe that stays full stops at its deadline', () => {
    const steps: Step[] = Array.from({ length: 10_000 }, () => ({ error: 'EAGAIN' }));
    const fs = fakeFs(steps);
    const sink = new StderrSink({ fs, flushDeadlineMs: 50 });
    sink.write('in flight\n');
    sink.write('never read\n');
    const began = Date.now();
    sink.flushSync();
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(sink.broken).toBe('EAGAIN');
  });

  it('L1: the exit flush writes what waits, after a write the kernel already has', async () => {
    const fs = fakeFs();
    const sink = new StderrSink({ fs });
    sink.write('first\n');
    sink.write('second\n');
    sink.flushSync();
    await expect.poll(() => fs.written).toBe('first\nsecond\n');
  });
});
