import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { normalizeCallToolResult, type NormalizeOptions } from '../../src/core/normalize.js';
import { ERROR_TYPES, type Result } from '../../src/core/result.js';
import { PREVIEW_ROWS_CHARS } from '../../src/core/artifacts.js';

const options: NormalizeOptions = { maxInlineBytes: 65536, inbandErrors: true };
const PNG = 'iVBORw0KGgo=';

function run(raw: unknown, overrides: Partial<NormalizeOptions> = {}): Result {
  return normalizeCallToolResult(raw, { ...options, ...overrides });
}

/** The value of a Result that must be a success. */
function valueOf(result: Result): unknown {
  if (!result.success) throw new Error(`expected a success, got ${result.errorType}: ${result.error}`);
  return result.value;
}

function text(t: string) {
  return { type: 'text', text: t };
}

/** The fields a table row asserts on. */
function view(result: Result): Record<string, unknown> {
  return result.success
    ? { success: true, value: result.value, source: result.meta.source, warnings: result.meta.warnings }
    : {
        success: false,
        errorType: result.errorType,
        error: result.error,
        source: result.meta.source,
        warnings: result.meta.warnings,
      };
}

describe('structuredContent (N1, N2)', () => {
  it.each([
    ['N1: structuredContent is the value', { content: [], structuredContent: { a: 1 } }, { a: 1 }, []],
    [
      'N1: structuredContent wins over equal JSON text without a warning',
      { content: [text('{"a": 1}')], structuredContent: { a: 1 } },
      { a: 1 },
      [],
    ],
    [
      'N2: structured wins over disagreeing JSON text, with a warning',
      { content: [text('{"a": 2}')], structuredContent: { a: 1 } },
      { a: 1 },
      ['structured_text_mismatch'],
    ],
    [
      'N2: a prose summary is not a disagreement',
      { content: [text('Found 1 item.')], structuredContent: { a: 1 } },
      { a: 1 },
      [],
    ],
    [
      'N2: prose that starts like JSON but does not parse is not a disagreement',
      { content: [text('3 items found')], structuredContent: { n: 3 } },
      { n: 3 },
      [],
    ],
    [
      'N2: one equal JSON block among several is agreement',
      { content: [text('[1]'), text('{"a":1}')], structuredContent: { a: 1 } },
      { a: 1 },
      [],
    ],
    [
      'N2: a single-key wrapper of the JSON text agrees (MCP forces an object)',
      { content: [text('[1, 2]')], structuredContent: { items: [1, 2] } },
      { items: [1, 2] },
      [],
    ],
    [
      'N2: a single-key wrapper holding the raw text agrees, even when the text is JSON',
      { content: [text('{"a": 1}\n')], structuredContent: { content: '{"a": 1}\n' } },
      { content: '{"a": 1}\n' },
      [],
    ],
    [
      'N2: a single-key wrapper of different JSON disagrees',
      { content: [text('[1]')], structuredContent: { items: [1, 2] } },
      { items: [1, 2] },
      ['structured_text_mismatch'],
    ],
    [
      'N2: a two-key object is not a wrapper',
      { content: [text('[1, 2]')], structuredContent: { items: [1, 2], total: 2 } },
      { items: [1, 2], total: 2 },
      ['structured_text_mismatch'],
    ],
    [
      'N1: structuredContent null counts as absent',
      { content: [text('hello')], structuredContent: null },
      'hello',
      [],
    ],
    [
      'N1/E7: a non-object structuredContent (any JSON value since 2026-07-28) is the value, with no warning',
      { content: [], structuredContent: [1, 2] },
      [1, 2],
      [],
    ],
  ])('%s', (_label, raw, value, warnings) => {
    const result = run(raw);
    expect(view(result)).toMatchObject({ success: true, value, warnings });
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'plain'],
    ['a number', 42],
    ['a boolean', false],
  ])('E7: structuredContent as %s is the value, source structured, no warning', (_label, structured) => {
    const result = run({ content: [text(JSON.stringify(structured))], structuredContent: structured });
    expect(view(result)).toMatchObject({ success: true, value: structured, warnings: [] });
    expect(result.meta.source).toBe('structured');
  });

  it('N2: the diagnostic carries a short diff', () => {
    const result = run({ content: [text('{"a":{"b":2}}')], structuredContent: { a: { b: 1 } } });
    expect(result.meta.diagnostics).toEqual([
      {
        code: 'structured_text_mismatch',
        message: 'structuredContent and JSON text block 1 disagree (structured wins): $.a.b: 1 ≠ 2',
      },
    ]);
  });
});

