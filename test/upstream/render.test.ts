/**
 * The renderer (F1–F5, R2): every case is rendered in every format, and every rendered envelope is
 * checked against the format's advertised outputSchema (Ajv) and every CallToolResult against the
 * SDK's own CallToolResultSchema, besides the shape each format promises.
 */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  ToolSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERROR_TYPES, failure, ok } from '../../src/core/result.js';
import type { FileArtifact, Result } from '../../src/core/result.js';
import { ENVELOPE_JSON_SCHEMAS, MEDIA_MODES, OUTPUT_FORMATS } from '../../src/upstream/envelope-schema.js';
import { envelopeValidators } from '../helpers/envelope-validators.js';
import type { OutputFormat } from '../../src/upstream/envelope-schema.js';
import {
  INVALID_MEDIA_BLOCK_WARNING,
  renderCallToolResult,
  renderEnvelope,
} from '../../src/upstream/render.js';

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = envelopeValidators(ajv);

function expectValidEnvelope(format: OutputFormat, envelope: unknown): void {
  const validate = validators[format];
  expect(validate(envelope), ajv.errorsText(validate.errors)).toBe(true);
}

/** Renders, then checks what holds for every Result in every format. */
function renderChecked(
  result: Result,
  format: OutputFormat,
  media: 'artifacts' | 'passthrough' = 'artifacts',
) {
  const rendered = renderCallToolResult(result, { format, media });
  expect(() => CallToolResultSchema.parse(rendered)).not.toThrow();
  expect(rendered.isError).toBe(!result.success);
  expectValidEnvelope(format, rendered.structuredContent);
  const first = rendered.content[0];
  expect(first?.type).toBe('text');
  const text = first?.type === 'text' ? first.text : '';
  const { returned_file_contents: _bodies, ...withoutBodies } = (rendered.structuredContent ?? {}) as Record<
    string,
    unknown
  >;
  expect(JSON.parse(text)).toEqual(withoutBodies);
  for (const file of result.files) expect(text).not.toContain(file.base64);
  return { rendered, envelope: rendered.structuredContent as Record<string, unknown>, text };
}

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';
const files: FileArtifact[] = [
  { name: 'screenshot-1.png', mimeType: 'image/png', base64: PNG, kind: 'image' },
  {
    name: 'report-1.txt',
    mimeType: 'text/plain',
    base64: 'aGVsbG8gd29ybGQ=',
    kind: 'text',
    uri: 'file:///r.txt',
  },
];
const meta = { server: 'db', tool: 'count', source: 'structured', elapsedMs: 12 } as const;

