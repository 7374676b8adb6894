/**
 * The three envelopes a Result is rendered to at the upstream boundary (CONTRACT F1–F3), as zod
 * schemas, and the JSON Schemas derived from them that every exposed tool declares as its
 * `outputSchema` (T6).
 *
 * Schema first: the renderer builds objects typed by these schemas (`z.infer`), so the renderer
 * and the advertised outputSchema cannot drift apart silently; the render tests validate every
 * rendered envelope against {@link ENVELOPE_JSON_SCHEMAS} with Ajv.
 *
 * Each schema admits success AND failure envelopes: the SDK client (1.32.2) validates
 * `structuredContent` against the outputSchema even when `isError` is true, and so may others.
 */
import { z } from 'zod';
import { ERROR_TYPES, RESULT_SOURCES } from '../core/result.js';
import { MEDIA_MODES, OUTPUT_FORMATS, type OutputFormat } from '../core/options.js';

export { MEDIA_MODES, OUTPUT_FORMATS, type MediaMode, type OutputFormat } from '../core/options.js';

/** Config `output.format` as a zod schema. */
export const OutputFormatSchema = z.enum(OUTPUT_FORMATS);

/** Config `output.media` as a zod schema. */
export const MediaModeSchema = z.enum(MEDIA_MODES);

const JsonObjectSchema = z.record(z.string(), z.unknown());

/** The two file fields shared by every format (F1, F2; F3 uses the same pair). */
const fileFields = {
  returned_file_names: z
    .array(z.string())
    .optional()
    .describe('Names of the files the call produced, in the same order as returned_file_contents.'),
  returned_file_contents: z
    .array(z.string())
    .optional()
    .describe('Base64 file bodies. Left out of the text content block, so never in the prompt.'),
  returned_file_links: z
    .array(
      z
        .strictObject({
          type: z.literal('resource_link'),
          uri: z.string(),
          name: z.string(),
          mimeType: z.string(),
          size: z.number().int().nonnegative(),
        })
        .nullable(),
    )
    .optional()
    .describe(
      'F7 (output.files: resource): per file, in the order of returned_file_names, the link to read its body with resources/read; returned_file_contents is then absent.',
    ),
};

/** A `resource_link` block as listed in `meta_data.resource_links` (N4); never fetched. */
const ResourceLinkEntrySchema = z.strictObject({
  uri: z.string(),
  name: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
});

/** Call metadata common to success and failure `meta_data` (F1). */
const metaFields = {
  server: z.string().optional().describe('The downstream server key.'),
  tool: z.string().optional().describe("The downstream tool's own name."),
  source: z.enum(RESULT_SOURCES).describe('Where the value came from.'),
  elapsed_ms: z.number().optional(),
  warnings: z.array(z.string()).optional(),
  message: z.string().optional().describe('A message for the user.'),
  instruction: z.string().optional().describe('Guidance for the agent.'),
  notes: z
    .array(z.string())
    .optional()
    .describe('Text the tool addressed to the model beside its value (N11).'),
  resource_links: z.array(ResourceLinkEntrySchema).optional(),
  original_file_names: z
    .array(z.strictObject({ file: z.string(), original: z.string() }))
    .optional()
    .describe('The name a downstream gave a file, where it was not a safe file name (N4).'),
  downstream: JsonObjectSchema.optional().describe("The downstream's own meta_data, unchanged (N6)."),
};

/** F1 `meta_data` of a success. */
export const SuccessMetaDataSchema = z.object(metaFields).catchall(z.unknown());

/** F1 `meta_data` of a failure. */
export const FailureMetaDataSchema = z
  .object({
    is_error: z.literal(true),
    error_type: z.enum(ERROR_TYPES),
    error_code: z.string().optional().describe("The downstream's own error code, verbatim."),
    ...metaFields,
    error_data: JsonObjectSchema.optional(),
  })
  // F1: a downstream that speaks this format keeps its own meta_data keys (N6).
  .catchall(z.unknown());

