/** M1, M5: code mode's pure parts (core/code-mode.ts): the argument, and a tool's declaration. */
import { describe, expect, it } from 'vitest';
import {
  codeToolDefinitions,
  declarationOf,
  readCodeArguments,
  typeOfSchema,
} from '../../src/core/code-mode.js';

describe('code mode (core)', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: 'integer' }, 'number'],
    [{ type: ['string', 'null'] }, 'string | null'],
    [{ enum: ['a', 1] }, '"a" | 1'],
    [{ const: 'x' }, '"x"'],
    [{ type: 'array', items: { type: 'boolean' } }, 'Array<boolean>'],
    [{ type: 'object' }, 'Record<string, unknown>'],
    [
      { type: 'object', properties: { a: { type: 'number' }, 'b-c': { type: 'string' } }, required: ['a'] },
      '{ a: number; "b-c"?: string }',
    ],
    [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    [{}, 'unknown'],
    ['not a schema', 'unknown'],
  ])('M5: %j is typed %s', (schema, type) => {
    expect(typeOfSchema(schema)).toBe(type);
  });

  it('M5: a deep schema ends in unknown; a name that is no identifier is indexed', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { type: 'array', items: deep };
    expect(typeOfSchema(deep)).toContain('unknown');
    expect(declarationOf('everything_get-sum', { type: 'object', properties: {} })).toBe(
      'tools["everything_get-sum"](args: {}): Promise<unknown>',
    );
  });

  it('M5: a tool that declared an output schema returns its type; one that did not, unknown', () => {
    const input = { type: 'object', properties: { city: { type: 'string' } } };
    const output = {
      type: 'object',
      properties: { temperature_c: { type: 'number' } },
      required: ['temperature_c'],
    };
    expect(declarationOf('w_weather', input, output)).toBe(
      'tools.w_weather(args: { city?: string }): Promise<{ temperature_c: number }>',
    );
    expect(declarationOf('w_weather', input)).toBe(
      'tools.w_weather(args: { city?: string }): Promise<unknown>',
    );
  });

  it.each([
    [{ code: 'return 1' }, { code: 'return 1' }],
    [{ code: '  ' }, { issue: 'code: expected the body of an async function, a non-empty string' }],
    [{}, { issue: 'code: expected the body of an async function, a non-empty string' }],
    [{ code: 'x'.repeat(64 * 1024 + 1) }, { issue: 'code: longer than 65536 bytes' }],
    [{ code: '1', other: 2 }, { issue: 'only `code` is taken' }],
  ])('M1: run_code %#', (args, read) => {
    expect(readCodeArguments(args)).toEqual(read);
  });

  it('M1: run_code is defined only when the pair names it', () => {
    expect(codeToolDefinitions({ search: 's', call: 'c' })).toEqual([]);
    expect(codeToolDefinitions({ search: 's', call: 'c', run: 'run_code' })[0]?.name).toBe('run_code');
  });
});
