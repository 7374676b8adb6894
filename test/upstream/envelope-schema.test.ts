import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { failure, ok, type Result } from '../../src/core/result.js';
import {
  ENVELOPE_JSON_SCHEMAS,
  ENVELOPE_OUTPUT_SCHEMAS,
  OUTPUT_FORMATS,
  typedEnvelopeSchema,
  type OutputFormat,
} from '../../src/upstream/envelope-schema.js';
import { renderCallToolResult } from '../../src/upstream/render.js';

describe('advertised outputSchema', () => {
  it.each(OUTPUT_FORMATS)(
    'T6: the %s outputSchema is one object schema without descriptions, under half the exact schema',
    (format) => {
      const advertised = ENVELOPE_OUTPUT_SCHEMAS[format];
      expect(advertised.type).toBe('object');
      expect(advertised).not.toHaveProperty('anyOf');
      expect(advertised).not.toHaveProperty('oneOf');
      const text = JSON.stringify(advertised);
      // No `description` keyword (a property NAMED description, like a resource link's, is kept).
      expect(text).not.toMatch(/"description":"/);
      expect(text.length).toBeLessThan(JSON.stringify(ENVELOPE_JSON_SCHEMAS[format]).length / 2);
      expect(Object.isFrozen(advertised)).toBe(true);
    },
  );
});

describe('typed envelope schemas (T14)', () => {
  const tool = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { city: { type: 'string' }, temperature_c: { type: 'number' } },
    required: ['city', 'temperature_c'],
    additionalProperties: false,
  };
  const render = (result: Result, format: OutputFormat) =>
    renderCallToolResult(result, { format, media: 'artifacts' }).structuredContent;

  it.each(OUTPUT_FORMATS)(
    'T14: the %s envelope of a tool with its own outputSchema admits its successes, failures, spilled values and null, and refuses a value of another type',
    (format) => {
      const schema = typedEnvelopeSchema(format, tool);
      expect(schema).toBeDefined();
      const validate = new Ajv2020({ strict: false }).compile(schema as object);
      const good = ok({ city: 'Lisbon', temperature_c: 21 }, { meta: { source: 'structured' } });
      const spilled = ok({ truncated: true, file: 'result.json', bytes: 70000, preview: '{' });
      for (const result of [good, failure('timeout', 'too slow'), spilled, ok(null)]) {
        expect(validate(render(result, format)), JSON.stringify(validate.errors)).toBe(true);
      }
      expect(validate(render(ok({ city: 7 }), format))).toBe(false);
    },
  );

  it("T14: FastMCP's wrapper schema types the unwrapped value (N12)", () => {
    const wrapper = {
      type: 'object',
      properties: { result: { type: 'string' } },
      required: ['result'],
      'x-fastmcp-wrap-result': true,
    };
    const validate = new Ajv2020({ strict: false }).compile(
      typedEnvelopeSchema('results', wrapper) as object,
    );
    expect(validate(render(ok('Hello, Ada!'), 'results'))).toBe(true);
    expect(validate(render(ok({ result: 'Hello' }), 'results'))).toBe(false);
  });

  it.each([
    ['N6 {results}', { results: { type: 'array' } }],
    ['N8 {success, value}', { success: { type: 'boolean' }, value: {} }],
    ['N8 {status, data}', { status: { type: 'string' }, data: {} }],
    ['N8 {result, error}', { result: {}, error: {} }],
  ])('T14: a schema of a payload the normalizer unwraps (%s) is not embedded', (_name, properties) => {
    expect(typedEnvelopeSchema('results', { type: 'object', properties })).toBeUndefined();
  });

  it('T14: a schema with $ref or $defs is not embedded (it would resolve against the envelope)', () => {
    const withRef = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/a' } },
      $defs: { a: { type: 'string' } },
    };
    expect(typedEnvelopeSchema('results', withRef)).toBeUndefined();
  });
});
