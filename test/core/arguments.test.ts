import { describe, expect, it } from 'vitest';
import { MAX_ISSUES, argumentValidator, knownTopLevelKeys } from '../../src/core/arguments.js';
import { createSchemaCompiler, dialectOf } from '../../src/core/schema-compiler.js';

type Schema = Record<string, unknown>;

function validate(schema: Schema, args: unknown, strictArguments = false) {
  return argumentValidator(createSchemaCompiler(), schema, { strictArguments })(args);
}

const draft2020: Schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { count: { type: 'integer', minimum: 1 } },
  properties: {
    n: { $ref: '#/$defs/count' },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
  },
  required: ['n'],
};

const draft07: Schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  definitions: { name: { type: 'string', minLength: 2 } },
  properties: { name: { $ref: '#/definitions/name' }, tags: { type: 'array', items: [{ type: 'string' }] } },
  required: ['name'],
};

describe('arguments', () => {
  it.each([
    ['no $schema → 2020-12', {}, '2020-12'],
    ['2020-12', { $schema: 'https://json-schema.org/draft/2020-12/schema' }, '2020-12'],
    ['2019-09', { $schema: 'https://json-schema.org/draft/2019-09/schema' }, '2019-09'],
    ['draft-07', { $schema: 'http://json-schema.org/draft-07/schema#' }, 'draft-07'],
    ['draft-06', { $schema: 'http://json-schema.org/draft-06/schema#' }, 'draft-07'],
    ['draft-04', { $schema: 'http://json-schema.org/draft-04/schema#' }, 'draft-07'],
    ['unknown URI → 2020-12', { $schema: 'https://example.com/my-schema' }, '2020-12'],
  ])('T12: dialect by $schema, %s', (_label, schema, expected) => {
    expect(dialectOf(schema)).toBe(expected);
  });

  it.each([
    [
      '2020-12 with $defs and prefixItems',
      draft2020,
      { n: 2, pair: ['a', 1] },
      { n: 0, pair: [1, 'a', true] },
    ],
    [
      'draft-07 with definitions and tuple items',
      draft07,
      { name: 'ab', tags: ['x'] },
      { name: 'a', tags: [1] },
    ],
    [
      '2019-09 with $defs',
      {
        $schema: 'https://json-schema.org/draft/2019-09/schema',
        type: 'object',
        $defs: { s: { type: 'string' } },
        properties: { s: { $ref: '#/$defs/s' } },
      },
      { s: 'x' },
      { s: 1 },
    ],
    [
      'draft-04 (compiled as draft-07)',
      {
        $schema: 'http://json-schema.org/draft-04/schema#',
        type: 'object',
        properties: { a: { type: 'number' } },
      },
      { a: 1 },
      { a: 'x' },
    ],
  ])('T12: %s compiles with the matching dialect and validates', (_label, schema, good, bad) => {
    const compiler = createSchemaCompiler();
    expect(compiler.check(schema)).toMatchObject({ ok: true });
    const check = argumentValidator(compiler, schema, { strictArguments: false });
    expect(check(good)).toBeUndefined();
    expect(check(bad)?.length).toBeGreaterThan(0);
  });

  it.each([
    ['an unknown type name', { type: 'object', properties: { a: { type: 'strin' } } }, /schema is invalid/],
    [
      'a $ref that does not resolve',
      { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      /can't resolve reference #\/\$defs\/missing/,
    ],
    [
      'a remote $ref',
      { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } },
      /can't resolve reference/,
    ],
    [
      'an invalid pattern',
      { type: 'object', properties: { a: { type: 'string', pattern: '(?i)abc' } } },
      /not a valid regular expression/,
    ],
    ['required that is not an array', { type: 'object', required: 'a' }, /schema is invalid/],
  ])('T12: a schema with %s is refused with the reason', (_label, schema, reason) => {
    const verdict = createSchemaCompiler().check(schema);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.error).toMatch(reason);
  });

  it.each([
    ['a local $ref', { $defs: { a: { type: 'string' } }, properties: { a: { $ref: '#/$defs/a' } } }],
    [
      'an anchor',
      { $defs: { a: { $anchor: 'thing', type: 'string' } }, properties: { a: { $ref: '#thing' } } },
    ],
    [
      'an embedded $id',
      {
        $defs: { a: { $id: 'https://example.com/a', type: 'string' } },
        properties: { a: { $ref: 'https://example.com/a' } },
      },
    ],
    ['a root self-reference', { properties: { child: { $ref: '#' } } }],
    [
      'an escaped pointer',
      { $defs: { 'a/b': { type: 'string' } }, properties: { a: { $ref: '#/$defs/a~1b' } } },
    ],
  ])('T12: references that resolve are accepted: %s', (_label, schema) => {
    const compiler = createSchemaCompiler();
    const full = { type: 'object', ...schema };
    expect(compiler.check(full)).toMatchObject({ ok: true });
    expect(typeof compiler.validator(full)).toBe('function');
  });

  it('T12: a compiler built on the previous one gives the same verdicts, valid or not', () => {
    const first = createSchemaCompiler();
    const next = createSchemaCompiler(first);
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: 'a' };
    for (const compiler of [first, next]) {
      expect(compiler.check({ type: 'object', required: 'a' })).toMatchObject({ ok: false });
      expect(compiler.check(draft7)).toMatchObject({ ok: false, dialect: 'draft-07' });
      expect(compiler.check({ type: 'object', properties: { a: { type: 'string' } } })).toMatchObject({
        ok: true,
      });
      // A check compiles nothing: validators are compiled on a tool's first call.
      expect(compiler.compiledCount).toBe(0);
    }
  });

  it('T12: a recursive schema ($ref: "#") validates nested values', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, child: { $ref: '#' } } };
    expect(validate(schema, { name: 'a', child: { name: 'b', child: { name: 'c' } } })).toBeUndefined();
    expect(validate(schema, { child: { child: { name: 3 } } })).toEqual([
      { path: '/child/child/name', message: 'must be string' },
    ]);
  });

  it('T12: two schemas with the same $id both compile (no global registration)', () => {
    const compiler = createSchemaCompiler();
    const a = { $id: 'https://example.com/s.json', type: 'object', properties: { a: { type: 'string' } } };
    const b = { $id: 'https://example.com/s.json', type: 'object', properties: { b: { type: 'number' } } };
    expect(typeof compiler.validator(a)).toBe('function');
    expect(typeof compiler.validator(b)).toBe('function');
  });

  it.each([
    [
      'a missing key points at the key',
      { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      {},
      [{ path: '/path', message: "must have required property 'path'" }],
    ],
    [
      'a nested value',
      { type: 'object', properties: { q: { type: 'object', properties: { limit: { type: 'integer' } } } } },
      { q: { limit: 'x' } },
      [{ path: '/q/limit', message: 'must be integer' }],
    ],
    [
      'an array element',
      { type: 'object', properties: { ids: { type: 'array', items: { type: 'number' } } } },
      { ids: [1, 'b'] },
      [{ path: '/ids/1', message: 'must be number' }],
    ],
    [
      'a format (ajv-formats)',
      { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } },
      { at: 'yesterday' },
      [{ path: '/at', message: 'must match format "date-time"' }],
    ],
    [
      'a key with a slash is escaped',
      { type: 'object', properties: { 'a/b': { type: 'string' } } },
      { 'a/b': 1 },
      [{ path: '/a~1b', message: 'must be string' }],
    ],
    [
      'additionalProperties false in the schema',
      { type: 'object', properties: {}, additionalProperties: false },
      { x: 1 },
      [{ path: '/x', message: 'must NOT have additional properties' }],
    ],
  ])('T8: issues carry a JSON Pointer path and a message: %s', (_label, schema, args, expected) => {
    expect(validate(schema, args)).toEqual(expected);
  });

  it('T8: every problem is listed (allErrors)', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['c'],
    };
    expect(
      validate(schema, { a: 1, b: 'x' })
        ?.map((i) => i.path)
        .sort(),
    ).toEqual(['/a', '/b', '/c']);
  });

  it('T8: issues are capped so one call cannot flood a prompt', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`k${i}`, { type: 'string' }]),
    );
    const args = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
    expect(validate({ type: 'object', properties }, args)).toHaveLength(MAX_ISSUES);
  });

  it.each([
    ['null', null, 'null'],
    ['an array', [1], 'an array'],
    ['a string', 'x', 'string'],
  ])('T8: arguments that are %s give one issue at the root', (_label, args, got) => {
    expect(validate({ type: 'object' }, args)).toEqual([
      { path: '', message: `arguments must be an object, got ${got}` },
    ]);
  });

  it('T8: unknown keys pass unless strict_arguments is on', () => {
    const schema = { type: 'object', properties: { path: { type: 'string' } } };
    expect(validate(schema, { path: 'a', pathh: 'b' })).toBeUndefined();
    expect(validate(schema, { path: 'a', pathh: 'b', zzzzzz: 1 }, true)).toEqual([
      { path: '/pathh', message: 'is not a known argument; did you mean "path"?' },
      { path: '/zzzzzz', message: 'is not a known argument' },
    ]);
  });

  it.each([
    ['additionalProperties: true', { properties: { a: {} }, additionalProperties: true }, undefined],
    [
      'additionalProperties with a schema',
      { properties: { a: {} }, additionalProperties: { type: 'string' } },
      undefined,
    ],
    ['patternProperties', { patternProperties: { '^x': {} } }, undefined],
    [
      'unevaluatedProperties in a member',
      { allOf: [{ properties: { a: {} }, unevaluatedProperties: false }] },
      undefined,
    ],
    ['a reference it cannot follow', { $ref: 'https://example.com/s' }, undefined],
    ['plain properties', { properties: { a: {}, b: {} } }, ['a', 'b']],
    [
      'allOf/anyOf/oneOf members and required',
      {
        required: ['r'],
        allOf: [{ properties: { a: {} } }],
        anyOf: [{ properties: { b: {} } }],
        oneOf: [{ properties: { c: {} } }],
      },
      ['a', 'b', 'c', 'r'],
    ],
    ['a local $ref at the root', { $ref: '#/$defs/args', $defs: { args: { properties: { x: {} } } } }, ['x']],
  ])('T8: strict mode respects what the schema says, %s', (_label, schema, expected) => {
    const keys = knownTopLevelKeys({ type: 'object', ...schema });
    expect(keys === undefined ? undefined : [...keys].sort()).toEqual(expected);
  });

  it('T8: strict mode does not reject keys a composed schema declares', () => {
    const schema = { type: 'object', allOf: [{ properties: { a: { type: 'string' } } }] };
    expect(validate(schema, { a: 'x' }, true)).toBeUndefined();
    expect(validate(schema, { a: 'x', b: 1 }, true)).toEqual([
      { path: '/b', message: 'is not a known argument' },
    ]);
  });

  it('T8: each distinct schema compiles once, on first use, and a rebuild reuses it', () => {
    const compiler = createSchemaCompiler();
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const first = argumentValidator(compiler, schema, { strictArguments: false });
    const second = argumentValidator(compiler, structuredClone(schema), { strictArguments: false });
    expect(compiler.compiledCount).toBe(0);
    first({ a: 'x' });
    first({ a: 'y' });
    second({ a: 1 });
    expect(compiler.compiledCount).toBe(1);
    const next = createSchemaCompiler(compiler);
    argumentValidator(next, structuredClone(schema), { strictArguments: false })({ a: 'z' });
    expect(next.compiledCount).toBe(0);
  });
});
