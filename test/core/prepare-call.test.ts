import { describe, expect, it } from 'vitest';
import { buildCatalog, type CatalogOptions } from '../../src/core/catalog.js';
import { isForward, prepareCall, type PreparedCall } from '../../src/core/prepare-call.js';
import { isFailure, type FailureResult, type Result } from '../../src/core/result.js';

const options: CatalogOptions = {
  separator: '_',
  nameMaxLength: 64,
  explicitDestructive: true,
  strictArguments: false,
  describeArguments: false,
  outputSchema: { type: 'object' },
};

const pathSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, recursive: { type: 'boolean' } },
  required: ['path'],
};

const catalog = buildCatalog(
  [
    {
      server: 'fs',
      prefix: 'fs',
      tools: [
        { name: 'read_file', inputSchema: pathSchema, annotations: { readOnlyHint: true } },
        { name: 'write_file', inputSchema: pathSchema },
        { name: 'delete', inputSchema: pathSchema, annotations: { destructiveHint: true } },
        { name: 'ping', inputSchema: { type: 'object' } },
      ],
    },
  ],
  options,
);

function refused(result: PreparedCall | Result): FailureResult {
  if (isForward(result) || !isFailure(result))
    throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

function forwarded(result: PreparedCall | Result): PreparedCall {
  if (isForward(result)) return result;
  throw new Error(`expected a forward, got ${JSON.stringify(result)}`);
}

describe('prepareCall', () => {
  it('T8, E5: an optional x-mcp-header param sent as null is forwarded absent, not refused', () => {
    const headed = buildCatalog(
      [
        {
          server: 'h',
          prefix: 'h',
          tools: [
            {
              name: 'get',
              inputSchema: {
                type: 'object',
                properties: {
                  verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
                  q: { type: 'string' },
                },
              },
            },
          ],
        },
      ],
      options,
    );
    expect(forwarded(prepareCall(headed, 'h_get', { verbose: null, q: 'x' })).arguments).toEqual({ q: 'x' });
    expect(refused(prepareCall(headed, 'h_get', { q: null })).errorType).toBe('invalid_arguments');
  });

  it('T3: a known name forwards to its server and original tool name', () => {
    const call = forwarded(prepareCall(catalog, 'fs_read_file', { path: 'a.txt' }));
    expect(call).toMatchObject({
      kind: 'forward',
      server: 'fs',
      tool: 'read_file',
      arguments: { path: 'a.txt' },
    });
    expect(call.entry).toBe(catalog.get('fs_read_file'));
  });

  it('T9: an unknown name of a megabyte is cut wherever it is repeated, and gets no suggestions', () => {
    const name = 'fs_'.repeat(400_000);
    const result = prepareCall(catalog, name, {}) as FailureResult;
    expect(result.errorType).toBe('unknown_tool');
    expect(result.error.length).toBeLessThan(300);
    expect(result.errorData).toMatchObject({ suggestions: [] });
    expect(JSON.stringify(result.errorData).length).toBeLessThan(300);
    expect(result.meta.tool?.length).toBeLessThan(200);
  });

  it('T9: an unknown name fails with unknown_tool and up to 3 close names', () => {
    const result = refused(prepareCall(catalog, 'fs_raed_file', { path: 'a' }));
    expect(result.errorType).toBe('unknown_tool');
    expect(result.errorData).toEqual({
      tool: 'fs_raed_file',
      suggestions: ['fs_read_file', 'fs_write_file'],
    });
    expect(result.error).toBe('Unknown tool "fs_raed_file". Did you mean "fs_read_file", "fs_write_file"?');
    expect(result.meta.source).toBe('proxy');
  });

  it('T9: nothing close gives no suggestions', () => {
    const result = refused(prepareCall(catalog, 'qqqqqqqq', {}));
    expect(result.errorData).toEqual({ tool: 'qqqqqqqq', suggestions: [] });
    expect(result.error).toBe('Unknown tool "qqqqqqqq".');
  });

  it.each([
    ['missing', { path: 'a' }, 'missing'],
    ['wrong', { path: 'a', explicit_action: 'yes please' }, 'wrong_value'],
    ['missing, with arguments that are also invalid (consent is checked first)', { path: 3 }, 'missing'],
    ['missing, with no arguments at all', undefined, 'missing'],
  ])('T7: explicit_action %s → consent_required saying what to pass', (_label, args, reason) => {
    const result = refused(prepareCall(catalog, 'fs_delete', args));
    expect(result.errorType).toBe('consent_required');
    expect(result.errorData).toMatchObject({ argument: 'explicit_action', value: 'FS_DELETE', reason });
    expect(result.meta).toMatchObject({ server: 'fs', tool: 'delete', source: 'proxy' });
  });

  it('T7: with consent the argument is stripped and the rest forwarded untouched', () => {
    const args = { path: 'a', recursive: true, explicit_action: 'FS_DELETE' };
    const call = forwarded(prepareCall(catalog, 'fs_delete', args));
    expect(call.arguments).toEqual({ path: 'a', recursive: true });
    expect(args).toHaveProperty('explicit_action');
  });

  it('T7/T8: with consent, the remaining arguments are still validated', () => {
    const result = refused(prepareCall(catalog, 'fs_delete', { explicit_action: 'FS_DELETE' }));
    expect(result.errorType).toBe('invalid_arguments');
    expect(result.errorData).toEqual({
      issues: [{ path: '/path', message: "must have required property 'path'" }],
    });
  });

  it('T8: bad arguments fail with invalid_arguments listing every issue, before any downstream', () => {
    const result = refused(prepareCall(catalog, 'fs_write_file', { recursive: 'yes' }));
    expect(result.errorType).toBe('invalid_arguments');
    expect(result.errorData?.['issues']).toEqual([
      { path: '/path', message: "must have required property 'path'" },
      { path: '/recursive', message: 'must be boolean' },
    ]);
    expect(result.error).toBe(
      'Invalid arguments for "fs_write_file": /path: must have required property \'path\'; /recursive: must be boolean.',
    );
    expect(result.meta).toMatchObject({ server: 'fs', tool: 'write_file', source: 'proxy' });
  });

  it.each([
    ['null', null],
    ['an array', [1]],
    ['a string', '{"path":"a"}'],
  ])('T8: arguments that are %s give one issue at the root', (_label, args) => {
    const result = refused(prepareCall(catalog, 'fs_read_file', args));
    expect(result.errorType).toBe('invalid_arguments');
    expect(result.errorData?.['issues']).toHaveLength(1);
    expect(result.errorData?.['issues']).toMatchObject([{ path: '' }]);
    expect(result.error).toContain('(arguments): arguments must be an object');
  });

  it('T8: omitted arguments count as {}', () => {
    expect(forwarded(prepareCall(catalog, 'fs_ping', undefined)).arguments).toEqual({});
  });

  it('T8: an ungated tool forwards its arguments object as given', () => {
    const args = { path: 'a', nested: { keep: [1] } };
    expect(forwarded(prepareCall(catalog, 'fs_read_file', args)).arguments).toBe(args);
  });
});

describe('deeply nested arguments', () => {
  function nested(depth: number): Record<string, unknown> {
    let value: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  }

  it('T8: arguments nested 100,000 deep are invalid_arguments, and nothing overflows', () => {
    const result = refused(prepareCall(catalog, 'fs_ping', nested(100_000)));
    expect(result.errorType).toBe('invalid_arguments');
    expect(result.error).toContain('nested more than 256 levels deep');
  });

  it('T8: arguments nested 200 deep are forwarded', () => {
    expect(forwarded(prepareCall(catalog, 'fs_ping', nested(200))).kind).toBe('forward');
  });
});
