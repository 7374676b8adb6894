import { describe, expect, it } from 'vitest';
import { describeArguments } from '../../src/core/describe.js';

describe('describe_arguments', () => {
  it.each([
    [
      'a required string with its description',
      { properties: { path: { type: 'string', description: 'File to read.' } }, required: ['path'] },
      '- `path` (string, required): File to read.',
    ],
    [
      'an optional integer without description',
      { properties: { n: { type: 'integer' } } },
      '- `n` (integer)',
    ],
    ['a type union', { properties: { v: { type: ['string', 'null'] } } }, '- `v` (string | null)'],
    ['an enum', { properties: { mode: { enum: ['a', 'b'] } } }, '- `mode` (one of "a", "b")'],
    [
      'an array of strings',
      { properties: { tags: { type: 'array', items: { type: 'string' } } } },
      '- `tags` (array of string)',
    ],
    ['a reference', { properties: { x: { $ref: '#/$defs/x' } } }, '- `x` (see schema)'],
    [
      'anyOf members',
      { properties: { x: { anyOf: [{ type: 'string' }, { type: 'number' }] } } },
      '- `x` (string | number)',
    ],
    [
      'a multi-line description becomes one line',
      { properties: { a: { type: 'string', description: 'one\n  two' } } },
      '- `a` (string): one two',
    ],
    ['no properties', {}, ''],
  ])('T6: %s', (_label, schema, expected) => {
    expect(describeArguments({ type: 'object', ...schema })).toBe(expected);
  });

  it('T6: nested objects are listed one level deep, no deeper', () => {
    const schema = {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          description: 'What to find.',
          properties: {
            text: { type: 'string' },
            deeper: { type: 'object', properties: { hidden: { type: 'string' } } },
          },
          required: ['text'],
        },
      },
    };
    expect(describeArguments(schema)).toBe(
      ['- `query` (object): What to find.', '  - `text` (string, required)', '  - `deeper` (object)'].join(
        '\n',
      ),
    );
  });

  it('T6: the list is bounded and says how much was left out', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`arg${i}`, { type: 'string', description: 'd'.repeat(500) }]),
    );
    const text = describeArguments({ type: 'object', properties }, { maxLength: 1000, maxDescription: 50 });
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text).toMatch(/…and \d+ more \(see the input schema\)$/);
    expect(text.split('\n')[0]).toHaveLength('- `arg0` (string): '.length + 50);
  });

  it('T6: a schema that is not an object describes nothing', () => {
    expect(describeArguments(null)).toBe('');
  });
});
