/**
 * One downstream CallToolResult → one Result (N1–N11). Pure and total: no I/O, no clock (timing
 * is passed in), and any input, however malformed, gives a Result; a bug in here gives a
 * `normalization_error` failure instead of an exception (N10).
 *
 * Hot path. Per call at most one JSON.parse per text block and at most one JSON.stringify of the
 * value, and the stringify only when N9 cannot rule out an oversized value from a cheap bound.
 *
 * Choices for malformed input (none of them throws):
 * - raw is not an object (null, string, array, ...) → `downstream_error`, source `proxy`.
 * - `content` present but not an array → warning `malformed_content`; with no usable
 *   `structuredContent` either → `downstream_error` (an "empty success" would hide a broken server).
 * - a block that is not an object with a string `type`, an unknown type, or a missing field →
 *   dropped with a warning (`malformed_content_block`, `unknown_content_block`).
 * - `structuredContent: null` counts as absent; any other JSON value (array, string, number) is
 *   the value like an object (N1, E7: the 2026-07-28 revision allows any JSON value there).
 * - `isError` counts only when it is the boolean `true`.
 */
import { failure, ok, type CallMeta, type FailureResult, type Result, type ResultSource } from './result.js';
import { isJsonObject, looksLikeJson, tryParseJson, type JsonParse } from './json.js';
import { jsonDiff, textAgrees } from './compare.js';
import { returnedFiles, scanContent, valueFromTexts, WarningSink, type ContentScan } from './content.js';
import { splitMcpErrorPrefix } from './classify.js';
import { detectInband, detectOutputContract, errorFromPayload, type OutputContract } from './inband.js';
import { ArtifactNamer, DEFAULT_MAX_INLINE_BYTES, moveEmbeddedBase64, spillIfTooLarge } from './artifacts.js';
import { carriedMeta } from './meta.js';

/** What the normalizer needs to know about the call besides its raw result. */
export interface NormalizeOptions {
  /** The downstream server's key in the config, copied into the metadata. */
  readonly server?: string;
  /** The downstream tool's own name, copied into the metadata. */
  readonly tool?: string;
  /** Wall time of the call, measured by the caller (N10: the normalizer reads no clock). */
  readonly elapsedMs?: number;
  /**
   * N9: a value whose JSON is larger than this many UTF-8 bytes moves into a `result.json` artifact.
   * @default 65536
   * @example { maxInlineBytes: 16384 }
   */
  readonly maxInlineBytes: number;
  /**
   * N8: read the in-band conventions (ADR-003, ADR-002, ADR-0005) in payloads.
   * @default true
   * @example { inbandErrors: false } // a server whose `{success: false}` is plain data
   */
  readonly inbandErrors: boolean;
}

/** The defaults of {@link NormalizeOptions}. */
export const DEFAULT_NORMALIZE_OPTIONS: NormalizeOptions = Object.freeze({
  maxInlineBytes: DEFAULT_MAX_INLINE_BYTES,
  inbandErrors: true,
});

/** Warning codes raised by the normalizer itself (content.ts has the per-block ones). */
export const NORMALIZE_WARNINGS = {
  mismatch: 'structured_text_mismatch',
  malformedContent: 'malformed_content',
  base64Moved: 'base64_moved_to_file',
  numbersKeptAsText: 'numbers_kept_as_text',
} as const;

/** How many of the numbers kept as text (N13) the warning's message names. */
const NAMED_NUMBERS = 5;

/** N13: says which numbers of the texts were kept as strings, and why. */
function warnInexact(sink: WarningSink, inexact: readonly string[]): void {
  if (inexact.length === 0) return;
  const named = inexact
    .slice(0, NAMED_NUMBERS)
    .map((token) => (token.length > 40 ? `${token.slice(0, 40)}…` : token));
  const more = inexact.length > NAMED_NUMBERS ? ` and ${inexact.length - NAMED_NUMBERS} more` : '';
  sink.add(
    NORMALIZE_WARNINGS.numbersKeptAsText,
    `${named.join(', ')}${more}: a JSON number cannot carry these digits exactly, so they are strings holding the digits the server wrote`,
  );
}

const NO_MESSAGE = 'The tool reported an error without a message';