describe('text content (N3) and empty results (N5)', () => {
  it.each([
    ['N3: one JSON text block → its parse', [text('{"rows":3}')], { rows: 3 }, 'text_json'],
    ['N3: one JSON scalar text block → its parse', [text('42')], 42, 'text_json'],
    ['N3: one prose block → the string', [text('Hello world')], 'Hello world', 'text'],
    ['N3: an empty text block → the empty string', [text('')], '', 'text'],
    [
      'N3: several JSON blocks → an array of parses',
      [text('1'), text('{"a":2}')],
      [1, { a: 2 }],
      'text_json',
    ],
    [
      'N3: several blocks, prose only → joined by newline',
      [text('Found 2 rows.'), text('done')],
      'Found 2 rows.\ndone',
      'text',
    ],
    [
      'N3: a JSON block beside a scalar and prose → the JSON block is the value',
      [text('{"a":1}'), text('42'), text('done')],
      { a: 1 },
      'text_json',
    ],
    ['N3: several prose blocks → joined', [text('a'), text('b'), text('c')], 'a\nb\nc', 'text'],
    ['N5: no content → null', [], null, 'empty'],
    [
      'N5: only an image → null value, the image as a file',
      [{ type: 'image', data: PNG, mimeType: 'image/png' }],
      null,
      'empty',
    ],
  ])('%s', (_label, content, value, source) => {
    expect(view(run({ content }))).toMatchObject({ success: true, value, source });
  });

  it('N5: a result with neither content nor structuredContent is an empty success', () => {
    expect(view(run({}))).toEqual({ success: true, value: null, source: 'empty', warnings: [] });
  });
});

describe('files and links (N4)', () => {
  it('N4: image, audio, embedded blob and text resources become named artifacts; links are listed', () => {
    const link = { type: 'resource_link', uri: 'file:///r/a.txt', name: 'a.txt', mimeType: 'text/plain' };
    const result = run({
      content: [
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'image', data: PNG, mimeType: 'image/jpeg' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///docs/notes.txt', mimeType: 'text/plain', text: 'hi' } },
        {
          type: 'resource',
          resource: { uri: 'test://static/resource/2', mimeType: 'application/pdf', blob: 'AA==' },
        },
        { type: 'resource', resource: { uri: 'file:///other/notes.txt', text: 'again' } },
        link,
      ],
    });
    expect(result.files).toEqual([
      { name: 'image-1.png', mimeType: 'image/png', kind: 'image', base64: PNG },
      { name: 'image-2.jpg', mimeType: 'image/jpeg', kind: 'image', base64: PNG },
      { name: 'audio-1.wav', mimeType: 'audio/wav', kind: 'audio', base64: 'UklGRg==' },
      {
        name: 'notes.txt',
        mimeType: 'text/plain',
        kind: 'text',
        base64: 'aGk=',
        uri: 'file:///docs/notes.txt',
      },
      {
        name: 'resource-1.pdf',
        mimeType: 'application/pdf',
        kind: 'blob',
        base64: 'AA==',
        uri: 'test://static/resource/2',
      },
      {
        name: 'notes-2.txt',
        mimeType: 'text/plain',
        kind: 'text',
        base64: 'YWdhaW4=',
        uri: 'file:///other/notes.txt',
      },
    ]);
    expect(result.meta.resourceLinks).toEqual([
      { uri: 'file:///r/a.txt', name: 'a.txt', mimeType: 'text/plain' },
    ]);
    expect(result.mediaBlocks).toHaveLength(7);
    expect(result.mediaBlocks[6]).toBe(link);
  });

  it.each([
    [
      'F5/N4: invalid base64 in an image',
      { type: 'image', data: 'not base64!', mimeType: 'image/png' },
      'invalid_base64',
    ],
    [
      'F5/N4: invalid base64 in a blob',
      { type: 'resource', resource: { uri: 'x:/a.bin', blob: '***' } },
      'invalid_base64',
    ],
    ['N10: an image without data', { type: 'image', mimeType: 'image/png' }, 'invalid_base64'],
    ['N10: an unknown block type', { type: 'video', data: 'AA==' }, 'unknown_content_block'],
    ['N10: a block without a type', { text: 'x' }, 'malformed_content_block'],
    ['N10: a block that is not an object', 'text', 'malformed_content_block'],
    ['N10: a text block whose text is not a string', { type: 'text', text: 5 }, 'malformed_content_block'],
    ['N10: a resource without a resource', { type: 'resource' }, 'malformed_content_block'],
    [
      'N10: a resource with neither text nor blob',
      { type: 'resource', resource: { uri: 'x:/a' } },
      'malformed_content_block',
    ],
    ['N10: a resource_link without a uri', { type: 'resource_link', name: 'x' }, 'malformed_content_block'],
  ])('%s is dropped with a warning, never a crash', (_label, block, warning) => {
    const result = run({ content: [block, text('ok')] });
    expect(view(result)).toEqual({ success: true, value: 'ok', source: 'text', warnings: [warning] });
    expect(result.files).toEqual([]);
    expect(result.mediaBlocks).toEqual([]);
    expect(result.meta.diagnostics[0]?.message).toContain('content[0]');
  });
});

