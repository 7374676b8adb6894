/**
 * Property: for ANY input a downstream could send, however malformed, normalize → render gives a
 * CallToolResult the SDK accepts, whose structuredContent matches the advertised outputSchema of
 * the format, in every format and media mode (N10, R3, F1–F5).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { decode as decodeToon } from '@toon-format/toon';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { normalizeCallToolResult } from '../../src/core/normalize.js';
import type { Result } from '../../src/core/result.js';
import { MEDIA_MODES, OUTPUT_FORMATS } from '../../src/upstream/envelope-schema.js';
import { envelopeValidators } from '../helpers/envelope-validators.js';
import { renderCallToolResult } from '../../src/upstream/render.js';

const ajv = new Ajv2020({ strict: true, allErrors: false });
const validators = envelopeValidators(ajv);

const OPTIONS = { maxInlineBytes: 65536, inbandErrors: true } as const;

/** Anything, including the values JSON cannot carry (BigInt, Map, Date, null prototypes). */
const wild = fc.anything({
  maxDepth: 3,
  maxKeys: 5,
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withSparseArray: true,
  withBoxedValues: true,
});
const json = fc.jsonValue({ maxDepth: 3 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, fc.constant(undefined));
const base64 = fc.oneof(fc.base64String({ maxLength: 24 }), fc.string({ maxLength: 12 }));
const jsonText = json.map((value) => JSON.stringify(value) ?? 'null');

/** The in-band conventions (N6, N8) with random, often wrong-typed fields. */
const inband = fc.oneof(
  fc.record(
    {
      success: fc.oneof(fc.boolean(), json),
      value: json,
      error: fc.oneof(fc.string(), json),
      error_type: fc.oneof(fc.constantFrom('timeout', 'NOT_FOUND', 'tool_error'), json),
      instruction: fc.oneof(fc.string(), json),
      message: fc.oneof(fc.string(), json),
      error_data: json,
    },
    { requiredKeys: ['success'] },
  ),
  fc.record(
    {
      status: fc.oneof(fc.constantFrom('SUCCESS', 'ERROR'), json),
      data: json,
      error: fc.oneof(fc.record({ code: fc.oneof(fc.string(), json), message: json, details: json }), json),
    },
    { requiredKeys: ['status'] },
  ),
  fc.record({ result: json, error: fc.oneof(fc.string(), json) }, { requiredKeys: [] }),
  fc.record(
    {
      results: json,
      meta_data: fc.oneof(fc.dictionary(fc.string(), json), json),
      returned_file_names: fc.oneof(fc.array(fc.string(), { maxLength: 3 }), json),
      returned_file_contents: fc.oneof(fc.array(base64, { maxLength: 3 }), json),
    },
    { requiredKeys: ['results'] },
  ),
);

/** Content blocks: valid ones, and ones with missing or wrong-typed fields. */
const block = fc.oneof(
  fc.record({
    type: fc.constant('text'),
    text: fc.oneof(
      fc.string(),
      jsonText,
      inband.map((v) => JSON.stringify(v)),
    ),
  }),
  fc.record(
    {
      type: fc.constantFrom('image', 'audio'),
      data: base64,
      mimeType: maybe(fc.constantFrom('image/png', 'audio/wav')),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({
    type: fc.constant('resource'),
    resource: fc.record(
      {
        uri: maybe(fc.webUrl()),
        blob: maybe(base64),
        text: maybe(fc.string()),
        mimeType: maybe(fc.string()),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record(
    {
      type: fc.constant('resource_link'),
      uri: maybe(fc.string()),
      name: maybe(fc.string()),
      mimeType: maybe(fc.string()),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({ type: fc.oneof(fc.string(), json), text: wild, data: wild }, { requiredKeys: [] }),
  wild,
);

/** CallToolResult-like records: right and wrong content, isError and structuredContent. */
const callToolResult = fc.record(
  {
    content: fc.oneof(fc.array(block, { maxLength: 6 }), wild),
    structuredContent: fc.oneof(fc.dictionary(fc.string(), json), inband, wild),
    isError: fc.oneof(fc.boolean(), wild),
    _meta: wild,
  },
  { requiredKeys: [] },
);

const raw = fc.oneof(wild, json, inband, callToolResult, callToolResult, callToolResult);

function stringifies(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

/** Plain throws, not expect(): 180,000 checks per run make expect()'s overhead count. */
function check(result: Result): void {
  for (const format of OUTPUT_FORMATS) {
    for (const media of MEDIA_MODES) {
      const rendered = renderCallToolResult(result, { format, media });
      CallToolResultSchema.parse(rendered);
      // Only a value JSON cannot carry turns a success into a normalization_error (R3).
      const parts: unknown[] = [result.success ? result.value : result.errorData];
      if (format === 'results') parts.push(result.meta.downstreamMeta);
      const isError = stringifies(parts) ? !result.success : true;
      if (rendered.isError !== isError)
        throw new Error(`${format}/${media}: isError ${rendered.isError}, expected ${isError}`);
      const validate = validators[format];
      if (!validate(rendered.structuredContent)) {
        throw new Error(`${format}: ${ajv.errorsText(validate.errors)}`);
      }
      const first = rendered.content[0];
      if (first?.type !== 'text') throw new Error('content[0] is not a text block');
      const { returned_file_contents: _bodies, ...withoutBodies } = (rendered.structuredContent ??
        {}) as Record<string, unknown>;
      if (first.text !== JSON.stringify(withoutBodies)) {
        throw new Error(`${format}/${media}: the text block is not the envelope without file bodies`);
      }
    }
  }
}

describe('normalize → render over arbitrary input', () => {
  it('N10/R3/F1/F2/F3/F5: 10,000 arbitrary inputs never throw and always render a valid, schema-conforming CallToolResult in every format and media mode', () => {
    fc.assert(
      fc.property(raw, (input) => {
        const result = normalizeCallToolResult(input, OPTIONS);
        if (typeof result.success !== 'boolean') throw new Error('normalize returned no Result');
        check(result);
      }),
      { numRuns: 10_000 },
    );
  });
});

/** Results holding a table TOON writes as rows (F6's rule), so the property meets TOON often. */
const tables = fc
  .array(fc.record({ id: fc.integer(), name: fc.string({ maxLength: 12 }), ok: fc.boolean() }), {
    minLength: 3,
    maxLength: 8,
  })
  .map((rows) => ({ content: [], structuredContent: { rows } }));

describe('the TOON text block over arbitrary input', () => {
  it('F6: for 10,000 arbitrary inputs, in every format, the text block decodes to exactly the envelope, and is TOON only where that is shorter than its JSON', () => {
    let toonChosen = 0;
    fc.assert(
      fc.property(fc.oneof(raw, tables), (input) => {
        const result = normalizeCallToolResult(input, OPTIONS);
        for (const format of OUTPUT_FORMATS) {
          const rendered = renderCallToolResult(result, { format, media: 'artifacts', text: 'toon' });
          const first = rendered.content[0];
          if (first?.type !== 'text') throw new Error('content[0] is not a text block');
          const { returned_file_contents: _bodies, ...withoutBodies } = (rendered.structuredContent ??
            {}) as Record<string, unknown>;
          const json = JSON.stringify(withoutBodies);
          if (first.text === json) continue;
          toonChosen++;
          if (first.text.length >= json.length) throw new Error(`${format}: TOON chosen but not shorter`);
          const decoded = JSON.stringify(decodeToon(first.text));
          if (decoded !== JSON.stringify(JSON.parse(json))) {
            throw new Error(
              `${format}: TOON does not decode to the envelope:\n${first.text}\n${decoded}\n${json}`,
            );
          }
        }
      }),
      { numRuns: 10_000 },
    );
    // The property is not vacuous: TOON was chosen for some of them.
    if (toonChosen === 0) throw new Error('TOON was never chosen');
  });
});