/** F1 `results` envelope, success: `{results, meta_data, returned_file_names?, ...}`. */
export const ResultsSuccessEnvelopeSchema = z.strictObject({
  results: z.unknown().describe('The tool result; null when the tool returned nothing (F4).'),
  meta_data: SuccessMetaDataSchema,
  ...fileFields,
});

/** F1 `results` envelope, failure: `{results: {error}, meta_data: {is_error: true, ...}}`. */
export const ResultsFailureEnvelopeSchema = z.strictObject({
  results: z.strictObject({ error: z.string() }),
  meta_data: FailureMetaDataSchema,
  ...fileFields,
});

/** F1: the MCP Tool Output Contract envelope (the default format). */
export const ResultsEnvelopeSchema = z.union([ResultsSuccessEnvelopeSchema, ResultsFailureEnvelopeSchema]);

/** F2 `result` envelope, success: ADR-003 `to_json()` of `Result.ok`. */
export const ResultSuccessEnvelopeSchema = z.strictObject({
  success: z.literal(true),
  value: z.unknown().optional().describe('Omitted when the tool returned nothing.'),
  message: z.string().optional(),
  instruction: z.string().optional(),
  notes: z.array(z.string()).optional(),
  ...fileFields,
});

/** F2 `result` envelope, failure: ADR-003 `to_json()` of `Result.failure`. */
export const ResultFailureEnvelopeSchema = z.strictObject({
  success: z.literal(false),
  error: z.string(),
  error_type: z.string().describe("One of R3's error types, or an ADR-003 downstream's own error_type (F2)."),
  error_data: JsonObjectSchema.optional().describe(
    "Structured detail; the downstream's own code is error_code.",
  ),
  exception_type: z.string().optional(),
  exception_message: z.string().optional(),
  message: z.string().optional(),
  instruction: z.string().optional(),
  notes: z.array(z.string()).optional(),
  ...fileFields,
});

/** F2: the ADR-003 Result envelope. */
export const ResultEnvelopeSchema = z.discriminatedUnion('success', [
  ResultSuccessEnvelopeSchema,
  ResultFailureEnvelopeSchema,
]);

/** F3 `response` envelope, success: ADR-002 `{status: "SUCCESS", data}`. */
export const ResponseSuccessEnvelopeSchema = z.strictObject({
  status: z.literal('SUCCESS'),
  data: z.unknown().describe('The tool result; null when the tool returned nothing.'),
  instruction: z.string().optional().describe('Guidance for the agent (R4).'),
  notes: z
    .array(z.string())
    .optional()
    .describe('Text the tool addressed to the model beside its value (N11).'),
  ...fileFields,
});

/** F3 `response` envelope, failure: ADR-002 `{status: "ERROR", error: {code, message, details?}}`. */
export const ResponseFailureEnvelopeSchema = z.strictObject({
  status: z.literal('ERROR'),
  error: z.strictObject({
    code: z.string().describe("The downstream's own code when it sent one, else the error type."),
    message: z.string(),
    details: JsonObjectSchema.optional(),
  }),
  instruction: z.string().optional().describe('Guidance for the agent (R4).'),
  notes: z
    .array(z.string())
    .optional()
    .describe('Text the tool addressed to the model beside its value (N11).'),
  ...fileFields,
});

/** F3: the ADR-002 McpServerResponse envelope. */
export const ResponseEnvelopeSchema = z.discriminatedUnion('status', [
  ResponseSuccessEnvelopeSchema,
  ResponseFailureEnvelopeSchema,
]);

/** The envelope zod schema of each format. */
export const ENVELOPE_SCHEMAS = {
  results: ResultsEnvelopeSchema,
  result: ResultEnvelopeSchema,
  response: ResponseEnvelopeSchema,
} as const satisfies Record<OutputFormat, z.ZodType>;

/** F1 envelope, as the renderer builds it. */
export type ResultsEnvelope = z.infer<typeof ResultsEnvelopeSchema>;
/** F2 envelope, as the renderer builds it. */
export type ResultEnvelope = z.infer<typeof ResultEnvelopeSchema>;
/** F3 envelope, as the renderer builds it. */
export type ResponseEnvelope = z.infer<typeof ResponseEnvelopeSchema>;
/** Any envelope. */
export type Envelope = ResultsEnvelope | ResultEnvelope | ResponseEnvelope;

