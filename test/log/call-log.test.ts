/**
 * L1: one start line at trace (arguments redacted), one end line per call: debug on success with
 * the elapsed time, error on every failure with its errorType; N2: a warn line with the diff.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { failure, ok } from '../../src/core/result.js';
import { logCallEnd, logCallStart } from '../../src/log/call-log.js';
import { createLogger, serverLogger } from '../../src/log/logger.js';
import type { LogLevel } from '../../src/config/types.js';

type Line = Record<string, unknown>;

function sink(level: LogLevel = 'trace'): { logger: ReturnType<typeof createLogger>; lines: Line[] } {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(text) as Line);
      callback();
    },
  });
  return {
    logger: createLogger({ level, destination, redactKeys: ['token'], secrets: ['s3cret-env-value'] }),
    lines,
  };
}

const call = { exposedName: 'fs_read', server: 'fs', tool: 'read', requestId: 7 };

describe('logCallStart', () => {
  it('L1: at trace, logs exposed name, server, tool, request id and redacted arguments', () => {
    const { logger, lines } = sink('trace');
    logCallStart(logger, { ...call, args: { path: '/a', token: 'abc', deep: { token: 'x' } } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 10,
      event: 'call_start',
      exposedName: 'fs_read',
      server: 'fs',
      tool: 'read',
      requestId: 7,
      args: { path: '/a', token: '[REDACTED]', deep: { token: '[REDACTED]' } },
    });
  });

  it('L1: above trace, nothing is logged (arguments only at trace)', () => {
    const { logger, lines } = sink('debug');
    logCallStart(logger, { ...call, args: { path: '/a' } });
    expect(lines).toEqual([]);
  });

  it('L1: a server child logger does not get a second server key', () => {
    const { logger, lines } = sink('trace');
    logCallStart(serverLogger(logger, 'fs'), { ...call, args: {} });
    expect(JSON.stringify(lines[0]).match(/"server"/g)).toHaveLength(1);
  });
});

describe('logCallEnd', () => {
  const meta = { server: 'fs', tool: 'read', elapsedMs: 12, source: 'structured' as const };

  it('L1: success is one debug line with the elapsed time', () => {
    const { logger, lines } = sink('debug');
    logCallEnd(logger, ok({ a: 1 }, { meta }), call);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 20,
        event: 'call_end',
        exposedName: 'fs_read',
        elapsedMs: 12,
        requestId: 7,
      }),
    ]);
  });

  it('L1: success is silent at info', () => {
    const { logger, lines } = sink('info');
    logCallEnd(logger, ok(null, { meta }), call);
    expect(lines).toEqual([]);
  });

  it.each(['consent_required', 'invalid_arguments', 'unknown_tool'] as const)(
    'L1: a %s refusal (the agent can mend it) is an info line with its errorType, not an error',
    (errorType) => {
      const { logger, lines } = sink('info');
      logCallEnd(logger, failure(errorType, 'fix it', { meta }), call);
      expect(lines).toEqual([expect.objectContaining({ level: 30, event: 'call_end', errorType })]);
    },
  );

  it('L1, D3: a call that waits for its user to log in is an info line, not an error', () => {
    const { logger, lines } = sink('info');
    const refused = failure('downstream_unavailable', 'log in first', {
      meta,
      errorData: { reason: 'login_required' },
    });
    logCallEnd(logger, refused, call);
    expect(lines).toEqual([expect.objectContaining({ level: 30, errorType: 'downstream_unavailable' })]);
  });

  it.each(['timeout', 'tool_error', 'downstream_unavailable', 'overloaded'] as const)(
    'L1: a %s failure is an error line with its errorType',
    (errorType) => {
      const { logger, lines } = sink('error');
      logCallEnd(logger, failure(errorType, 'it went wrong', { meta }), call);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 50,
          event: 'call_end',
          errorType,
          error: 'it went wrong',
          exposedName: 'fs_read',
        }),
      ]);
    },
  );

  it('L1, L2: a failure keeps its exception for the log, with secrets scrubbed', () => {
    const { logger, lines } = sink('error');
    const exception = new Error('connect failed with s3cret-env-value');
    logCallEnd(logger, failure('downstream_error', 'connect failed', { meta, exception }), call);
    expect(lines[0]).toMatchObject({ err: { type: 'Error', message: 'connect failed with [REDACTED]' } });
    expect(JSON.stringify(lines)).not.toContain('s3cret-env-value');
  });

  it('N2, L1: a structured_text_mismatch warning is a warn line with the short diff', () => {
    const { logger, lines } = sink('warn');
    const result = ok(
      { n: 1 },
      {
        meta: {
          ...meta,
          warnings: ['structured_text_mismatch'],
          diagnostics: [{ code: 'structured_text_mismatch', message: 'n: structured 1, text 2' }],
        },
      },
    );
    logCallEnd(logger, result, call);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        event: 'structured_text_mismatch',
        exposedName: 'fs_read',
        server: 'fs',
        tool: 'read',
        diff: 'n: structured 1, text 2',
      }),
    ]);
  });

  it('L1: never throws, even with a logger that does', () => {
    const broken = {
      isLevelEnabled: () => true,
      bindings: () => ({}),
      debug: () => {
        throw new Error('disk full');
      },
      warn: () => undefined,
      error: () => undefined,
    } as unknown as ReturnType<typeof createLogger>;
    expect(() => logCallEnd(broken, ok(1, { meta }), call)).not.toThrow();
  });
});
