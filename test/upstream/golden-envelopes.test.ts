/**
 * Every golden-corpus case renders, in each output format, to the envelope recorded next to its
 * expected Result (F1–F3), and every recorded envelope validates against the outputSchema that
 * exposed tools advertise for that format (T6).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { OUTPUT_FORMATS } from '../../src/upstream/envelope-schema.js';
import { envelopeValidators } from '../helpers/envelope-validators.js';
import { readCorpus, renderEnvelopes } from '../helpers/golden.js';

const ajv = new Ajv2020({ strict: false });
const validators = envelopeValidators(ajv);

const corpus = readCorpus();

describe('golden envelopes (fixtures/results)', () => {
  it('F1/F2/F3: every case records its envelope in each of the three formats', () => {
    const missing = corpus
      .filter(({ data }) => OUTPUT_FORMATS.some((format) => data.envelopes?.[format] === undefined))
      .map(({ file }) => file);
    expect(missing, 'run `npx tsx scripts/record-envelopes.ts` and review the diff').toEqual([]);
  });

  it.each(corpus.map((entry) => [entry.file, entry] as const))('F1/F2/F3: %s', (_file, entry) => {
    const rendered = renderEnvelopes(entry);
    for (const format of OUTPUT_FORMATS) {
      expect(rendered[format], `${format} differs from the recorded envelope`).toStrictEqual(
        entry.data.envelopes?.[format],
      );
      const validate = validators[format];
      expect(validate?.(rendered[format]), JSON.stringify(validate?.errors)).toBe(true);
    }
  });
});