/** A JSON Schema whose top level is an object schema, as MCP requires of an `outputSchema`. */
export type JsonSchemaObject = Readonly<{ type: 'object' } & Record<string, unknown>>;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * zod → JSON Schema for an outputSchema.
 * - `$schema` is dropped: zod declares 2020-12, which a client's default (draft-07) Ajv refuses
 *   to compile ("no schema with key or ref"), and every keyword used here means the same in
 *   draft-07 and 2020-12 (the render tests compile the schemas with both dialects).
 * - `type: "object"` is added beside the union's anyOf/oneOf: MCP requires it at the top level.
 */
function toOutputSchema(schema: z.ZodType): JsonSchemaObject {
  const generated: Record<string, unknown> = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'output',
  });
  const { $schema: _dialect, ...rest } = generated;
  return deepFreeze({ type: 'object', ...rest });
}

/**
 * The exact envelope schema of each format, success and failure branches and field descriptions
 * included, computed once at module load (deep-frozen). Exposed tools advertise its compact form,
 * {@link ENVELOPE_OUTPUT_SCHEMAS}.
 */
export const ENVELOPE_JSON_SCHEMAS: Readonly<Record<OutputFormat, JsonSchemaObject>> = Object.freeze({
  results: toOutputSchema(ResultsEnvelopeSchema),
  result: toOutputSchema(ResultEnvelopeSchema),
  response: toOutputSchema(ResponseEnvelopeSchema),
});

type SchemaNode = Record<string, unknown>;

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy without `description`s and `propertyNames` (every JSON key is a string anyway). */
function bare(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(bare);
  if (!isNode(node)) return node;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isNode(value)) {
      // Property NAMES are kept, `description` among them (a resource link has one).
      out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, bare(child)]));
    } else if (key !== 'description' && key !== 'propertyNames') {
      out[key] = bare(value);
    }
  }
  return out;
}

/**
 * One object schema admitting what either branch admits: properties united (merged when both
 * have one), `required` intersected, `additionalProperties: false` kept only when both say so;
 * two different constants of one type become that type; anything else, any value.
 */
function mergeBranches(a: SchemaNode, b: SchemaNode): SchemaNode {
  if (JSON.stringify(a) === JSON.stringify(b)) return a;
  if (
    a['type'] === 'object' &&
    b['type'] === 'object' &&
    isNode(a['properties']) &&
    isNode(b['properties'])
  ) {
    const left = a['properties'];
    const right = b['properties'];
    const properties: SchemaNode = {};
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
      const x = left[key];
      const y = right[key];
      properties[key] = isNode(x) && isNode(y) ? mergeBranches(x, y) : (x ?? y);
    }
    const theirs = Array.isArray(b['required']) ? (b['required'] as unknown[]) : [];
    const required = (Array.isArray(a['required']) ? (a['required'] as unknown[]) : []).filter((k) =>
      theirs.includes(k),
    );
    return {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      ...(a['additionalProperties'] === false && b['additionalProperties'] === false
        ? { additionalProperties: false }
        : {}),
    };
  }
  if (a['type'] !== undefined && a['type'] === b['type'] && 'const' in a && 'const' in b)
    return { type: a['type'] };
  return {};
}

/**
 * The advertised form of an envelope schema: the success and failure branches merged into one
 * object schema, without descriptions. It admits every envelope the strict schema admits (the
 * render and property tests validate against both), at about a third of the size: it is sent
 * once per exposed tool in every tools/list, so on a 2,000-tool catalog the full schema alone
 * made the listing several megabytes (measured by `npm run bench`, see docs/performance-log.md).
 */
function compact(schema: JsonSchemaObject): JsonSchemaObject {
  const node = bare(schema) as SchemaNode;
  const branches = (node['anyOf'] ?? node['oneOf']) as SchemaNode[] | undefined;
  const merged = branches && branches.length > 0 ? branches.reduce(mergeBranches) : node;
  return deepFreeze({ ...merged, type: 'object' });
}

