/**
 * The request paths of a connection (routes.ts): a 2025 server's task-only tool runs as a task
 * (Q6), and a call that ends early cancels its task with a request that actually goes out.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Routes, type ConnectionCallOptions } from '../../src/downstream/routes.js';
import { systemTimers } from '../../src/wire/timers.js';
import { serverConfig, stdioTransport } from '../helpers/fixtures.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Routes', () => {
  it('Q6: a host that cancels a task-only tool call cancels the task, with a tasks/cancel sent under no aborted signal', async () => {
    const routes = new Routes(serverConfig('s', stdioTransport('node')), systemTimers);
    routes.index([
      { name: 'research', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
    ]);
    const sent: { method: string; aborted: boolean }[] = [];
    // The connection's send: like a real transport, a request under an aborted signal never leaves.
    const send = async (method: string, _params: Record<string, unknown>, options: ConnectionCallOptions) => {
      const aborted = options.signal?.aborted === true;
      sent.push({ method, aborted });
      if (aborted) throw new Error('aborted before it was sent');
      if (method === 'tools/call') return { task: { taskId: 't1', status: 'working', pollInterval: 100 } };
      if (method === 'tasks/get') return { taskId: 't1', status: 'working', pollInterval: 100 };
      return {};
    };
    const host = new AbortController();
    const call = routes.call('legacy', 'research', {}, { signal: host.signal }, send);
    const failed = expect(call).rejects.toThrow();
    await vi.advanceTimersByTimeAsync(250);
    host.abort(new Error('the host cancelled'));
    await failed;
    expect(sent.at(-1)).toEqual({ method: 'tasks/cancel', aborted: false });
  });

  it("Q6/E5: a 2026 server's task-only tool is called plainly (its own answer stands)", async () => {
    const routes = new Routes(serverConfig('s', stdioTransport('node')), systemTimers);
    routes.index([
      { name: 'research', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
    ]);
    const methods: string[] = [];
    await routes.call('modern', 'research', {}, {}, async (method) => {
      methods.push(method);
      return {};
    });
    expect(methods).toEqual(['tools/call']);
  });

  it('E5: a modern call mirrors x-mcp-header arguments into Mcp-Param headers; a legacy one does not', async () => {
    const routes = new Routes(serverConfig('s', stdioTransport('node')), systemTimers);
    routes.index([
      {
        name: 'where',
        inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
      },
    ]);
    const headers: unknown[] = [];
    const send = async (_m: string, _p: Record<string, unknown>, options: ConnectionCallOptions) => {
      headers.push(options.headers);
      return {};
    };
    await routes.call('modern', 'where', { region: 'eu' }, {}, send);
    await routes.call('legacy', 'where', { region: 'eu' }, {}, send);
    expect(headers).toEqual([{ 'Mcp-Param-Region': 'eu' }, undefined]);
  });
});