const cases: Array<[string, Result]> = [
  ['a structured success', ok({ rows: 3 }, { meta })],
  ['an empty success', ok(null, { meta: { ...meta, source: 'empty' } })],
  ['a text success', ok('plain words', { meta: { ...meta, source: 'text' } })],
  ['an array success', ok([1, 'two', { three: 3 }], { meta: { ...meta, source: 'text_json' } })],
  ['a success with files', ok('see files', { meta, files })],
  ['a success with a message', ok(1, { meta, message: 'Saved 1 row.' })],
  ['a success with warnings', ok({ a: 1 }, { meta: { ...meta, warnings: ['structured_text_mismatch'] } })],
  [
    'a success with resource links',
    ok(null, {
      meta: { ...meta, resourceLinks: [{ uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' }] },
    }),
  ],
  [
    'a success with downstream meta_data',
    ok([1], { meta: { ...meta, source: 'passthrough', downstreamMeta: { rows: 1, server: 'theirs' } } }),
  ],
  ...ERROR_TYPES.map((type): [string, Result] => [
    `a ${type} failure`,
    failure(type, `it failed (${type})`, { meta, instruction: `Instruction for ${type}.` }),
  ]),
  [
    'a failure with a downstream code, data, exception, message and files',
    failure('tool_error', 'No such record', {
      meta,
      errorCode: 'NOT_FOUND',
      errorData: { id: 7 },
      exception: new Error('MCP error -32602: MCP error -32602: No such record'),
      message: 'Record 7 does not exist.',
      instruction: 'Ask the user for another id.',
      files,
    }),
  ],
];

describe('renderCallToolResult: every case in every format', () => {
  const rows = cases.flatMap(([name, result]) =>
    OUTPUT_FORMATS.map((format) => [name, format, result] as const),
  );
  it.each(rows)(
    'F1/F2/F3/R2: %s in format %s is a valid CallToolResult, its envelope matches the outputSchema, and the text block is the same JSON without file bodies',
    (_name, format, result) => {
      renderChecked(result, format);
    },
  );
});

describe('F1 results', () => {
  it('F1: a success is {results, meta_data} with server, tool, source and elapsed_ms', () => {
    const { envelope } = renderChecked(ok({ rows: 3 }, { meta }), 'results');
    expect(envelope).toEqual({
      results: { rows: 3 },
      meta_data: { server: 'db', tool: 'count', source: 'structured', elapsed_ms: 12 },
    });
  });

  it('F4: an empty success renders results: null, not {}', () => {
    const { envelope, text } = renderChecked(ok(null, { meta: { source: 'empty' } }), 'results');
    expect(envelope).toEqual({ results: null, meta_data: { source: 'empty' } });
    expect(text).toBe('{"results":null,"meta_data":{"source":"empty"}}');
  });

  it('F4: an undefined value renders results: null as well', () => {
    const { envelope } = renderChecked(ok(undefined, { meta: { source: 'empty' } }), 'results');
    expect(envelope['results']).toBeNull();
  });

  it.each(ERROR_TYPES)(
    'F1: a %s failure is {results: {error}, meta_data: {is_error: true, error_type}}',
    (type) => {
      const { envelope } = renderChecked(
        failure(type, 'went wrong', { meta, instruction: 'Stop.' }),
        'results',
      );
      expect(envelope).toEqual({
        results: { error: 'went wrong' },
        meta_data: {
          is_error: true,
          error_type: type,
          server: 'db',
          tool: 'count',
          source: 'structured',
          elapsed_ms: 12,
          instruction: 'Stop.',
        },
      });
    },
  );

  it('F1: meta_data carries warnings, message, instruction, error_code, error_data and resource_links', () => {
    const result = failure('tool_error', 'bad', {
      meta: {
        ...meta,
        warnings: ['invalid_base64'],
        resourceLinks: [
          { uri: 'file:///x', name: 'x', title: 'X', description: 'an x', mimeType: 'text/plain' },
        ],
      },
      errorCode: 'E_BAD',
      errorData: { field: 'id' },
      message: 'For you.',
      instruction: 'Fix it.',
    });
    const { envelope } = renderChecked(result, 'results');
    expect(envelope['meta_data']).toEqual({
      is_error: true,
      error_type: 'tool_error',
      error_code: 'E_BAD',
      server: 'db',
      tool: 'count',
      source: 'structured',
      elapsed_ms: 12,
      warnings: ['invalid_base64'],
      message: 'For you.',
      instruction: 'Fix it.',
      error_data: { field: 'id' },
      resource_links: [
        { uri: 'file:///x', name: 'x', title: 'X', description: 'an x', mimeType: 'text/plain' },
      ],
    });
  });

  it("F1/N6: a downstream's own meta_data keys come back where they were; those that collide with ours go under meta_data.downstream", () => {
    const downstreamMeta = { server: 'spoofed', is_error: true, elapsed_ms: 999, chunks: 2, cursor: 'c2' };
    const { envelope } = renderChecked(
      ok([1], { meta: { ...meta, source: 'passthrough', downstreamMeta } }),
      'results',
    );
    expect(envelope['meta_data']).toEqual({
      server: 'db',
      tool: 'count',
      source: 'passthrough',
      elapsed_ms: 12,
      chunks: 2,
      cursor: 'c2',
      downstream: { server: 'spoofed', is_error: true, elapsed_ms: 999 },
    });
  });

  it("F2/N8: with format result, an ADR-003 downstream's failure comes back with its own error_type and error_data, unchanged", () => {
    const { envelope } = renderChecked(
      failure('tool_error', 'Quota exceeded', {
        meta: { source: 'structured', convention: 'result' },
        errorCode: 'quota_exceeded',
        errorData: { limit: 100 },
      }),
      'result',
    );
    expect(envelope).toMatchObject({
      success: false,
      error: 'Quota exceeded',
      error_type: 'quota_exceeded',
    });
    expect(envelope['error_data']).toEqual({ limit: 100 });
  });

  it('F1: files render as returned_file_names and returned_file_contents in the same order', () => {
    const { envelope, text } = renderChecked(ok('see files', { meta, files }), 'results');
    expect(envelope['returned_file_names']).toEqual(['screenshot-1.png', 'report-1.txt']);
    expect(envelope['returned_file_contents']).toEqual([PNG, 'aGVsbG8gd29ybGQ=']);
    expect(text).toContain('"returned_file_names":["screenshot-1.png","report-1.txt"]');
    expect(text).not.toContain('returned_file_contents');
  });

  it('F1: a failure keeps its files too', () => {
    const { envelope } = renderChecked(failure('tool_error', 'partial', { files }), 'results');
    expect(envelope['returned_file_names']).toEqual(['screenshot-1.png', 'report-1.txt']);
  });
});

describe('F2 result (ADR-003 to_json)', () => {
  it.each([
    ['a value', ok({ rows: 3 }), { success: true, value: { rows: 3 } }],
    ['null (value omitted)', ok(null), { success: true }],
    ['false (kept: only None is omitted)', ok(false), { success: true, value: false }],
    ['0 (kept)', ok(0), { success: true, value: 0 }],
    [
      'message and instruction',
      ok('x', { message: 'm', instruction: 'i' }),
      { success: true, value: 'x', message: 'm', instruction: 'i' },
    ],
    ['an empty message (omitted like to_json)', ok('x', { message: '' }), { success: true, value: 'x' }],
  ])('F2: success with %s', (_name, result, expected) => {
    expect(renderChecked(result, 'result').envelope).toEqual(expected);
  });

  it('F2: failure has error, error_type, error_data with the downstream code, exception name and message', () => {
    const exception = new Error('MCP error -32602: MCP error -32602: No such record');
    const result = failure('tool_error', 'No such record', {
      errorCode: 'NOT_FOUND',
      errorData: { id: 7 },
      exception,
      message: 'Record 7 does not exist.',
      instruction: 'Ask the user for another id.',
    });
    const { envelope, text } = renderChecked(result, 'result');
    expect(envelope).toEqual({
      success: false,
      error: 'No such record',
      error_type: 'tool_error',
      error_data: { id: 7, error_code: 'NOT_FOUND' },
      exception_type: 'Error',
      exception_message: 'No such record',
      message: 'Record 7 does not exist.',
      instruction: 'Ask the user for another id.',
    });
    expect(Object.keys(envelope)).toEqual([
      'success',
      'error',
      'error_type',
      'error_data',
      'exception_type',
      'exception_message',
      'message',
      'instruction',
    ]);
    expect(text).not.toContain(exception.stack?.split('\n')[1]?.trim() ?? 'never');
  });

  it('F2: the exception type is the error name; a thrown non-Error renders no exception fields', () => {
    class TimeoutError extends Error {
      override name = 'TimeoutError';
    }
    const named = renderChecked(failure('timeout', 't', { exception: new TimeoutError('late') }), 'result');
    expect(named.envelope).toMatchObject({ exception_type: 'TimeoutError', exception_message: 'late' });
    const thrownString = renderChecked(
      failure('downstream_error', 'x', { exception: 'just a string' }),
      'result',
    );
    expect(thrownString.envelope).not.toHaveProperty('exception_type');
    const hostile = {
      get name(): string {
        throw new Error('getter');
      },
    };
    const hostileOut = renderChecked(failure('downstream_error', 'x', { exception: hostile }), 'result');
    expect(hostileOut.envelope).not.toHaveProperty('exception_type');
  });

  it('F2: empty error_data is left out, like to_json', () => {
    const { envelope } = renderChecked(failure('timeout', 'slow', { errorData: {} }), 'result');
    expect(envelope).toEqual({ success: false, error: 'slow', error_type: 'timeout' });
  });

  it('F2: files add returned_file_names and returned_file_contents', () => {
    const { envelope } = renderChecked(ok(null, { files }), 'result');
    expect(envelope).toEqual({
      success: true,
      returned_file_names: ['screenshot-1.png', 'report-1.txt'],
      returned_file_contents: [PNG, 'aGVsbG8gd29ybGQ='],
    });
  });
});

describe('F3 response (ADR-002)', () => {
  it('F3: success is {status: "SUCCESS", data}; an empty success has data: null', () => {
    expect(renderChecked(ok({ a: 1 }), 'response').envelope).toEqual({ status: 'SUCCESS', data: { a: 1 } });
    expect(renderChecked(ok(null), 'response').envelope).toEqual({ status: 'SUCCESS', data: null });
  });

  it('F3: failure code is the error type when the downstream sent no code', () => {
    const { envelope } = renderChecked(
      failure('timeout', 'slow', { instruction: 'Retry once.' }),
      'response',
    );
    expect(envelope).toEqual({
      status: 'ERROR',
      error: { code: 'timeout', message: 'slow' },
      instruction: 'Retry once.',
    });
  });

  it("F3: the downstream's own code survives; details carry errorData plus error_type", () => {
    const result = failure('tool_error', 'No such record', { errorCode: 'NOT_FOUND', errorData: { id: 7 } });
    expect(renderChecked(result, 'response').envelope).toEqual({
      status: 'ERROR',
      error: { code: 'NOT_FOUND', message: 'No such record', details: { id: 7, error_type: 'tool_error' } },
    });
  });

  it('F3: errorData alone becomes details', () => {
    const result = failure('invalid_arguments', 'bad', {
      errorData: { issues: [{ path: '/a', message: 'x' }] },
    });
    expect(renderChecked(result, 'response').envelope).toEqual({
      status: 'ERROR',
      error: {
        code: 'invalid_arguments',
        message: 'bad',
        details: { issues: [{ path: '/a', message: 'x' }] },
      },
    });
  });

  it('F3: files travel as the F1 pair at the top level', () => {
    const { envelope } = renderChecked(ok('x', { files }), 'response');
    expect(envelope).toEqual({
      status: 'SUCCESS',
      data: 'x',
      returned_file_names: ['screenshot-1.png', 'report-1.txt'],
      returned_file_contents: [PNG, 'aGVsbG8gd29ybGQ='],
    });
  });
});

describe('content blocks', () => {
  it.each(OUTPUT_FORMATS)(
    'F1/F2/F3: with a message, content[1] is the message for the user (%s)',
    (format) => {
      const { rendered } = renderChecked(ok(1, { message: 'Saved.' }), format);
      expect(rendered.content).toHaveLength(2);
      expect(rendered.content[1]).toEqual({
        type: 'text',
        text: 'Saved.',
        annotations: { audience: ['user'] },
      });
    },
  );

  it.each(OUTPUT_FORMATS)('F1/F2/F3: without a message there is exactly one text block (%s)', (format) => {
    expect(renderChecked(failure('timeout', 'x'), format).rendered.content).toHaveLength(1);
  });
});

describe('F5 media', () => {
  const image = { type: 'image', data: PNG, mimeType: 'image/png' };
  const audio = { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' };
  const blob = {
    type: 'resource',
    resource: { uri: 'file:///b.bin', blob: 'AAEC', mimeType: 'application/x' },
  };
  const textResource = { type: 'resource', resource: { uri: 'file:///t.txt', text: 'hi' } };
  const link = { type: 'resource_link', uri: 'file:///l.txt', name: 'l.txt' };
  const valid = [image, audio, blob, textResource, link];
  const invalid = [
    { type: 'image', data: '%%% not base64 %%%', mimeType: 'image/png' },
    { type: 'image', data: PNG },
    { type: 'resource_link', uri: 'file:///no-name' },
    { type: 'text', text: 'text is never media' },
    { type: 'video', data: PNG },
    null,
    'image',
  ];

  it.each(OUTPUT_FORMATS)(
    'F5: passthrough re-emits valid blocks after the JSON and message blocks (%s)',
    (format) => {
      const result = ok('x', { message: 'm', mediaBlocks: valid });
      const { rendered } = renderChecked(result, format, 'passthrough');
      expect(rendered.content.slice(2)).toEqual(valid);
    },
  );

  it.each(OUTPUT_FORMATS)(
    'F5: artifacts (the default) keeps non-text blocks out of content (%s)',
    (format) => {
      const { rendered } = renderChecked(ok('x', { mediaBlocks: valid }), format, 'artifacts');
      expect(rendered.content).toHaveLength(1);
    },
  );

  it.each(OUTPUT_FORMATS)(
    'F5: passthrough drops blocks the SDK would reject, never crashing (%s)',
    (format) => {
      const { rendered } = renderChecked(ok('x', { mediaBlocks: [...invalid, link] }), format, 'passthrough');
      expect(rendered.content.slice(1)).toEqual([link]);
    },
  );

  it('F5: a dropped block becomes an invalid_media_block warning in F1 meta_data', () => {
    const { envelope } = renderChecked(
      ok('x', { meta: { source: 'text', warnings: ['invalid_base64'] }, mediaBlocks: invalid }),
      'results',
      'passthrough',
    );
    expect(envelope['meta_data']).toEqual({
      source: 'text',
      warnings: ['invalid_base64', INVALID_MEDIA_BLOCK_WARNING],
    });
  });
});

describe('R2: rendering cost and totality', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(OUTPUT_FORMATS.flatMap((format) => MEDIA_MODES.map((media) => [format, media] as const)))(
    'R2: %s/%s renders with exactly one JSON.stringify and no JSON.parse',
    (format, media) => {
      const result = ok(
        { rows: [1, 2, 3] },
        { meta, files, message: 'm', mediaBlocks: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
      );
      const stringify = vi.spyOn(JSON, 'stringify');
      const parse = vi.spyOn(JSON, 'parse');
      renderCallToolResult(result, { format, media });
      expect(stringify).toHaveBeenCalledTimes(1);
      expect(parse).not.toHaveBeenCalled();
    },
  );

  it.each(OUTPUT_FORMATS)(
    'R3/F1: a value that cannot become JSON renders a normalization_error (%s)',
    (format) => {
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      for (const value of [cyclic, 10n]) {
        const rendered = renderCallToolResult(ok(value, { meta, files }), { format, media: 'artifacts' });
        expect(() => CallToolResultSchema.parse(rendered)).not.toThrow();
        expect(rendered.isError).toBe(true);
        expectValidEnvelope(format, rendered.structuredContent);
        const first = rendered.content[0];
        expect(first?.type === 'text' ? JSON.parse(first.text) : undefined).toEqual(
          rendered.structuredContent,
        );
        expect(JSON.stringify(rendered.structuredContent)).toContain('normalization_error');
      }
    },
  );

  it.each(OUTPUT_FORMATS)('R3: even a malformed Result object gets a valid answer (%s)', (format) => {
    for (const bad of [null, {}, { success: true }, { success: false, meta: null }]) {
      const rendered = renderCallToolResult(bad as unknown as Result, { format, media: 'passthrough' });
      expect(() => CallToolResultSchema.parse(rendered)).not.toThrow();
      expect(rendered.isError).toBe(true);
      expectValidEnvelope(format, rendered.structuredContent);
    }
  });

  it('F1: renderEnvelope is the structuredContent of renderCallToolResult, bodies included', () => {
    const result = ok({ a: 1 }, { meta, files });
    for (const format of OUTPUT_FORMATS) {
      expect(renderEnvelope(result, format)).toEqual(
        renderCallToolResult(result, { format, media: 'artifacts' }).structuredContent,
      );
    }
  });
});

describe('T6: the envelope JSON Schemas are valid MCP outputSchemas', () => {
  it.each(OUTPUT_FORMATS)(
    'T6: %s has type "object" at the top level and the SDK ToolSchema accepts it',
    (format) => {
      const schema = ENVELOPE_JSON_SCHEMAS[format];
      expect(schema.type).toBe('object');
      expect(() =>
        ToolSchema.parse({ name: 'x', inputSchema: { type: 'object' }, outputSchema: schema }),
      ).not.toThrow();
    },
  );

  it.each(OUTPUT_FORMATS)(
    'T6: %s compiles in draft-07 Ajv too, and uses no 2020-12-only keyword',
    (format) => {
      const schema = ENVELOPE_JSON_SCHEMAS[format];
      expect(() => new Ajv({ strict: true }).compile(schema)).not.toThrow();
      const serialized = JSON.stringify(schema);
      for (const keyword of [
        '$schema',
        '$defs',
        'prefixItems',
        'unevaluatedProperties',
        'dependentSchemas',
      ]) {
        expect(serialized).not.toContain(`"${keyword}"`);
      }
    },
  );

  it.each(OUTPUT_FORMATS)('T6: %s is deep-frozen (one object shared by every tool)', (format) => {
    expect(Object.isFrozen(ENVELOPE_JSON_SCHEMAS[format])).toBe(true);
    expect(
      Object.isFrozen(
        (ENVELOPE_JSON_SCHEMAS[format] as { anyOf?: unknown; oneOf?: unknown }).anyOf ??
          (ENVELOPE_JSON_SCHEMAS[format] as { oneOf?: unknown }).oneOf,
      ),
    ).toBe(true);
  });
});

describe('F1/F2/F3: an SDK client accepts rendered results against the advertised outputSchema', () => {
  const results: Result[] = [
    ok({ rows: 3 }, { meta, files, message: 'm' }),
    ok(null, { meta: { source: 'empty' } }),
    failure('tool_error', 'No such record', {
      errorCode: 'NOT_FOUND',
      errorData: { id: 7 },
      instruction: 'i',
    }),
  ];

  it.each(OUTPUT_FORMATS)(
    'F1/F2/F3: client.callTool validates success and failure structuredContent (%s)',
    async (format) => {
      const server = new Server({ name: 'render-test', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: results.map((_r, index) => ({
          name: `t${index}`,
          inputSchema: { type: 'object' as const },
          outputSchema: ENVELOPE_JSON_SCHEMAS[format],
        })),
      }));
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        const index = Number(request.params.name.slice(1));
        return renderCallToolResult(results[index] as Result, { format, media: 'passthrough' });
      });
      const client = new Client({ name: 'render-test-client', version: '1.0.0' });
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
      try {
        await client.listTools();
        for (const [index, result] of results.entries()) {
          const received = (await client.callTool({ name: `t${index}` })) as CallToolResult;
          expect(received.isError).toBe(!result.success);
          expect(received.structuredContent).toEqual(renderEnvelope(result, format));
        }
      } finally {
        await client.close();
        await server.close();
      }
    },
  );
});

describe('the downstream _meta and MCP Apps (N12, U6)', () => {
  it('N12: resultMeta becomes the CallToolResult _meta in every format', () => {
    for (const format of OUTPUT_FORMATS) {
      const rendered = renderCallToolResult(
        ok({ a: 1 }, { meta: { source: 'structured', resultMeta: { viewUUID: 'v-1' } } }),
        { format, media: 'artifacts' },
      );
      expect(rendered._meta, format).toEqual({ viewUUID: 'v-1' });
    }
    expect(renderCallToolResult(ok(1), { format: 'results', media: 'artifacts' })).not.toHaveProperty(
      '_meta',
    );
  });

  it("U6: an app tool's result is rendered in its server's shape; a block the SDK refuses is left out", () => {
    const original = {
      content: [{ type: 'text', text: 'PDF opened.' }, { type: 'bogus' }],
      structuredContent: { viewUUID: 'v-1' },
      _meta: { viewUUID: 'v-1' },
    };
    const result: Result = {
      ...ok(
        { viewUUID: 'v-1' },
        { meta: { source: 'structured', resultMeta: { viewUUID: 'v-1' } }, original },
      ),
      rendering: 'original',
    };
    expect(renderCallToolResult(result, { format: 'results', media: 'artifacts' })).toEqual({
      content: [{ type: 'text', text: 'PDF opened.' }],
      structuredContent: { viewUUID: 'v-1' },
      _meta: { viewUUID: 'v-1' },
    });
  });

  it("U6: a failure of the gateway's own (no original) still gets the envelope", () => {
    const result: Result = { ...failure('timeout', 'too slow'), rendering: 'original' };
    const rendered = renderCallToolResult(result, { format: 'results', media: 'artifacts' });
    expect(rendered.isError).toBe(true);
    expect(rendered.structuredContent).toMatchObject({ meta_data: { error_type: 'timeout' } });
  });
});
