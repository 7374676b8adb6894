/**
 * L1: pino on stderr, levels, argument redaction; L2: interpolated env values never appear in a
 * log line, wherever they hide.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactPaths, serverLogger, type LoggerOptions } from '../../src/log/logger.js';

/** A logger writing into an array of raw lines. */
function sink(options: LoggerOptions = {}): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { logger: createLogger({ level: 'trace', ...options, destination }), lines };
}

const root = path.resolve(import.meta.dirname, '../..');

describe('createLogger', () => {
  it('L1: writes to fd 2 by default; stdout stays empty', () => {
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(root, 'test/log/fixtures/log-default-destination.ts')],
      { cwd: root, encoding: 'utf8', timeout: 20_000 },
    );
    expect(child.status).toBe(0);
    expect(child.stdout).toBe('');
    const lines = child.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => [l['msg'], l['server']])).toEqual([
      ['hello from the default destination', 'fs'],
      ['second line', undefined],
    ]);
    expect(child.stderr).not.toContain('fd2-secret-value');
  });

  it.each([
    ['trace', ['trace', 'debug', 'info', 'warn', 'error']],
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ] as const)('L1: level %s writes %j', (level, expected) => {
    const { logger, lines } = sink({ level });
    for (const name of ['trace', 'debug', 'info', 'warn', 'error'] as const) logger[name](name);
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(expected);
  });

  it('L1: an abort and a peer gone away are logged as their name and message; other errors keep their stack', () => {
    const { logger, lines } = sink();
    logger.warn({ err: new DOMException('This operation was aborted', 'AbortError') }, 'aborted');
    logger.warn({ err: Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) }, 'gone');
    logger.warn({ err: new TypeError('boom') }, 'bug');
    const [aborted, gone, bug] = lines.map((line) => JSON.parse(line) as { err: Record<string, unknown> });
    expect(aborted?.err).toEqual({
      type: 'DOMException',
      name: 'AbortError',
      message: 'This operation was aborted',
    });
    expect(gone?.err).toEqual({ type: 'Error', code: 'EPIPE', message: 'write EPIPE' });
    expect(bug?.err['stack']).toContain('TypeError: boom');
    expect(lines[0]).not.toContain('INDEX_SIZE_ERR');
  });

  it('L1: serverLogger binds the server name to every line', () => {
    const { logger, lines } = sink();
    serverLogger(logger, 'fs').info('x');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ server: 'fs', msg: 'x' });
  });

  it('L1: configured keys under args are redacted in several spellings and up to three levels deep', () => {
    const { logger, lines } = sink({ redactKeys: ['password', 'api_key'] });
    logger.trace({
      args: {
        password: 'p1',
        Password: 'p2',
        apiKey: 'k1',
        API_KEY: 'k2',
        nested: { password: 'p3' },
        list: [{ password: 'p4' }],
        user: 'ann',
      },
      password: 'outside args is not an argument',
    });
    const line = JSON.parse(lines[0] ?? '{}') as { args: Record<string, unknown>; password: string };
    expect(line.args).toEqual({
      password: '[REDACTED]',
      Password: '[REDACTED]',
      apiKey: '[REDACTED]',
      API_KEY: '[REDACTED]',
      nested: { password: '[REDACTED]' },
      list: [{ password: '[REDACTED]' }],
      user: 'ann',
    });
    expect(line.password).toBe('outside args is not an argument');
  });

  it('L1: keys that are not identifiers get bracket paths', () => {
    expect(redactPaths(['x-api-key'])).toContain('args.*["x-api-key"]');
  });
});

describe('L2: secrets never reach a log line', () => {
  const secret = 'tok-9f8e7d6c5b4a';

  it.each([
    ['in the message', (l: ReturnType<typeof createLogger>) => l.info(`using ${secret} now`)],
    [
      'in a nested object',
      (l: ReturnType<typeof createLogger>) => l.info({ a: { b: [{ c: `Bearer ${secret}` }] } }, 'x'),
    ],
    [
      'in an error message and stack',
      (l: ReturnType<typeof createLogger>) => l.error({ err: new Error(`bad ${secret}`) }, 'boom'),
    ],
    ['in a child binding', (l: ReturnType<typeof createLogger>) => l.child({ header: secret }).warn('x')],
    [
      'in the arguments of a call',
      (l: ReturnType<typeof createLogger>) => l.trace({ args: { q: secret } }, 'call'),
    ],
  ])('L2: a secret %s is replaced', (_name, write) => {
    const { logger, lines } = sink({ secrets: [secret] });
    write(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).toContain('[REDACTED]');
  });

  it('L2: a secret with characters that JSON escapes is replaced in its escaped form too', () => {
    const odd = 'pa"ss\\word\n9';
    const { logger, lines } = sink({ secrets: [odd] });
    logger.info({ value: `x${odd}y` }, 'x');
    expect((JSON.parse(lines[0] ?? '{}') as { value: string }).value).toBe('x[REDACTED]y');
  });

  it('L2: the longer of two overlapping secrets is replaced whole', () => {
    const { logger, lines } = sink({ secrets: ['abcd', 'abcdefgh'] });
    logger.info('abcdefgh');
    expect((JSON.parse(lines[0] ?? '{}') as { msg: string }).msg).toBe('[REDACTED]');
  });

  it('L2: empty and very short values are not treated as secrets', () => {
    const { logger, lines } = sink({ secrets: ['', '1', 'on'] });
    logger.info('on 1 line');
    expect((JSON.parse(lines[0] ?? '{}') as { msg: string }).msg).toBe('on 1 line');
  });
});