/** State shared by the steps of one normalization. */
interface Call {
  readonly options: NormalizeOptions;
  readonly namer: ArtifactNamer;
  readonly sink: WarningSink;
  readonly scan: ContentScan;
  /** N11: text blocks addressed to the model that the value does not carry. */
  readonly notes: string[];
  /** The downstream's result, as received (kept by reference, U6). */
  readonly raw: Record<string, unknown>;
  /** N12: its `_meta`, reserved keys left out. */
  readonly resultMeta: Readonly<Record<string, unknown>> | undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** The metadata a step adds beside the call's own. */
interface MetaExtra {
  readonly convention?: CallMeta['convention'];
  readonly downstreamMeta?: CallMeta['downstreamMeta'];
}

/**
 * Call metadata with only the fields that are set, built as one object without spreads: spreading
 * objects of varying shape was the largest fixed cost of a call in profiles.
 */
function meta(
  options: NormalizeOptions,
  source: ResultSource,
  call?: Call,
  extra?: MetaExtra,
): Partial<CallMeta> {
  const out: { -readonly [K in keyof CallMeta]?: CallMeta[K] } =
    call === undefined
      ? { source }
      : {
          source,
          warnings: call.sink.warnings,
          diagnostics: call.sink.diagnostics,
          resourceLinks: call.scan.links,
        };
  if (call !== undefined && call.notes.length > 0) out.notes = call.notes;
  if (call?.resultMeta !== undefined) out.resultMeta = call.resultMeta;
  if (options.server !== undefined) out.server = options.server;
  if (options.tool !== undefined) out.tool = options.tool;
  if (options.elapsedMs !== undefined) out.elapsedMs = options.elapsedMs;
  if (extra?.convention !== undefined) out.convention = extra.convention;
  if (extra?.downstreamMeta !== undefined) out.downstreamMeta = extra.downstreamMeta;
  return out;
}

/** Metadata, files and media of a call whose content was read. */
function init(call: Call, source: ResultSource, extra?: MetaExtra) {
  return {
    meta: meta(call.options, source, call, extra),
    files: call.scan.files,
    mediaBlocks: call.scan.mediaBlocks,
    original: call.raw,
  };
}

/**
 * N2: compares `structured` with every text block that looks like JSON. Warns when at least one
 * parses and none agrees ({@link textAgrees}); a second block of prose or a different JSON summary
 * beside an agreeing one is not a disagreement. Returns a bound on the value's JSON size when an
 * agreeing text gives one.
 */
function checkAgainstTexts(
  structured: unknown,
  call: Call,
  parses: (JsonParse | undefined)[],
  notes: string[],
): number | undefined {
  let firstJson: { index: number; value: unknown } | undefined;
  let agreed: number | undefined;
  const { texts } = call.scan;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i] ?? '';
    if (!looksLikeJson(text)) {
      // N11: prose beside the structured value is addressed to the model: it is kept, unless it
      // only repeats the value (a string, or the text MCP wraps as `{"result": "<text>"}`).
      if (!repeatsValue(structured, text)) notes.push(text);
      continue;
    }
    const parsed = tryParseJson(text);
    parses[i] = parsed;
    if (!parsed.ok) {
      if (!repeatsValue(structured, text)) notes.push(text);
      continue;
    }
    if (agreed !== undefined) continue;
    const bound = textAgrees(structured, text, parsed);
    if (bound !== undefined) {
      agreed = bound;
      // N13: the wire kept these digits as strings in the structured value too; say so.
      warnInexact(call.sink, parsed.inexact);
    } else firstJson ??= { index: i, value: parsed.value };
  }
  if (agreed !== undefined) return agreed;
  if (firstJson !== undefined) {
    // N2: structured wins; the diff goes to the log via the diagnostic.
    const diff = jsonDiff(structured, firstJson.value);
    call.sink.add(
      NORMALIZE_WARNINGS.mismatch,
      `structuredContent and JSON text block ${firstJson.index + 1} disagree (structured wins): ${diff}`,
    );
  }
  return undefined;
}

/**
 * N12: FastMCP wraps a tool's non-object return value as `{"result": value}` (MCP wants an
 * object there) and says so with `_meta.fastmcp.wrap_result: true`: the value is the inner one.
 */
function fastmcpWrapped(structured: unknown, resultMeta: unknown): boolean {
  if (!isJsonObject(resultMeta) || !isJsonObject(resultMeta['fastmcp'])) return false;
  if (resultMeta['fastmcp']['wrap_result'] !== true || !isJsonObject(structured)) return false;
  const keys = Object.keys(structured);
  return keys.length === 1 && keys[0] === 'result';
}

/** N11: `text` says nothing the structured value does not: it is the value, or its sole field. */
function repeatsValue(structured: unknown, text: string): boolean {
  if (structured === text) return true;
  if (!isJsonObject(structured)) return false;
  const keys = Object.keys(structured);
  return keys.length === 1 && structured[keys[0] as string] === text;
}