/**
 * The outputSchema every exposed tool advertises, per format (T6): {@link ENVELOPE_JSON_SCHEMAS}
 * compacted (branches merged, no descriptions). Deep-frozen; one object shared by every tool.
 */
export const ENVELOPE_OUTPUT_SCHEMAS: Readonly<Record<OutputFormat, JsonSchemaObject>> = Object.freeze({
  results: compact(ENVELOPE_JSON_SCHEMAS.results),
  result: compact(ENVELOPE_JSON_SCHEMAS.result),
  response: compact(ENVELOPE_JSON_SCHEMAS.response),
});

/** The envelope field that carries a success's value, per format. */
const VALUE_FIELD: Readonly<Record<OutputFormat, string>> = {
  results: 'results',
  result: 'value',
  response: 'data',
};

/** N9: what a value too large to inline becomes. */
const SPILLED_VALUE = {
  type: 'object',
  properties: {
    truncated: { const: true },
    file: { type: 'string' },
    bytes: { type: 'number' },
    items: { type: 'number' },
    shown: { type: 'number' },
    preview: {},
    advice: { type: 'string' },
  },
  required: ['truncated', 'file'],
} as const;

/** A key that makes a schema depend on where it sits (a `$ref` resolves against the root). */
const POSITIONAL_KEYS = new Set([
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  '$id',
  '$anchor',
  '$defs',
  'definitions',
]);

function positional(node: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(node)) return node.some((item) => positional(item, depth + 1));
  if (!isNode(node)) return false;
  for (const [key, value] of Object.entries(node)) {
    if (POSITIONAL_KEYS.has(key) || positional(value, depth + 1)) return true;
  }
  return false;
}

/**
 * A value of this shape may not be what the envelope carries: N6 passes a `{results, ...}`
 * payload's `results` through, and N8 unwraps `{success, value}`, `{status, data}` and
 * `{result, error}`. Typing the value field with the outer schema would then be wrong.
 */
function unwrapped(schema: SchemaNode): boolean {
  const properties = isNode(schema['properties']) ? Object.keys(schema['properties']) : [];
  return (
    properties.includes('results') ||
    properties.includes('success') ||
    properties.includes('status') ||
    (properties.includes('result') && properties.includes('error'))
  );
}

/**
 * T14: the envelope schema of `format` for a tool that has its own `outputSchema`: the value
 * field (`results`, `value`, `data`) admits that schema (or, as every envelope may carry there, a
 * failure's `{error}`, N9's spilled-value stand-in, or null), so a client keeps the tool's typed
 * shape. FastMCP's wrapper schema (`x-fastmcp-wrap-result`) gives the inner value's schema, as N12
 * unwraps the value. `undefined` when the tool's schema cannot be embedded as it is (a `$ref`,
 * `$id` or `$defs` would resolve against the envelope instead) or describes a payload the
 * normalizer unwraps (N6, N8): that tool keeps the plain envelope schema.
 * @example typedEnvelopeSchema('results', { type: 'object', properties: { rows: { type: 'number' } } })
 */
export function typedEnvelopeSchema(format: OutputFormat, toolSchema: unknown): JsonSchemaObject | undefined {
  if (!isNode(toolSchema)) return undefined;
  let value: SchemaNode = toolSchema;
  const wrapped = isNode(toolSchema['properties']) ? toolSchema['properties']['result'] : undefined;
  if (toolSchema['x-fastmcp-wrap-result'] === true && isNode(wrapped)) value = wrapped;
  if (positional(value) || unwrapped(value)) return undefined;
  const { $schema: _dialect, ...own } = value;
  const base = ENVELOPE_OUTPUT_SCHEMAS[format];
  const properties = isNode(base['properties']) ? base['properties'] : {};
  const field = VALUE_FIELD[format];
  const failure = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };
  const admits =
    format === 'results'
      ? [own, failure, SPILLED_VALUE, { type: 'null' }]
      : [own, SPILLED_VALUE, { type: 'null' }];
  return { ...base, properties: { ...properties, [field]: { anyOf: admits } } };
}