describe('output contract passthrough (N6)', () => {
  it('N6: results becomes the value, meta_data and files are merged', () => {
    const result = run({
      content: [],
      structuredContent: {
        results: { rows: 2 },
        meta_data: { elapsed_ms: 4 },
        returned_file_names: ['chart.png', 'data.csv'],
        returned_file_contents: [PNG, { name: 'ignored.bin', b64: 'YSxi' }],
      },
    });
    expect(view(result)).toMatchObject({ success: true, value: { rows: 2 }, source: 'passthrough' });
    expect(result.meta.downstreamMeta).toEqual({ elapsed_ms: 4 });
    expect(result.files).toEqual([
      { name: 'chart.png', mimeType: 'image/png', kind: 'image', base64: PNG },
      { name: 'data.csv', mimeType: 'text/csv', kind: 'text', base64: 'YSxi' },
    ]);
  });

  it('N6: a file name without content and invalid base64 are warnings', () => {
    const result = run({
      structuredContent: {
        results: 1,
        returned_file_names: ['a.txt', 'b.txt'],
        returned_file_contents: ['%%'],
      },
    });
    expect(result.meta.warnings).toEqual(['invalid_base64', 'missing_file_content']);
    expect(result.files).toEqual([]);
  });

  it("N6: a chained gateway's failure envelope stays a failure", () => {
    const result = run({
      structuredContent: {
        results: { error: 'No such row' },
        meta_data: { is_error: true, error_type: 'tool_error', instruction: 'Stop.' },
      },
    });
    expect(result).toMatchObject({
      success: false,
      errorType: 'tool_error',
      error: 'No such row',
      errorCode: 'tool_error',
      instruction: 'Stop.',
    });
  });

  it('N6: a contract payload in a JSON text block passes through too', () => {
    expect(view(run({ content: [text('{"results":[1,2]}')] }))).toMatchObject({
      value: [1, 2],
      source: 'passthrough',
    });
  });
});

describe('isError (N7)', () => {
  it.each([
    [
      'N7: the text is the error',
      { isError: true, content: [text('File not found')] },
      'File not found',
      undefined,
    ],
    [
      'N7: the error field of a JSON payload',
      { isError: true, content: [text('{"error":"bad id","id":3}')] },
      'bad id',
      { error: 'bad id', id: 3 },
    ],
    [
      'N7: the message field of a JSON payload',
      { isError: true, content: [text('{"message":"denied"}')] },
      'denied',
      { message: 'denied' },
    ],
    [
      'N7: an error object {code, message}',
      { isError: true, structuredContent: { error: { code: 'E42', message: 'quota' } } },
      'quota',
      { error: { code: 'E42', message: 'quota' } },
    ],
    [
      'N7: a non-object JSON payload is kept as {payload}',
      { isError: true, content: [text('[1,2]')] },
      '[1,2]',
      { payload: [1, 2] },
    ],
    ['N7: no content at all', { isError: true }, 'The tool reported an error without a message', undefined],
    [
      'N7: several text blocks are joined',
      { isError: true, content: [text('a'), text('b')] },
      'a\nb',
      undefined,
    ],
  ])('%s', (_label, raw, error, errorData) => {
    const result = run(raw);
    expect(result).toMatchObject({ success: false, errorType: 'tool_error', error });
    expect(result.success ? undefined : result.errorData).toEqual(errorData);
  });

  it('N7: an MCP error prefix in the text is stripped and its code kept in errorCode', () => {
    const result = run({ isError: true, content: [text('MCP error -32602: MCP error -32602: bad path')] });
    expect(result).toMatchObject({ error: 'bad path', errorCode: '-32602' });
  });

  it('N7: an error object keeps its code in errorCode', () => {
    expect(run({ isError: true, content: [text('{"error":{"code":404,"message":"gone"}}')] })).toMatchObject({
      errorCode: '404',
    });
  });

  it('N7: isError "true" as a string is not an error', () => {
    expect(run({ isError: 'true', content: [text('x')] }).success).toBe(true);
  });

  it('N7/N8: an in-band failure payload under isError keeps its fields', () => {
    const result = run({
      isError: true,
      content: [text('{"success":false,"error":"locked","error_type":"conflict","instruction":"Wait."}')],
    });
    expect(result).toMatchObject({
      errorType: 'tool_error',
      error: 'locked',
      errorCode: 'conflict',
      instruction: 'Wait.',
    });
    expect(result.meta.convention).toBe('result');
  });

  it('N7: files and links of a failed call are still returned', () => {
    const result = run({
      isError: true,
      content: [text('x'), { type: 'image', data: PNG, mimeType: 'image/png' }],
    });
    expect(result.files.map((f) => f.name)).toEqual(['image-1.png']);
  });
});