/** N7: `isError: true` → a `tool_error` failure (or the in-band failure it spells out, N8). */
function toolError(call: Call, structured: unknown, hasStructured: boolean): FailureResult {
  const { texts } = call.scan;
  let payload: unknown;
  let prose: readonly string[] = [];
  if (hasStructured) payload = structured;
  else if (texts.length > 0) {
    const fromText = valueFromTexts(texts);
    if (fromText.source === 'text_json') {
      payload = fromText.value;
      prose = fromText.notes;
      warnInexact(call.sink, fromText.inexact);
    }
  }
  if (call.options.inbandErrors) {
    const inband = detectInband(payload);
    if (inband !== undefined && !inband.success) {
      const { convention, error, ...rest } = inband;
      return failure('tool_error', error, {
        ...init(call, hasStructured ? 'structured' : 'text_json', { convention }),
        ...rest,
      });
    }
  }
  const fromPayload = errorFromPayload(payload);
  const joined = texts.join('\n');
  // An SDK McpServer turns a thrown McpError into text starting `MCP error -32602: `: the code
  // goes to errorCode, the text keeps only what went wrong (as classify does for thrown errors).
  // The texts are the error when the payload names none: they are not notes then (N11).
  if (fromPayload.error === undefined) call.notes.length = 0;
  else call.notes.push(...prose);
  const split = splitMcpErrorPrefix(fromPayload.error ?? (joined.trim() !== '' ? joined : NO_MESSAGE));
  const error = split.message;
  const errorCode = fromPayload.code ?? split.code;
  const source: ResultSource = hasStructured
    ? 'structured'
    : payload !== undefined
      ? 'text_json'
      : texts.length > 0
        ? 'text'
        : 'empty';
  return failure('tool_error', error, {
    ...init(call, source),
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(payload !== undefined ? { errorData: isJsonObject(payload) ? payload : { payload } } : {}),
  });
}

/** N6: a payload already in the output contract passes through (a chained gateway's failure too). */
function passThrough(contract: OutputContract, call: Call): Result {
  returnedFiles(contract, call.namer, call.sink, call.scan.files);
  const metaData = contract.meta_data ?? undefined;
  const extra = metaData !== undefined ? { downstreamMeta: metaData } : undefined;
  if (call.options.inbandErrors && metaData?.['is_error'] === true) {
    const results = contract.results;
    const error =
      isJsonObject(results) && typeof results['error'] === 'string' ? results['error'] : NO_MESSAGE;
    const errorType = metaData['error_type'];
    const errorData = metaData['error_data'];
    const message = metaData['message'];
    const instruction = metaData['instruction'];
    return failure('tool_error', error, {
      ...init(call, 'passthrough', extra),
      ...(typeof errorType === 'string' ? { errorCode: errorType } : {}),
      ...(isJsonObject(errorData) ? { errorData } : {}),
      ...(typeof message === 'string' ? { message } : {}),
      ...(typeof instruction === 'string' ? { instruction } : {}),
    });
  }
  return finish(contract.results ?? null, 'passthrough', undefined, call, extra);
}

/** N9 and the final success Result. */
function finish(
  value: unknown,
  source: ResultSource,
  bound: number | undefined,
  call: Call,
  extra?: MetaExtra,
  texts?: { message?: string; instruction?: string },
  json?: string,
): Result {
  if (call.scan.files.length > 0) {
    // N4/F: a file's bytes repeated in the value would put base64 back into the prompt.
    const moved = moveEmbeddedBase64(value, call.scan.files);
    if (moved.moved.length > 0) {
      value = moved.value;
      json = undefined;
      call.sink.add(
        NORMALIZE_WARNINGS.base64Moved,
        `the value repeated the base64 of ${moved.moved.join(', ')}; replaced by a reference to the file`,
      );
    }
  }
  const spilled = spillIfTooLarge(value, call.options.maxInlineBytes, call.namer, bound, json);
  if (spilled !== undefined) call.scan.files.push(spilled.file);
  return ok(spilled !== undefined ? spilled.value : value, { ...init(call, source, extra), ...texts });
}

