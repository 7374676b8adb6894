/**
 * The in-band conventions a payload may follow (N8) and the output-contract shape that passes
 * through (N6): zod schemas for each shape, plus detectors.
 *
 * Detection rule (the same for all four shapes, to avoid false positives): a payload is read as a
 * convention only when it is a JSON object whose keys are ALL among that convention's own keys and
 * whose discriminant is present with the convention's value; then the zod schema must accept it
 * (field types). An object that merely contains `success`, `status`, `error` or `results` among
 * other, unrelated keys is an ordinary value and is never reinterpreted.
 * - ADR-003 Result (`result`): `success` is a boolean; keys ⊆ {success, value, error, error_type,
 *   message, instruction, error_data, exception_type, exception_message} (the fields of
 *   `Result.to_json`, also accepted as `null`, as a serializer that writes every field emits them).
 * - ADR-002 McpServerResponse (`response`): `status` is "SUCCESS" or "ERROR"; keys ⊆ {status,
 *   data, error}; on ERROR, `error` is an object with `code` (string or number) and `message`.
 * - ADR-0005 DefaultToolResult (`tool_result`): keys are exactly {result, error} (the Go struct
 *   always writes both); `error` is a string or null. `{error}` or `{result}` alone are far too
 *   common in unrelated payloads to be read as this convention.
 * - Output contract (N6): `results` is present; keys ⊆ {results, meta_data, returned_file_names,
 *   returned_file_contents}.
 *
 * The cheap key check runs on every payload (hot path); zod runs only on the rare payloads that
 * pass it.
 */
import { z } from 'zod';
import type { InbandConvention } from './result.js';
import { isJsonObject, type JsonObject } from './json.js';

const nullishString = z.string().nullish();
const nullish = z.null().optional();

/** ADR-003 `Result.to_json` of a failure. */
export const ResultFailureSchema = z.strictObject({
  success: z.literal(false),
  value: nullish,
  error: nullishString,
  error_type: nullishString,
  message: nullishString,
  instruction: nullishString,
  error_data: z.record(z.string(), z.unknown()).nullish(),
  exception_type: nullishString,
  exception_message: nullishString,
});

/** ADR-003 `Result.to_json` of a success. */
export const ResultSuccessSchema = z.strictObject({
  success: z.literal(true),
  value: z.unknown().optional(),
  message: nullishString,
  instruction: nullishString,
  error: nullish,
  error_type: nullish,
  error_data: nullish,
  exception_type: nullish,
  exception_message: nullish,
});

/** ADR-002 `McpServerResponse` of a failure. */
export const ResponseErrorSchema = z.strictObject({
  status: z.literal('ERROR'),
  data: nullish,
  error: z.looseObject({
    code: z.union([z.string(), z.number()]),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});

/** ADR-002 `McpServerResponse` of a success. */
export const ResponseSuccessSchema = z.strictObject({
  status: z.literal('SUCCESS'),
  data: z.unknown().optional(),
  error: nullish,
});

/** ADR-0005 `DefaultToolResult`. */
export const ToolResultSchema = z.strictObject({
  result: z.unknown(),
  error: z.string().nullable(),
});

/** A returned file in the output contract: base64, or `{name?, b64}` (N6). */
export const ReturnedFileContentSchema = z.union([
  z.string(),
  z.looseObject({ name: z.string().optional(), b64: z.string() }),
]);

/** The MCP Tool Output Contract (N6). */
export const OutputContractSchema = z.strictObject({
  results: z.unknown(),
  meta_data: z.record(z.string(), z.unknown()).nullish(),
  returned_file_names: z.array(z.string()).nullish(),
  returned_file_contents: z.array(ReturnedFileContentSchema).nullish(),
});

/** A payload in the output contract. */
export type OutputContract = z.infer<typeof OutputContractSchema>;

/** What an in-band payload says (N8). */
export type InbandOutcome =
  | {
      readonly success: true;
      readonly convention: InbandConvention;
      readonly value: unknown;
      readonly message?: string;
      readonly instruction?: string;
    }
  | {
      readonly success: false;
      readonly convention: InbandConvention;
      readonly error: string;
      readonly errorCode?: string;
      readonly errorData?: Readonly<Record<string, unknown>>;
      readonly message?: string;
      readonly instruction?: string;
    };

const RESULT_KEYS: ReadonlySet<string> = new Set([
  'success',
  'value',
  'error',
  'error_type',
  'message',
  'instruction',
  'error_data',
  'exception_type',
  'exception_message',
]);
const RESPONSE_KEYS: ReadonlySet<string> = new Set(['status', 'data', 'error']);
const CONTRACT_KEYS: ReadonlySet<string> = new Set([
  'results',
  'meta_data',
  'returned_file_names',
  'returned_file_contents',
]);

/** The key check of the detection rule: every key of `obj` is in `allowed`. */
function keysWithin(obj: JsonObject, allowed: ReadonlySet<string>): boolean {
  for (const key in obj) {
    if (Object.prototype.hasOwnProperty.call(obj, key) && !allowed.has(key)) return false;
  }
  return true;
}

/** Copies the string fields that are set, so outcomes never carry `key: undefined`. */
function texts(message: string | null | undefined, instruction: string | null | undefined) {
  const out: { message?: string; instruction?: string } = {};
  if (typeof message === 'string') out.message = message;
  if (typeof instruction === 'string') out.instruction = instruction;
  return out;
}

/** A non-object detail becomes `{details: ...}` so that errorData is always a record. */
function asRecord(value: unknown, key: string): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined || value === null) return undefined;
  return isJsonObject(value) ? value : { [key]: value };
}

