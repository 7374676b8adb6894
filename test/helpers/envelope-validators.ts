/**
 * Ajv validators for rendered envelopes: each checks an envelope against BOTH the exact envelope
 * schema of its format and the compact outputSchema exposed tools advertise (T6), so neither can
 * drift from what the renderer produces.
 */
import type { Ajv2020 } from 'ajv/dist/2020.js';
import {
  ENVELOPE_JSON_SCHEMAS,
  ENVELOPE_OUTPUT_SCHEMAS,
  OUTPUT_FORMATS,
  type OutputFormat,
} from '../../src/upstream/envelope-schema.js';

/** A validator in Ajv's shape: call it, then read `errors` when it returned false. */
export interface EnvelopeValidator {
  (envelope: unknown): boolean;
  errors?: Parameters<Ajv2020['errorsText']>[0];
}

export function envelopeValidators(ajv: Ajv2020): Record<OutputFormat, EnvelopeValidator> {
  const out = {} as Record<OutputFormat, EnvelopeValidator>;
  for (const format of OUTPUT_FORMATS) {
    const exact = ajv.compile(ENVELOPE_JSON_SCHEMAS[format]);
    const advertised = ajv.compile(ENVELOPE_OUTPUT_SCHEMAS[format]);
    const validate: EnvelopeValidator = (envelope) => {
      const ok = exact(envelope) && advertised(envelope);
      validate.errors = exact.errors ?? advertised.errors;
      return ok;
    };
    out[format] = validate;
  }
  return out;
}