describe('in-band conventions (N8)', () => {
  it.each([
    ['ADR-003 failure', { success: false, error: 'x', error_type: 'conflict' }, false, 'result'],
    ['ADR-003 success', { success: true, value: 5 }, true, 'result'],
    ['ADR-002 failure', { status: 'ERROR', error: { code: 'E', message: 'x' } }, false, 'response'],
    ['ADR-002 success', { status: 'SUCCESS', data: 5 }, true, 'response'],
    ['ADR-0005 failure', { result: '', error: 'x' }, false, 'tool_result'],
    ['ADR-0005 success', { result: 5, error: '' }, true, 'tool_result'],
  ])('N8: %s from structuredContent and from JSON text', (_label, payload, success, convention) => {
    for (const raw of [{ structuredContent: payload }, { content: [text(JSON.stringify(payload))] }]) {
      const result = run(raw);
      expect(result.success).toBe(success);
      expect(result.meta.convention).toBe(convention);
      if (result.success) expect(result.value).toBe(5);
      else expect(result).toMatchObject({ errorType: 'tool_error', error: 'x' });
    }
  });

  it('N8: ADR-002 keeps the code in errorCode and the details in errorData; errorType stays tool_error', () => {
    const result = run({
      structuredContent: { status: 'ERROR', error: { code: 'NOT_FOUND', message: 'no', details: { id: 1 } } },
    });
    expect(result).toMatchObject({ errorType: 'tool_error', errorCode: 'NOT_FOUND', errorData: { id: 1 } });
  });

  it('N8: ADR-003 success carries message and instruction', () => {
    const result = run({
      structuredContent: { success: true, value: [1], message: 'One.', instruction: 'Show it.' },
    });
    expect(result).toMatchObject({ success: true, value: [1], message: 'One.', instruction: 'Show it.' });
  });

  it('N8: inbandErrors: false leaves the payload as it is', () => {
    const payload = { success: false, error: 'x' };
    const result = run({ structuredContent: payload }, { inbandErrors: false });
    expect(result).toMatchObject({ success: true, value: payload });
    expect(result.meta.convention).toBeUndefined();
  });

  it('N8: a payload with success among unrelated keys is not reinterpreted', () => {
    const payload = { success: false, items: [], total: 0 };
    expect(run({ structuredContent: payload })).toMatchObject({ success: true, value: payload });
  });
});

describe('base64 repeated in the value (N4)', () => {
  const png =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

  it('N4: a file repeated inside structuredContent is replaced by a reference, so base64 stays out of the prompt', () => {
    const block = { type: 'image', data: png, mimeType: 'image/png' };
    const structured = { content: [block], note: 'kept' };
    const result = run({ content: [block], structuredContent: structured });
    expect(valueOf(result)).toEqual({
      content: [{ type: 'image', data: '[base64 moved to file image-1.png]', mimeType: 'image/png' }],
      note: 'kept',
    });
    expect(result.meta.warnings).toEqual(['base64_moved_to_file']);
    expect(result.files.map((f) => f.base64)).toEqual([png]);
    // The downstream's object is not mutated.
    expect(structured.content[0]?.data).toBe(png);
  });

  it('N4: short strings and values without files are left alone', () => {
    const result = run({
      content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }],
      structuredContent: { data: 'aGk=' },
    });
    expect(valueOf(result)).toEqual({ data: 'aGk=' });
    expect(result.meta.warnings).toEqual([]);
  });
});

