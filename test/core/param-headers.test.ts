/**
 * SEP-2243 `Mcp-Param-*` headers for modern HTTP downstreams (E5): which arguments are mirrored,
 * and how their values are encoded.
 */
import { describe, expect, it } from 'vitest';
import {
  nullableParamPaths,
  paramHeaderDeclarations,
  paramHeaderProblem,
  paramHeaders,
  withoutNullParams,
} from '../../src/core/param-headers.js';

const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
    nested: { type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } },
    list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } },
    object: { type: 'object', 'x-mcp-header': 'Object' },
    spaced: { type: 'string', 'x-mcp-header': 'Not A Token' },
    plain: { type: 'string' },
  },
};

describe('paramHeaderDeclarations', () => {
  it('E5: declarations on primitive properties reached through properties, at any depth; none elsewhere', () => {
    expect(paramHeaderDeclarations(schema)).toEqual([
      { path: ['region'], name: 'Region' },
      { path: ['count'], name: 'Count' },
      { path: ['dry'], name: 'Dry-Run' },
      { path: ['nested', 'tenant'], name: 'Tenant' },
    ]);
    expect(paramHeaderDeclarations({ type: 'object' })).toEqual([]);
    expect(paramHeaderDeclarations(null)).toEqual([]);
  });
});

const tool = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('paramHeaderProblem', () => {
  it.each([
    ['no declaration', tool({ a: { type: 'string' } })],
    [
      'string, integer and boolean properties, nested too',
      tool({
        a: { type: 'string', 'x-mcp-header': 'A' },
        n: {
          type: 'object',
          properties: {
            b: { type: 'integer', 'x-mcp-header': 'B' },
            c: { type: 'boolean', 'x-mcp-header': 'C' },
          },
        },
      }),
    ],
  ])('E5: a tool with %s is valid', (_name, inputSchema) => {
    expect(paramHeaderProblem(inputSchema)).toBeUndefined();
  });

  it.each([
    ['an empty name', tool({ a: { type: 'string', 'x-mcp-header': '' } }), 'is empty or not a string'],
    [
      'a name that is not a string',
      tool({ a: { type: 'string', 'x-mcp-header': 5 } }),
      'is empty or not a string',
    ],
    [
      'a space in the name',
      tool({ a: { type: 'string', 'x-mcp-header': 'My Header' } }),
      'is not a header name',
    ],
    ['a colon in the name', tool({ a: { type: 'string', 'x-mcp-header': 'A:B' } }), 'is not a header name'],
    ['a non-ASCII name', tool({ a: { type: 'string', 'x-mcp-header': 'Régión' } }), 'is not a header name'],
    ['a number property', tool({ a: { type: 'number', 'x-mcp-header': 'A' } }), 'on a number property'],
    ['an object property', tool({ a: { type: 'object', 'x-mcp-header': 'A' } }), 'on a object property'],
    ['a null property', tool({ a: { type: 'null', 'x-mcp-header': 'A' } }), 'on a null property'],
    ['an untyped property', tool({ a: { 'x-mcp-header': 'A' } }), 'on a untyped property'],
    [
      'the same name twice',
      tool({ a: { type: 'string', 'x-mcp-header': 'R' }, b: { type: 'string', 'x-mcp-header': 'R' } }),
      'repeats the one on /a',
    ],
    [
      'the same name in another case',
      tool({ a: { type: 'string', 'x-mcp-header': 'R' }, b: { type: 'string', 'x-mcp-header': 'r' } }),
      'repeats the one on /a',
    ],
    [
      'a declaration under items',
      tool({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } }),
      'not on a property reached through properties alone',
    ],
    [
      'a declaration under anyOf',
      tool({ a: { anyOf: [{ type: 'string', 'x-mcp-header': 'I' }] } }),
      'not on a property reached through properties alone',
    ],
    [
      'a declaration in $defs',
      { ...tool({}), $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } },
      'not on a property reached through properties alone',
    ],
    [
      'a declaration on the root',
      { type: 'object', 'x-mcp-header': 'Root' },
      'not on a property reached through properties alone',
    ],
  ])('E5: a tool with %s must not be used', (_name, inputSchema, why) => {
    expect(paramHeaderProblem(inputSchema)).toContain(why);
    expect(paramHeaderProblem(inputSchema)).toMatch(/\(SEP-2243: a client must not use such a tool\)$/);
  });
});

describe('paramHeaders', () => {
  const declared = paramHeaderDeclarations(schema);
  it.each([
    ['visible ASCII as it is', { region: 'eu-west-1' }, { 'Mcp-Param-Region': 'eu-west-1' }],
    ['an interior space as it is', { region: 'eu west' }, { 'Mcp-Param-Region': 'eu west' }],
    ['non-ASCII as UTF-8 base64', { region: 'Zürich' }, { 'Mcp-Param-Region': '=?base64?WsO8cmljaA==?=' }],
    ['a leading space as base64', { region: ' x' }, { 'Mcp-Param-Region': '=?base64?IHg=?=' }],
    ['an empty string as base64', { region: '' }, { 'Mcp-Param-Region': '=?base64??=' }],
    [
      'a value that looks like the sentinel as base64',
      { region: '=?base64?x?=' },
      { 'Mcp-Param-Region': '=?base64?PT9iYXNlNjQ/eD89?=' },
    ],
    [
      'integers and booleans as text',
      { count: 3, dry: false },
      { 'Mcp-Param-Count': '3', 'Mcp-Param-Dry-Run': 'false' },
    ],
    ['a nested value', { nested: { tenant: 'acme' } }, { 'Mcp-Param-Tenant': 'acme' }],
    ['absent, null and non-primitive values send nothing', { region: null, count: { n: 1 } }, {}],
    ['an unsafe integer sends nothing', { count: 2 ** 60 }, {}],
  ])('E5: %s', (_label, args, expected) => {
    expect(paramHeaders(declared, args as Record<string, unknown>)).toEqual(expected);
  });
});

describe('null header params', () => {
  const declared = {
    type: 'object',
    properties: {
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      region: { type: 'string', 'x-mcp-header': 'Region' },
      nested: {
        type: 'object',
        properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } },
        required: ['tenant'],
      },
      plain: { type: 'string' },
    },
    required: ['region'],
  };

  it('E5: only optional header-mirrored params may be null (SEP-2243: a null value sends no header)', () => {
    expect(nullableParamPaths(declared)).toEqual([['verbose']]);
  });

  it.each([
    ['a null optional param is dropped', { verbose: null, region: 'eu' }, { region: 'eu' }],
    ['a value stays', { verbose: false, region: 'eu' }, { verbose: false, region: 'eu' }],
    ['a null required param stays (T8 refuses it)', { region: null }, { region: null }],
    ['a null plain param stays', { plain: null }, { plain: null }],
  ])('E5: %s', (_name, args, expected) => {
    const paths = nullableParamPaths(declared);
    const out = withoutNullParams(args as Record<string, unknown>, paths);
    expect(out).toEqual(expected);
    // Copied only when something is dropped.
    if (JSON.stringify(out) === JSON.stringify(args)) expect(out).toBe(args);
  });

  it('E5: a nested null is dropped without touching its siblings or the caller’s object', () => {
    const args = { outer: { inner: null, keep: 1 } };
    expect(withoutNullParams(args, [['outer', 'inner']])).toEqual({ outer: { keep: 1 } });
    expect(args).toEqual({ outer: { inner: null, keep: 1 } });
  });
});
