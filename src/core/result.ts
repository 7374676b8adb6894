/**
 * The Result type: the one internal shape of a tool call's outcome (CONTRACT R1–R4).
 *
 * Internal code passes these objects around; only the upstream boundary renders them to JSON
 * (R2). Results are plain, frozen-by-convention objects (no classes) so that building one on the
 * hot path costs a single allocation and they can cross worker or test boundaries unchanged.
 */

/**
 * R3: every failure carries one of these error types, and no other. Default agent instructions
 * (R4) are keyed by them, so the list is closed; a downstream's own error code (ADR-002 `code`,
 * ADR-003 `error_type`) is kept verbatim in {@link FailureResult.errorCode}.
 */
export const ERROR_TYPES = [
  'tool_error',
  'invalid_arguments',
  'unknown_tool',
  'consent_required',
  'access_denied',
  'timeout',
  'cancelled',
  'overloaded',
  'downstream_unavailable',
  'downstream_error',
  'normalization_error',
  'definition_changed',
  'rate_limited',
] as const;

/** One of {@link ERROR_TYPES}. */
export type ErrorType = (typeof ERROR_TYPES)[number];

const ERROR_TYPE_SET: ReadonlySet<string> = new Set(ERROR_TYPES);

/** Narrows an unknown value to an {@link ErrorType}. */
export function isErrorType(value: unknown): value is ErrorType {
  return typeof value === 'string' && ERROR_TYPE_SET.has(value);
}

/**
 * Where a Result's value (or error) came from.
 * - `structured`: the downstream's `structuredContent` (N1, N2)
 * - `text_json`: a text block that parsed as JSON (N3)
 * - `text`: plain text, or several text blocks joined (N3)
 * - `empty`: no content and no structuredContent (N5)
 * - `passthrough`: a value already in the output contract (N6)
 * - `proxy`: produced by mcp-normalizer itself; no downstream result was read (timeouts,
 *   unknown tools, invalid arguments, ...)
 */
export const RESULT_SOURCES = ['structured', 'text_json', 'text', 'empty', 'passthrough', 'proxy'] as const;

/** One of {@link RESULT_SOURCES}. */
export type ResultSource = (typeof RESULT_SOURCES)[number];

/** The in-band convention a downstream payload followed, when one was recognised (N8). */
export type InbandConvention = 'result' | 'response' | 'tool_result';

/** What a file artifact was made from (N4, N9). */
export type ArtifactKind = 'image' | 'audio' | 'blob' | 'text' | 'json';

/**
 * A file produced by a call: an image, audio clip, embedded resource, or a value too large to
 * inline (N4, N9). Rendered as `returned_file_names` / `returned_file_contents` (F1, F2).
 */
export interface FileArtifact {
  /** Short, unique within the call, says what it is: `screenshot-1.png`, `result.json`. */
  readonly name: string;
  readonly mimeType: string;
  /** The file's bytes, base64-encoded. */
  readonly base64: string;
  readonly kind: ArtifactKind;
  /** The resource URI the artifact came from, when it came from an embedded resource. */
  readonly uri?: string;
  /** The name the downstream gave it, when that was not a safe file name (`../../.bashrc`). */
  readonly originalName?: string;
  /**
   * F7: the body is kept by the gateway (`output.files: resource`) and read with
   * `resources/read` on `uri`; {@link FileArtifact.base64} is then empty.
   */
  readonly link?: { readonly uri: string; readonly size: number };
}

/** A `resource_link` content block, listed in the metadata and never fetched (N4). */
export interface ResourceLink {
  readonly uri: string;
  readonly name?: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
}

/**
 * A detail worth logging that is not part of the rendered envelope: e.g. the short diff behind a
 * `structured_text_mismatch` warning (N2). The normalizer is pure, so it returns these and the
 * caller logs them.
 */
export interface Diagnostic {
  /** The warning code it explains, e.g. `structured_text_mismatch`. */
  readonly code: string;
  readonly message: string;
}

/** Call metadata carried by every Result (R1). */
export interface CallMeta {
  /** The downstream server's key in the config. */
  readonly server?: string;
  /** The downstream tool's own (unprefixed) name. */
  readonly tool?: string;
  readonly source: ResultSource;
  /** Wall time of the call as measured by the caller (the normalizer never reads a clock). */
  readonly elapsedMs?: number;
  /** Warning codes, rendered to the client: `structured_text_mismatch`, `invalid_base64`, ... */
  readonly warnings: readonly string[];
  /** Details behind the warnings, for the log only. */
  readonly diagnostics: readonly Diagnostic[];
  /** `resource_link` blocks of the downstream result (N4). */
  readonly resourceLinks: readonly ResourceLink[];
  /**
   * Text blocks addressed to the model that the value does not carry: prose beside
   * `structuredContent` (N11). Absent when there are none.
   */
  readonly notes?: readonly string[];
  /**
   * The downstream result's own `_meta`, reserved keys left out (N12); the tool backend rewrites
   * the `ui://` URIs in it (U6). Rendered as the upstream CallToolResult's `_meta`.
   */
  readonly resultMeta?: Readonly<Record<string, unknown>>;
  /** The in-band convention the payload followed, if any (N8). */
  readonly convention?: InbandConvention;
  /** Metadata a downstream returned in the output contract (`meta_data`, N6), merged as-is. */
  readonly downstreamMeta?: Readonly<Record<string, unknown>>;
}