describe('size limit (N9)', () => {
  it('N9: a value over max_inline_bytes moves into result.json', () => {
    const value = { text: 'x'.repeat(200) };
    const result = run({ structuredContent: value }, { maxInlineBytes: 100 });
    const json = JSON.stringify(value);
    expect(result).toMatchObject({
      success: true,
      value: { truncated: true, file: 'result.json', bytes: json.length, preview: json },
    });
    expect(result.files).toEqual([
      { name: 'result.json', mimeType: 'application/json', kind: 'json', base64: btoa(json) },
    ]);
  });

  it('N9: the limit is exclusive: a value exactly at the limit stays inline', () => {
    const value = { t: 'abc' };
    expect(
      valueOf(run({ structuredContent: value }, { maxInlineBytes: JSON.stringify(value).length })),
    ).toEqual(value);
    expect(
      valueOf(run({ structuredContent: value }, { maxInlineBytes: JSON.stringify(value).length - 1 })),
    ).toMatchObject({
      truncated: true,
    });
  });

  it.each([
    ['plain text', { content: [text('y'.repeat(300))] }],
    ['JSON text', { content: [text(JSON.stringify({ a: 'y'.repeat(300) }, null, 2))] }],
    ['an ADR-003 inner value', { structuredContent: { success: true, value: 'y'.repeat(300) } }],
    ['passthrough results', { structuredContent: { results: 'y'.repeat(300) } }],
  ])('N9: applies to %s', (_label, raw) => {
    expect(valueOf(run(raw, { maxInlineBytes: 100 }))).toMatchObject({
      truncated: true,
      file: 'result.json',
    });
  });

  it('N9: JSON text is spilled as the downstream wrote it: parsed once, never serialized again', () => {
    const written = JSON.stringify({ rows: Array.from({ length: 5000 }, (_, i) => ({ i })) }, null, 2);
    const stringify = JSON.stringify;
    let serialized = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      const out = stringify(...args);
      serialized += out?.length ?? 0;
      return out;
    }) as typeof JSON.stringify;
    let result: Result;
    try {
      result = run({ content: [text(written)] }, { maxInlineBytes: 100 });
    } finally {
      JSON.stringify = stringify;
    }
    // Only the preview's first rows are serialized (to measure them), never the whole value.
    expect(serialized).toBeLessThanOrEqual(2 * PREVIEW_ROWS_CHARS);
    expect(valueOf(result)).toMatchObject({ truncated: true, bytes: written.length, items: 5000 });
    expect(result.files[0]?.base64).toBe(btoa(written));
  });

  it('N9: a spilled value keeps the other artifacts and gets a unique name', () => {
    const result = run(
      {
        content: [
          text('z'.repeat(300)),
          { type: 'resource', resource: { uri: 'file:///result.json', text: '{}' } },
        ],
      },
      { maxInlineBytes: 100 },
    );
    expect(result.files.map((f) => f.name)).toEqual(['result.json', 'result-2.json']);
    expect(valueOf(result)).toMatchObject({ file: 'result-2.json' });
  });
});

