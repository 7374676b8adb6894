import { describe, expect, it } from 'vitest';
import {
  ENVELOPE_JSON_SCHEMAS,
  ENVELOPE_OUTPUT_SCHEMAS,
  OUTPUT_FORMATS,
} from '../../src/upstream/envelope-schema.js';

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