interface ResultBase {
  readonly meta: CallMeta;
  readonly files: readonly FileArtifact[];
  /** A message for the user (rendered as a text block with `audience: ["user"]`). */
  readonly message?: string;
  /** Guidance for the agent: retry, fix the arguments, ask the user, or stop (R4). */
  readonly instruction?: string;
  /**
   * The downstream's original non-text content blocks (image, audio, resource, resource_link),
   * kept by reference so that `output.media: passthrough` can re-emit them (F5).
   */
  readonly mediaBlocks: readonly unknown[];
  /**
   * The downstream's CallToolResult as received, kept by reference and never rendered, except
   * for a tool whose results belong to an MCP App (U6): an app reads its own server's shape.
   */
  readonly original?: unknown;
  /** U6: render {@link ResultBase.original} instead of the envelope. Set by the tool backend. */
  readonly rendering?: 'envelope' | 'original';
}

/** A successful call. `value` is `null` for an empty result (N5, F4). */
export interface OkResult<T = unknown> extends ResultBase {
  readonly success: true;
  readonly value: T;
}

/** A failed call (R3). */
export interface FailureResult extends ResultBase {
  readonly success: false;
  /** What went wrong, in one line, with doubled `MCP error -NNNNN:` prefixes removed. */
  readonly error: string;
  readonly errorType: ErrorType;
  /** The downstream's own error code or type, verbatim (ADR-002 `code`, ADR-003 `error_type`). */
  readonly errorCode?: string;
  /** Structured detail for programs: validation issues, suggestions, the JSON payload, ... */
  readonly errorData?: Readonly<Record<string, unknown>>;
  /** The thrown value behind the failure, kept in memory for logs; never rendered whole (R1). */
  readonly exception?: unknown;
}

/** The outcome of one tool call (R1). Narrow it with {@link isOk} / {@link isFailure}. */
export type Result<T = unknown> = OkResult<T> | FailureResult;

/** Fields shared by {@link ok} and {@link failure}; all optional. */
export interface ResultInit {
  readonly meta?: Partial<CallMeta>;
  readonly files?: readonly FileArtifact[];
  readonly message?: string;
  readonly instruction?: string;
  readonly mediaBlocks?: readonly unknown[];
  readonly original?: unknown;
}

/** Extra fields of a failure. */
export interface FailureInit extends ResultInit {
  readonly errorCode?: string;
  readonly errorData?: Readonly<Record<string, unknown>>;
  readonly exception?: unknown;
}

const NONE: readonly never[] = Object.freeze([]);

function buildMeta(meta: Partial<CallMeta> | undefined): CallMeta {
  return {
    ...meta,
    source: meta?.source ?? 'proxy',
    warnings: meta?.warnings ?? NONE,
    diagnostics: meta?.diagnostics ?? NONE,
    resourceLinks: meta?.resourceLinks ?? NONE,
  };
}

/** Copies only the optional fields that are set, so results never carry `key: undefined`. */
function optional(init: ResultInit): { message?: string; instruction?: string; original?: unknown } {
  const out: { message?: string; instruction?: string; original?: unknown } = {};
  if (init.message !== undefined) out.message = init.message;
  if (init.instruction !== undefined) out.instruction = init.instruction;
  if (init.original !== undefined) out.original = init.original;
  return out;
}

/**
 * A successful Result.
 * @example ok({ rows: 3 }, { meta: { server: 'db', tool: 'count', source: 'structured' } })
 */
export function ok<T>(value: T, init: ResultInit = {}): OkResult<T> {
  return {
    success: true,
    value,
    meta: buildMeta(init.meta),
    files: init.files ?? NONE,
    mediaBlocks: init.mediaBlocks ?? NONE,
    ...optional(init),
  };
}

/**
 * A failed Result. `errorType` must be one of {@link ERROR_TYPES}; passing anything else is a
 * programmer error and throws.
 * @example failure('timeout', 'No answer from "db" within 60000 ms', { meta: { server: 'db' } })
 */
export function failure(errorType: ErrorType, error: string, init: FailureInit = {}): FailureResult {
  if (!isErrorType(errorType)) {
    throw new TypeError(
      `Expected \`errorType\` to be one of ${ERROR_TYPES.join(', ')}, got \`${String(errorType)}\` (${typeof errorType})`,
    );
  }
  const result: {
    -readonly [K in keyof FailureResult]: FailureResult[K];
  } = {
    success: false,
    error,
    errorType,
    meta: buildMeta(init.meta),
    files: init.files ?? NONE,
    mediaBlocks: init.mediaBlocks ?? NONE,
    ...optional(init),
  };
  if (init.errorCode !== undefined) result.errorCode = init.errorCode;
  if (init.errorData !== undefined) result.errorData = init.errorData;
  if (init.exception !== undefined) result.exception = init.exception;
  return result;
}

/** True (and narrows) when the call succeeded. */
export function isOk<T>(result: Result<T>): result is OkResult<T> {
  return result.success;
}

/** True (and narrows) when the call failed. */
export function isFailure<T>(result: Result<T>): result is FailureResult {
  return !result.success;
}

/**
 * A copy of `result` with metadata fields replaced or added; the one sanctioned way to enrich a
 * Result after it was built (e.g. the dispatcher adding `elapsedMs`).
 */
export function withMeta<R extends Result>(result: R, meta: Partial<CallMeta>): R {
  return { ...result, meta: { ...result.meta, ...meta } };
}

/** A copy of `result` carrying `instruction` unless it already has one of its own (R4). */
export function withDefaultInstruction<R extends Result>(result: R, instruction: string | undefined): R {
  if (instruction === undefined || result.instruction !== undefined) return result;
  return { ...result, instruction };
}