describe('totality (N10)', () => {
  it.each([
    ['null', null, 'downstream_error'],
    ['a string', 'hello', 'downstream_error'],
    ['a number', 7, 'downstream_error'],
    ['an array', [{ type: 'text', text: 'x' }], 'downstream_error'],
    ['undefined', undefined, 'downstream_error'],
    ['content that is not an array, nothing else', { content: 'hello' }, 'downstream_error'],
  ])('N10: %s gives a failure, not an exception', (_label, raw, errorType) => {
    expect(run(raw)).toMatchObject({ success: false, errorType });
  });

  it('N10: content that is not an array beside structuredContent is a warning', () => {
    expect(view(run({ content: { type: 'text' }, structuredContent: { a: 1 } }))).toEqual({
      success: true,
      value: { a: 1 },
      source: 'structured',
      warnings: ['malformed_content'],
    });
  });

  it('N10: a getter that throws inside the raw result gives normalization_error', () => {
    const raw = Object.defineProperty({}, 'content', {
      enumerable: true,
      get() {
        throw new Error('hostile getter');
      },
    });
    const result = run(raw);
    expect(result).toMatchObject({ success: false, errorType: 'normalization_error' });
    expect(result.success ? undefined : result.exception).toBeInstanceOf(Error);
  });

  it('N10: pure: the same input gives the same output and the input is not changed', () => {
    const raw = {
      content: [text('{"a":1}'), { type: 'image', data: PNG, mimeType: 'image/png' }],
      structuredContent: { a: 2 },
    };
    const copy = structuredClone(raw);
    expect(run(raw)).toEqual(run(raw));
    expect(raw).toEqual(copy);
  });

  it('N10: call metadata is copied from the options', () => {
    const result = run({ content: [] }, { server: 's', tool: 't', elapsedMs: 12 });
    expect(result.meta).toMatchObject({ server: 's', tool: 't', elapsedMs: 12, source: 'empty' });
  });

  it('N10/R3: any JSON-like input gives a Result with a known error type', () => {
    const block = fc.oneof(
      fc.record(
        {
          type: fc.constantFrom('text', 'image', 'audio', 'resource', 'resource_link', 'x'),
          text: fc.string(),
          data: fc.string(),
          uri: fc.string(),
          resource: fc.anything(),
        },
        { requiredKeys: ['type'] },
      ),
      fc.anything(),
    );
    const raw = fc.oneof(
      fc.anything(),
      fc.record(
        {
          content: fc.oneof(fc.array(block), fc.anything()),
          structuredContent: fc.anything(),
          isError: fc.anything(),
        },
        { requiredKeys: [] },
      ),
      fc
        .jsonValue()
        .map((v) => ({ content: [{ type: 'text', text: JSON.stringify(v) }], structuredContent: v })),
    );
    fc.assert(
      fc.property(
        raw,
        fc.boolean(),
        fc.integer({ min: 0, max: 200 }),
        (input, inbandErrors, maxInlineBytes) => {
          const result = normalizeCallToolResult(input, { inbandErrors, maxInlineBytes });
          if (!result.success) expect(ERROR_TYPES).toContain(result.errorType);
          else expect(result.value).not.toBeUndefined();
          expect(Array.isArray(result.meta.warnings)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('text addressed to the model beside structuredContent (N11)', () => {
  it.each([
    [
      'prose beside an object',
      [text('Found 2 open issues.')],
      { open: 2 },
      undefined,
      ['Found 2 open issues.'],
    ],
    [
      'instructions after an agreeing JSON text',
      [text('{"id":"v-1"}'), text('Call interact with v-1. Do not call display_pdf again.')],
      { id: 'v-1' },
      undefined,
      ['Call interact with v-1. Do not call display_pdf again.'],
    ],
    ['two prose blocks, in order', [text('first'), text('second')], { n: 1 }, undefined, ['first', 'second']],
    ['text that looks like JSON but is not', [text('[draft] notes')], { n: 1 }, undefined, ['[draft] notes']],
    ['the string a wrapper carries', [text('Hello, Ada!')], { result: 'Hello, Ada!' }, undefined, undefined],
    [
      'a bracketed string a wrapper carries',
      [text('[FILE] a.txt')],
      { content: '[FILE] a.txt' },
      undefined,
      undefined,
    ],
    ['an agreeing JSON text', [text('{"n":1}')], { n: 1 }, undefined, undefined],
    [
      'a disagreeing JSON text (N2 warns)',
      [text('{"n":2}')],
      { n: 1 },
      'structured_text_mismatch',
      undefined,
    ],
    ['a string structured value repeated', [text('plain')], 'plain', undefined, undefined],
  ])('N11: %s', (_name, content, structuredContent, warning, notes) => {
    const result = normalizeCallToolResult({ content, structuredContent }, options);
    expect(result.meta.notes).toEqual(notes);
    if (warning === undefined) expect(result.meta.warnings).toEqual([]);
    else expect(result.meta.warnings).toContain(warning);
  });

  it('N11: a failure keeps advice beside the error its payload names, and never repeats the error', () => {
    const result = normalizeCallToolResult(
      {
        isError: true,
        content: [text('Quota exceeded'), text('Retry with a page size of 50.')],
        structuredContent: { error: 'Quota exceeded' },
      },
      options,
    );
    expect(result.success).toBe(false);
    expect(result.meta.notes).toEqual(['Retry with a page size of 50.']);
  });

  it('N11: a failure whose payload names no error reads its texts as the error, not as notes', () => {
    const result = normalizeCallToolResult(
      { isError: true, content: [text('disk full')], structuredContent: { code: 28 } },
      options,
    );
    expect(result.success ? undefined : result.error).toBe('disk full');
    expect(result.meta.notes).toBeUndefined();
  });

  it('N11: an in-band success message is not repeated as a note', () => {
    const result = normalizeCallToolResult(
      { content: [text('Saved.')], structuredContent: { success: true, message: 'Saved.' } },
      options,
    );
    expect(result.message).toBe('Saved.');
    expect(result.meta.notes).toBeUndefined();
  });
});

describe("the result's own _meta (N12)", () => {
  it('N12: _meta is kept as resultMeta, reserved io.modelcontextprotocol/ keys left out', () => {
    const result = run({
      content: [text('ok')],
      _meta: { viewUUID: 'v-1', 'io.modelcontextprotocol/related-task': { taskId: 't' } },
    });
    expect(result.meta.resultMeta).toEqual({ viewUUID: 'v-1' });
    expect(run({ content: [text('ok')], _meta: { 'io.modelcontextprotocol/x': 1 } }).meta).not.toHaveProperty(
      'resultMeta',
    );
  });

  it.each([{}, 1.5, 'p-1', 7, null])(
    'N12: a progressToken (%j), a request key hosts type strictly, is left out of a result',
    (token) => {
      const result = run({ content: [text('ok')], _meta: { progressToken: token, viewUUID: 'v-1' } });
      expect(result.meta.resultMeta).toEqual({ viewUUID: 'v-1' });
      expect(run({ content: [text('ok')], _meta: { progressToken: token } }).meta).not.toHaveProperty(
        'resultMeta',
      );
    },
  );

  it.each([
    ['a string', 'Hello, Ada!'],
    ['a number', 42],
    ['an array', [1, 2]],
  ])('N12: a FastMCP-wrapped %s is the value itself, and the marker travels', (_kind, inner) => {
    const result = run({
      content: [text(typeof inner === 'string' ? inner : JSON.stringify(inner))],
      structuredContent: { result: inner },
      _meta: { fastmcp: { wrap_result: true } },
    });
    expect(valueOf(result)).toEqual(inner);
    expect(result.meta.resultMeta).toEqual({ fastmcp: { wrap_result: true } });
    expect(result.meta.warnings).toEqual([]);
  });

  it('N12: without the marker, or with other keys beside result, the wrapper is the value', () => {
    expect(valueOf(run({ content: [], structuredContent: { result: 'x' } }))).toEqual({ result: 'x' });
    expect(
      valueOf(
        run({
          content: [],
          structuredContent: { result: 'x', more: 1 },
          _meta: { fastmcp: { wrap_result: true } },
        }),
      ),
    ).toEqual({ result: 'x', more: 1 });
  });
});

describe('hostile names from a downstream (N4, N6)', () => {
  const PIXEL = 'iVBORw0KGgo=';
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'N4: an image with mimeType %s is a plain .bin file, never a prototype member',
    (mimeType) => {
      const result = run({ content: [{ type: 'image', data: PIXEL, mimeType }] });
      expect(result.success).toBe(true);
      expect(result.files.map((file) => file.name)).toEqual(['image-1.bin']);
    },
  );

  it.each([
    ['../../../home/u/.bashrc', 'bashrc'],
    ['/etc/cron.d/x', 'x'],
    ['C:\\Windows\\evil.dll', 'evil.dll'],
    ['a\u0000b.txt', 'a_b.txt'],
    ['report 2026.pdf', 'report_2026.pdf'],
    ['..', 'file-1.bin'],
    ['x.__proto__', 'x.__proto__'],
  ])('N6: a returned file named %j is returned as %s, its original name kept', (given, safe) => {
    const result = run({
      content: [],
      structuredContent: {
        results: { ok: true },
        returned_file_names: [given],
        returned_file_contents: [PIXEL],
      },
    });
    expect(result.success, JSON.stringify(result)).toBe(true);
    expect(result.files.map((file) => file.name)).toEqual([safe]);
    const file = result.files[0];
    if (safe === given) {
      expect(file?.originalName).toBeUndefined();
      expect(result.meta.warnings).toEqual([]);
    } else {
      expect(file?.originalName).toBe(given);
      expect(result.meta.warnings).toContain('unsafe_file_name');
    }
  });
});