function normalizeUnsafe(raw: unknown, options: NormalizeOptions): Result {
  if (!isJsonObject(raw)) {
    return failure(
      'downstream_error',
      `Malformed result from the downstream: expected an object, got ${describe(raw)}`,
      {
        meta: meta(options, 'proxy'),
        errorData: { received: describe(raw) },
      },
    );
  }
  const namer = new ArtifactNamer();
  const sink = new WarningSink();
  const content = raw['content'];
  const contentOk = content === undefined || Array.isArray(content);
  if (!contentOk)
    sink.add(NORMALIZE_WARNINGS.malformedContent, `"content" is ${describe(content)}, not an array; ignored`);
  const scan = scanContent(Array.isArray(content) ? content : [], namer, sink);
  const resultMeta = raw['_meta'] === undefined ? undefined : carriedMeta(raw['_meta'], '');
  const call: Call = { options, namer, sink, scan, notes: [], raw, resultMeta };

  const structured = raw['structuredContent'];
  const hasStructured = structured !== undefined && structured !== null;
  const parses: (JsonParse | undefined)[] = [];
  // N2 applies to failures too: a disagreement is worth a log line whatever the outcome.
  const bound = hasStructured ? checkAgainstTexts(structured, call, parses, call.notes) : undefined;

  if (raw['isError'] === true) return toolError(call, structured, hasStructured);

  let value: unknown;
  let source: ResultSource;
  let valueBound = bound;
  let valueJson: string | undefined;
  if (hasStructured) {
    // N1: structuredContent is the value; N12: unless FastMCP says it only wraps a non-object.
    value = fastmcpWrapped(structured, raw['_meta'])
      ? (structured as { result: unknown }).result
      : structured;
    if (value !== structured) valueBound = undefined;
    source = 'structured';
  } else if (scan.texts.length > 0) {
    // N3: text blocks, parsed when they are JSON.
    const fromText = valueFromTexts(scan.texts, parses);
    value = fromText.value;
    source = fromText.source;
    valueBound = fromText.bound;
    valueJson = fromText.json;
    // N3, N11: prose beside a JSON block is addressed to the model: kept, in order.
    call.notes.push(...fromText.notes);
    warnInexact(sink, fromText.inexact);
  } else if (!contentOk) {
    return failure('downstream_error', 'Malformed result from the downstream: "content" is not an array', {
      ...init(call, 'proxy'),
      errorData: { received: describe(content) },
    });
  } else {
    // N5: nothing to read (files and links, if any, are still returned).
    value = null;
    source = 'empty';
    valueBound = 4;
  }

  // N6 before N8: a contract payload is never also read as an in-band convention.
  const contract = detectOutputContract(value);
  if (contract !== undefined) return passThrough(contract, call);

  if (options.inbandErrors) {
    const inband = detectInband(value);
    if (inband !== undefined) {
      if (!inband.success) {
        const { convention, error, ...rest } = inband;
        return failure('tool_error', error, { ...init(call, source, { convention }), ...rest });
      }
      const { convention, value: inner, ...texts } = inband;
      // The inner value's JSON is a part of the outer one's, so the outer bound still holds.
      return finish(inner, source, valueBound, call, { convention }, texts);
    }
  }
  return finish(value, source, valueBound, call, undefined, undefined, valueJson);
}

/**
 * N11: a note that repeats what the envelope already says (the error, the message, the
 * instruction, a string value) is left out: the model reads each text once.
 */
function withoutRepeatedNotes(result: Result): Result {
  const notes = result.meta.notes;
  if (notes === undefined) return result;
  const said = new Set<unknown>([result.message, result.instruction]);
  if (result.success) said.add(result.value);
  else said.add(result.error);
  const kept = notes.filter((note) => !said.has(note));
  if (kept.length === notes.length) return result;
  const { notes: _dropped, ...meta } = result.meta;
  return { ...result, meta: kept.length > 0 ? { ...meta, notes: kept } : meta };
}

/** The message of something thrown, without trusting it (a getter or toString may throw too). */
function describeThrown(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an unprintable exception';
  }
}

/**
 * Normalizes one downstream `CallToolResult` into a Result (N1–N11). Never throws: a bug in the
 * normalizer itself gives a `normalization_error` failure carrying the exception (N10, R3).
 * @example
 * normalizeCallToolResult(
 *   { content: [{ type: 'text', text: '{"rows":3}' }] },
 *   { server: 'db', tool: 'count', maxInlineBytes: 65536, inbandErrors: true },
 * ) // ok({ rows: 3 }), source 'text_json'
 */
export function normalizeCallToolResult(raw: unknown, options: NormalizeOptions): Result {
  try {
    return withoutRepeatedNotes(normalizeUnsafe(raw, options));
  } catch (error) {
    return failure(
      'normalization_error',
      `mcp-normalizer could not read the tool's result: ${describeThrown(error)}`,
      {
        meta: meta(options, 'proxy'),
        exception: error,
      },
    );
  }
}
