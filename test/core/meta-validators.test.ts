/**
 * T12: the meta-schema validators compiled ahead of time (src/core/meta-validators.ts) are a
 * fresh generation of Ajv's standalone code, and give the verdicts and messages that Ajv's own
 * `validateSchema` gives, with the options schema-compiler.ts uses, in every dialect.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { META_VALIDATORS_PATH, metaValidatorsSource } from '../../scripts/generate-meta-validators.js';
import { META_VALIDATORS } from '../../src/core/meta-validators.js';
import { createSchemaCompiler } from '../../src/core/schema-compiler.js';

const root = path.resolve(import.meta.dirname, '../..');
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2019 | Ajv2020) => unknown;
const OPTIONS: Options = { strict: false, allErrors: true, validateFormats: true, logger: false };

/** Ajv's own meta-schema check, the way schema-compiler.ts ran it before (one instance per dialect). */
const reference = {
  'draft-07': new Ajv(OPTIONS),
  '2019-09': new Ajv2019(OPTIONS),
  '2020-12': new Ajv2020(OPTIONS),
} as const;
for (const ajv of Object.values(reference)) addFormats(ajv);

const SCHEMAS: [string, Record<string, unknown>][] = [
  ['an object with properties', { type: 'object', properties: { a: { type: 'string', format: 'email' } } }],
  ['a misspelt type', { type: 'strng' }],
  ['required as a string', { type: 'object', required: 'a' }],
  ['a negative minLength', { properties: { a: { minLength: -1 } } }],
  ['a bad type deep in $defs', { $defs: { a: { type: 1 } }, properties: { x: { $ref: '#/$defs/a' } } }],
  ['items as an array (tuple form)', { type: 'array', items: [{ type: 'string' }] }],
  ['prefixItems', { type: 'array', prefixItems: [{ type: 'string' }], items: false }],
  ['an invalid pattern', { type: 'object', properties: { a: { type: 'string', pattern: '(' } } }],
  ['an $id with a space', { $id: 'a b', type: 'object' }],
  ['enum not an array', { type: 'object', properties: { a: { enum: 'x' } } }],
  ['anyOf with a bad branch', { anyOf: [{ type: 'string' }, { type: 'nul' }] }],
  ['dependentRequired', { type: 'object', dependentRequired: { a: ['b'] } }],
  ['dependencies (draft-07)', { type: 'object', dependencies: { a: ['b'] } }],
  ['unevaluatedProperties', { type: 'object', unevaluatedProperties: false }],
  ['a boolean schema in properties', { type: 'object', properties: { a: true, b: false } }],
  ['additionalProperties as a string', { type: 'object', additionalProperties: 'no' }],
  ['const and default', { type: 'object', properties: { a: { const: 1, default: 1 } } }],
  ['multipleOf zero', { type: 'number', multipleOf: 0 }],
  ['an empty schema', {}],
];

describe('meta-schema validators compiled ahead of time', () => {
  it('T12: the committed module equals a fresh generation', () => {
    const committed = readFileSync(path.join(root, META_VALIDATORS_PATH), 'utf8');
    expect(
      committed,
      `${META_VALIDATORS_PATH} is stale: run \`npm run meta-validators\` and commit the result`,
    ).toBe(metaValidatorsSource());
  });

  for (const dialect of ['draft-07', '2019-09', '2020-12'] as const) {
    it.each(SCHEMAS)(
      `T12: ${dialect}, %s: the same verdict and errors as Ajv's validateSchema`,
      (_label, schema) => {
        const ajv = reference[dialect];
        const expected = ajv.validateSchema(schema) as boolean;
        const validate = META_VALIDATORS[dialect];
        expect(validate(schema)).toBe(expected);
        expect(validate.errors ?? null).toEqual(ajv.errors ?? null);
        const $schema = {
          'draft-07': 'http://json-schema.org/draft-07/schema#',
          '2019-09': 'https://json-schema.org/draft/2019-09/schema',
          '2020-12': 'https://json-schema.org/draft/2020-12/schema',
        }[dialect];
        const verdict = createSchemaCompiler().check({ $schema, ...schema });
        expect(verdict).toEqual(
          expected
            ? verdict.ok
              ? { ok: true, dialect }
              : { ok: false, dialect, error: expect.not.stringMatching(/^schema is invalid/) as unknown }
            : {
                ok: false,
                dialect,
                error: `schema is invalid: ${ajv.errorsText(ajv.errors, { dataVar: 'schema' })}`,
              },
        );
      },
    );
  }
});