function detectResult(payload: JsonObject): InbandOutcome | undefined {
  if (payload['success'] === false) {
    const parsed = ResultFailureSchema.safeParse(payload);
    if (!parsed.success) return undefined;
    const p = parsed.data;
    const errorData: Record<string, unknown> = { ...(p.error_data ?? {}) };
    // ADR-003 renders the exception as two strings; keep them for programs, beside error_data.
    if (typeof p.exception_type === 'string') errorData['exception_type'] = p.exception_type;
    if (typeof p.exception_message === 'string') errorData['exception_message'] = p.exception_message;
    return {
      success: false,
      convention: 'result',
      error: p.error ?? p.message ?? 'The tool reported success: false without an error message',
      ...(typeof p.error_type === 'string' ? { errorCode: p.error_type } : {}),
      ...(Object.keys(errorData).length > 0 ? { errorData } : {}),
      ...texts(p.message, p.instruction),
    };
  }
  const parsed = ResultSuccessSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  return {
    success: true,
    convention: 'result',
    value: parsed.data.value ?? null,
    ...texts(parsed.data.message, parsed.data.instruction),
  };
}

function detectResponse(payload: JsonObject): InbandOutcome | undefined {
  if (payload['status'] === 'ERROR') {
    const parsed = ResponseErrorSchema.safeParse(payload);
    if (!parsed.success) return undefined;
    const { code, message, details } = parsed.data.error;
    const errorData = asRecord(details, 'details');
    return {
      success: false,
      convention: 'response',
      error: message,
      errorCode: String(code),
      ...(errorData !== undefined ? { errorData } : {}),
    };
  }
  const parsed = ResponseSuccessSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  return { success: true, convention: 'response', value: parsed.data.data ?? null };
}

function detectToolResult(payload: JsonObject): InbandOutcome | undefined {
  const parsed = ToolResultSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  const { result, error } = parsed.data;
  if (error !== null && error.trim() !== '') {
    const hasResult = result !== null && result !== undefined && result !== '';
    return {
      success: false,
      convention: 'tool_result',
      error,
      ...(hasResult ? { errorData: { result } } : {}),
    };
  }
  return { success: true, convention: 'tool_result', value: result ?? null };
}

/**
 * N8: reads `payload` as one of the three in-band conventions, or returns `undefined` when it
 * follows none (see the detection rule at the top of this file).
 * @example detectInband({ status: 'ERROR', error: { code: 'NOT_FOUND', message: 'No such user' } })
 * // { success: false, convention: 'response', error: 'No such user', errorCode: 'NOT_FOUND' }
 */
export function detectInband(payload: unknown): InbandOutcome | undefined {
  if (!isJsonObject(payload)) return undefined;
  const success = payload['success'];
  if (typeof success === 'boolean') {
    return keysWithin(payload, RESULT_KEYS) ? detectResult(payload) : undefined;
  }
  const status = payload['status'];
  if (status === 'SUCCESS' || status === 'ERROR') {
    return keysWithin(payload, RESPONSE_KEYS) ? detectResponse(payload) : undefined;
  }
  if ('result' in payload && 'error' in payload && Object.keys(payload).length === 2) {
    return detectToolResult(payload);
  }
  return undefined;
}

/**
 * N6: `payload` as the output contract, or `undefined` when it is not in it (see the detection
 * rule at the top of this file).
 */
export function detectOutputContract(payload: unknown): OutputContract | undefined {
  if (!isJsonObject(payload) || !('results' in payload) || !keysWithin(payload, CONTRACT_KEYS))
    return undefined;
  const parsed = OutputContractSchema.safeParse(payload);
  return parsed.success ? parsed.data : undefined;
}

/** N7: the error text of a JSON payload: its `error` (string, or object with `message`) or `message`. */
export function errorFromPayload(payload: unknown): { error?: string; code?: string } {
  if (typeof payload === 'string') return payload.trim() === '' ? {} : { error: payload };
  if (!isJsonObject(payload)) return {};
  const error = payload['error'];
  if (typeof error === 'string' && error.trim() !== '') return { error };
  if (isJsonObject(error)) {
    const message = error['message'];
    const code = error['code'];
    const codeText = typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
    if (typeof message === 'string' && message.trim() !== '') {
      return codeText === undefined ? { error: message } : { error: message, code: codeText };
    }
  }
  const message = payload['message'];
  if (typeof message === 'string' && message.trim() !== '') return { error: message };
  // A payload in the output contract carries its error as `results.error` (F1).
  const results = payload['results'];
  if (isJsonObject(results) && typeof results['error'] === 'string') return { error: results['error'] };
  return {};
}
