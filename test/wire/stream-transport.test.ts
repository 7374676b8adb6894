/**
 * The message pump both stdio ends share (wire/stream-transport.ts), on in-memory streams.
 */
import { PassThrough, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StreamTransport, type OversizedMessage } from '../../src/wire/stream-transport.js';

class TestTransport extends StreamTransport {
  readonly oversizedSeen: OversizedMessage[] = [];
  readonly unparsableSeen: string[] = [];
  constructor(
    readonly input = new PassThrough(),
    readonly output = new PassThrough(),
    limit = 1024,
  ) {
    super(limit);
  }
  start(): Promise<void> {
    this.attach(this.input, this.output);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.markClosed();
    return Promise.resolve();
  }
  protected oversized(message: OversizedMessage): void {
    this.oversizedSeen.push(message);
  }
  protected unparsable(error: string): void {
    this.unparsableSeen.push(error);
  }
}

const line = (id: number): string => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`;

describe('StreamTransport', () => {
  it('U1/P7: lines are delivered in order, unparsable and oversized ones go to their hooks', async () => {
    const transport = new TestTransport(undefined, undefined, 200);
    const seen: JSONRPCMessage[] = [];
    transport.onmessage = (message) => seen.push(message);
    await transport.start();
    transport.input.write(`${line(1)}oops\n{"pad":"${'x'.repeat(300)}","id":4}\n${line(2)}`);
    expect(seen.map((m) => (m as { id: number }).id)).toEqual([1, 2]);
    expect(transport.unparsableSeen).toEqual([expect.stringContaining('not JSON')]);
    expect(transport.oversizedSeen).toEqual([{ bytes: 317, limit: 200, id: 4 }]);
  });

  it('U1: a handler that closes the transport stops delivery, even of lines in the same chunk', async () => {
    const transport = new TestTransport();
    const seen: unknown[] = [];
    let closes = 0;
    transport.onclose = () => (closes += 1);
    transport.onmessage = (message) => {
      seen.push(message);
      void transport.close();
    };
    await transport.start();
    transport.input.write(line(1) + line(2) + line(3));
    expect(seen).toHaveLength(1);
    await transport.close();
    expect(closes).toBe(1);
  });

  it('U1: send writes one line per message and rejects once closed', async () => {
    const transport = new TestTransport();
    await transport.start();
    const written: string[] = [];
    transport.output.on('data', (chunk: Buffer) => written.push(chunk.toString('utf8')));
    await transport.send({ jsonrpc: '2.0', id: 5, result: {} });
    expect(written.join('')).toBe('{"jsonrpc":"2.0","id":5,"result":{}}\n');
    await transport.close();
    await expect(transport.send({ jsonrpc: '2.0', id: 6, result: {} })).rejects.toThrow('Not connected');
  });

  it("U1: a lone message is written at once; a turn's others, and a burst's next turn, together at the turn's end", async () => {
    const writes: string[][] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push([chunk.toString('utf8')]);
        done();
      },
      writev(chunks, done) {
        writes.push(chunks.map(({ chunk }) => (chunk as Buffer).toString('utf8')));
        done();
      },
    });
    const transport = new TestTransport(undefined, output as unknown as PassThrough);
    await transport.start();
    const ids = (batch: string[]): number[] => batch.map((text) => (JSON.parse(text) as { id: number }).id);
    const sent = [1, 2, 3].map((id) => transport.send({ jsonrpc: '2.0', id, result: {} }));
    // A lone answer (a sequential call's) leaves before anything else runs.
    expect(writes.map(ids)).toEqual([[1]]);
    await Promise.all(sent);
    expect(writes.map(ids)).toEqual([[1], [2, 3]]);
    // After a turn of three (64 calls in flight), the next turn's first waits for its turn's end.
    const fourth = transport.send({ jsonrpc: '2.0', id: 4, result: {} });
    expect(writes.map(ids)).toEqual([[1], [2, 3]]);
    await fourth;
    expect(writes.map(ids)).toEqual([[1], [2, 3], [4]]);
    // After a turn of one (a sequential call), the next one leaves at once again.
    void transport.send({ jsonrpc: '2.0', id: 5, result: {} });
    expect(writes.map(ids)).toEqual([[1], [2, 3], [4], [5]]);
  });

  it('U1: send waits for drain on a full stream and rejects if the stream closes first', async () => {
    const transport = new TestTransport(undefined, new PassThrough({ highWaterMark: 16 }));
    await transport.start();
    const pending = transport.send({ jsonrpc: '2.0', id: 7, result: { pad: 'y'.repeat(100) } });
    transport.output.destroy();
    await expect(pending).rejects.toThrow('Not connected');
  });

  it('U1: writes to a host that stopped reading share one drain wait (no listener per message)', async () => {
    const output = new PassThrough({ highWaterMark: 16 });
    const transport = new TestTransport(undefined, output);
    await transport.start();
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const sends = Array.from({ length: 50 }, (_, id) =>
        transport.send({ jsonrpc: '2.0', id, result: { pad: 'y'.repeat(40) } }),
      );
      expect(output.listenerCount('drain')).toBe(1);
      expect(output.listenerCount('close')).toBe(1);
      output.resume();
      await Promise.all(sends);
      expect(output.listenerCount('drain')).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
