import { describe, expect, it } from 'vitest';
import { ProtocolError as McpError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { classifyError, splitMcpErrorPrefix, stripMcpErrorPrefix } from '../../src/core/classify.js';
import { ERROR_TYPES } from '../../src/core/result.js';

/** A Node system error as child_process.spawn reports it. */
function spawnError(code: string): Error {
  return Object.assign(new Error(`spawn npx ${code}`), { code, syscall: 'spawn npx', path: 'npx' });
}

/** Errors from "another copy" of a package: same shape, different class. */
class ForeignTimeoutError extends Error {
  override name = 'TimeoutError';
}

const context = { server: 'db', tool: 'query', timeoutMs: 5000, elapsedMs: 12 };

describe('stripMcpErrorPrefix', () => {
  it.each([
    ['a doubled prefix', 'MCP error -32602: MCP error -32602: bad input', 'bad input'],
    ['a single prefix', 'MCP error -32603: internal', 'internal'],
    ['different codes', 'MCP error -32001: MCP error -32000: closed', 'closed'],
    ['no prefix', 'plain message', 'plain message'],
    ['a prefix not at the start', 'see MCP error -1: x', 'see MCP error -1: x'],
    ['nothing after the prefix', 'MCP error -32603: ', 'MCP error -32603:'],
  ])('R3: %s', (_label, input, expected) => {
    expect(stripMcpErrorPrefix(input)).toBe(expected);
  });
});

describe('splitMcpErrorPrefix', () => {
  it.each([
    ['keeps the first code', 'MCP error -32602: MCP error -32602: bad', { message: 'bad', code: '-32602' }],
    ['no prefix, no code', 'bad', { message: 'bad' }],
    ['a positive code', 'MCP error 7: odd', { message: 'odd', code: '7' }],
  ])('R3/N7: %s', (_label, input, expected) => {
    expect(splitMcpErrorPrefix(input)).toEqual(expected);
  });
});

describe('classifyError', () => {
  it.each([
    [
      "the SDK's RequestTimeout is a timeout naming server and timeout",
      new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out'),
      {},
      'timeout',
      'No answer from "db" (tool "query") within 5000 ms',
    ],
    [
      'a timeout after our own abort is a cancellation',
      new SdkError(SdkErrorCode.RequestTimeout, 'AbortError'),
      { aborted: true },
      'cancelled',
      'The call to "db" (tool "query") was cancelled',
    ],
    [
      'the raw abort reason (any value) after our own abort is a cancellation',
      'stop',
      { aborted: true },
      'cancelled',
      'The call to "db" (tool "query") was cancelled',
    ],
    [
      'a closed connection after our own abort is still the cancellation asked for',
      new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'),
      { aborted: true },
      'cancelled',
      'The call to "db" (tool "query") was cancelled',
    ],
    [
      'an AbortError is a cancellation',
      new DOMException('This operation was aborted', 'AbortError'),
      {},
      'cancelled',
      'The call to "db" (tool "query") was cancelled',
    ],
    [
      'a plain object named AbortError',
      { name: 'AbortError', message: 'aborted' },
      {},
      'cancelled',
      'The call to "db" (tool "query") was cancelled',
    ],
    [
      "p-queue's TimeoutError",
      new ForeignTimeoutError('Promise timed out after 5000 milliseconds'),
      {},
      'timeout',
      'No answer from "db" (tool "query") within 5000 ms',
    ],
    [
      "the SDK's ConnectionClosed",
      new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'),
      {},
      'downstream_unavailable',
      '"db" (tool "query") is unavailable: Connection closed',
    ],
    [
      "the SDK's NotConnected, whatever its text",
      new SdkError(SdkErrorCode.NotConnected, 'transport gone'),
      {},
      'downstream_unavailable',
      '"db" (tool "query") is unavailable: transport gone',
    ],
    [
      "a downstream's own JSON-RPC -32001 is its error, not our timeout",
      new McpError(-32001, 'Quota window'),
      {},
      'downstream_error',
      'Quota window',
    ],
    [
      '"Not connected" without a code',
      new Error('Not connected'),
      {},
      'downstream_unavailable',
      '"db" (tool "query") is unavailable: Not connected',
    ],
    [
      'a spawn ENOENT',
      spawnError('ENOENT'),
      {},
      'downstream_unavailable',
      '"db" (tool "query") is unavailable (ENOENT): spawn npx ENOENT',
    ],
    [
      'ECONNREFUSED',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
      {},
      'downstream_unavailable',
      '"db" (tool "query") is unavailable (ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:9',
    ],
    [
      '-32602 with a doubled prefix',
      new McpError(-32602, 'MCP error -32602: Invalid arguments'),
      {},
      'downstream_error',
      'Invalid arguments',
    ],
    ['-32601', new McpError(-32601, 'Method not found'), {}, 'downstream_error', 'Method not found'],
    ['a thrown string', 'kaput', {}, 'downstream_error', 'kaput'],
    ['a thrown undefined', undefined, {}, 'downstream_error', 'undefined was thrown'],
    ['a thrown null', null, {}, 'downstream_error', 'null was thrown'],
    ['a thrown plain object', { reason: 'x' }, {}, 'downstream_error', '{"reason":"x"}'],
    ['a thrown number', 42, {}, 'downstream_error', '42'],
    ['a generic Error', new Error('something broke'), {}, 'downstream_error', 'something broke'],
  ])('R3: %s', (_label, thrown, extra, errorType, error) => {
    const result = classifyError(thrown, { ...context, ...extra });
    expect(result).toMatchObject({ success: false, errorType, error });
    expect(ERROR_TYPES).toContain(result.errorType);
    expect(result.meta).toMatchObject({ server: 'db', tool: 'query', elapsedMs: 12, source: 'proxy' });
  });

  it('R3: JSON-RPC errors keep the numeric code in errorCode and errorData', () => {
    const result = classifyError(new McpError(-32603, 'MCP error -32603: boom', { trace: 'x' }), context);
    expect(result).toMatchObject({ errorCode: '-32603', errorData: { code: -32603, data: { trace: 'x' } } });
  });

  it('R3: an unknown JSON-RPC code is a downstream_error with its code', () => {
    const result = classifyError({ code: -32099, message: 'custom' }, context);
    expect(result).toMatchObject({
      errorType: 'downstream_error',
      errorCode: '-32099',
      errorData: { code: -32099 },
    });
  });

  it('R3: spawn errors keep code, syscall and path', () => {
    expect(classifyError(spawnError('EACCES'), context)).toMatchObject({
      errorCode: 'EACCES',
      errorData: { code: 'EACCES', syscall: 'spawn npx', path: 'npx' },
    });
  });

  it('R3: a timeout without a known timeout says so, and keeps timeout_ms when known', () => {
    expect(classifyError(new SdkError(SdkErrorCode.RequestTimeout, 'x'), {}).error).toBe(
      'No answer from the downstream server in time',
    );
    expect(classifyError(new SdkError(SdkErrorCode.RequestTimeout, 'x'), context).errorData).toEqual({
      timeout_ms: 5000,
    });
  });

  it('R1: the thrown value is kept in exception', () => {
    const thrown = new Error('x');
    expect(classifyError(thrown, context).exception).toBe(thrown);
    expect(classifyError('s', context).exception).toBe('s');
  });

  it('R3: a thrown value whose getters throw still gives a failure', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    const result = classifyError(hostile, context);
    expect(result.success).toBe(false);
    expect(ERROR_TYPES).toContain(result.errorType);
  });
});
