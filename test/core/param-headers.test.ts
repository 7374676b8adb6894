/**
 * SEP-2243 `Mcp-Param-*` headers for modern HTTP downstreams (E5): which arguments are mirrored,
 * and how their values are encoded.
 */
import { describe, expect, it } from 'vitest';
import { paramHeaderDeclarations, paramHeaders } from '../../src/core/param-headers.js';

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
