/**
 * Result → envelope → CallToolResult: the one place where a Result becomes JSON (R2, F1–F5).
 * Imported only by `upstream/server.ts` (the architecture test enforces it).
 *
 * Hot path: every tools/call ends here. The envelope is stringified exactly once, without the file
 * bodies (the text block must not carry base64), and the bodies are attached to the
 * structuredContent object afterwards; nothing is ever re-parsed. Total: any Result, however odd
 * its value, renders to a CallToolResult that the SDK accepts, and nothing here throws.
 */
import type { TextMode } from '../core/options.js';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import { ContentBlockSchema } from '@modelcontextprotocol/core';
import type { FailureResult, FileArtifact, ResourceLink, Result } from '../core/result.js';
import { failure } from '../core/result.js';
import { stripMcpErrorPrefix } from '../core/classify.js';
import { DEFAULT_INSTRUCTIONS } from '../core/instructions.js';
import { safeStringify } from '../core/json.js';
import { shorterToon } from './toon-text.js';
import type {
  Envelope,
  MediaMode,
  OutputFormat,
  ResponseEnvelope,
  ResultEnvelope,
  ResultsEnvelope,
} from './envelope-schema.js';

/** Options of {@link renderCallToolResult}. */
export interface RenderOptions {
  /**
   * The envelope shape (F1–F3), config `output.format`.
   * @default 'results'
   */
  readonly format: OutputFormat;
  /**
   * F5: `passthrough` also re-emits the downstream's image, audio, resource and resource_link
   * blocks in `content`, after the JSON text block; `artifacts` keeps them as file fields only.
   * @default 'artifacts'
   * @example { format: 'results', media: 'passthrough' }
   */
  readonly media: MediaMode;
  /**
   * F6: `toon` writes the text block as TOON (Token-Oriented Object Notation) when that is
   * shorter than the JSON; `structuredContent` stays the JSON envelope.
   * @default 'json'
   */
  readonly text?: TextMode;
}

/** Added to F1 `meta_data.warnings` when F5 passthrough drops a block the SDK would reject. */
export const INVALID_MEDIA_BLOCK_WARNING = 'invalid_media_block';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Python-style truthiness of ADR-003 `to_json`: empty strings are left out like absent ones. */
function present(text: string | undefined): text is string {
  return typeof text === 'string' && text.length > 0;
}

function hasKeys(
  record: Readonly<Record<string, unknown>> | undefined,
): record is Readonly<Record<string, unknown>> {
  if (record === undefined || record === null || typeof record !== 'object') return false;
  for (const _key in record) return true;
  return false;
}

/** N11: the model-addressed texts beside the value, when there are any. */
function hasNotes(notes: readonly string[] | undefined): notes is readonly string[] {
  return Array.isArray(notes) && notes.length > 0;
}

/** Copies only the contract fields of a link, so stray keys never break the strict schema. */
function linkEntry(link: ResourceLink): NonNullable<ResultsEnvelope['meta_data']['resource_links']>[number] {
  const entry: Mutable<ResourceLink> = { uri: String(link.uri) };
  if (typeof link.name === 'string') entry.name = link.name;
  if (typeof link.title === 'string') entry.title = link.title;
  if (typeof link.description === 'string') entry.description = link.description;
  if (typeof link.mimeType === 'string') entry.mimeType = link.mimeType;
  return entry;
}

/** Every key F1's `meta_data` may carry of ours: a downstream's key by one of these names is nested. */
const F1_META_KEYS: ReadonlySet<string> = new Set([
  'is_error',
  'error_type',
  'error_code',
  'server',
  'tool',
  'source',
  'elapsed_ms',
  'warnings',
  'message',
  'instruction',
  'notes',
  'error_data',
  'resource_links',
  'original_file_names',
  'downstream',
]);

/** F1 `meta_data` (ours first; then the downstream's own keys, those that collide under `downstream`, N6). */
function metaData(result: Result, extraWarnings: readonly string[]): ResultsEnvelope['meta_data'] {
  const meta = result.meta;
  const out: Record<string, unknown> = {};
  if (!result.success) {
    out['is_error'] = true;
    out['error_type'] = result.errorType;
    if (present(result.errorCode)) out['error_code'] = result.errorCode;
  }
  if (typeof meta.server === 'string') out['server'] = meta.server;
  if (typeof meta.tool === 'string') out['tool'] = meta.tool;
  out['source'] = meta.source;
  if (Number.isFinite(meta.elapsedMs)) out['elapsed_ms'] = meta.elapsedMs;
  if (meta.warnings.length > 0 || extraWarnings.length > 0)
    out['warnings'] = [...meta.warnings, ...extraWarnings];
  if (present(result.message)) out['message'] = result.message;
  if (present(result.instruction)) out['instruction'] = result.instruction;
  if (hasNotes(meta.notes)) out['notes'] = meta.notes;
  if (!result.success && hasKeys(result.errorData)) out['error_data'] = result.errorData;
  if (meta.resourceLinks.length > 0) out['resource_links'] = meta.resourceLinks.map(linkEntry);
  // The downstream's own name of a file whose name had to be made safe (N4).
  const renamed =
    result.files.length === 0
      ? result.files
      : result.files.filter((file) => typeof file.originalName === 'string');
  if (renamed.length > 0)
    out['original_file_names'] = renamed.map((file) => ({
      file: file.name,
      original: String(file.originalName),
    }));
  // N6/F1: a downstream that speaks this format keeps its own meta_data keys where they were;
  // ours win a collision, and each of its keys that collides goes under `downstream`.
  if (hasKeys(meta.downstreamMeta)) {
    const collided: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(meta.downstreamMeta)) {
      if (Object.hasOwn(out, key) || F1_META_KEYS.has(key)) collided[key] = value;
      else out[key] = value;
    }
    if (hasKeys(collided)) out['downstream'] = collided;
  }
  return out as ResultsEnvelope['meta_data'];
}

/** F1: the MCP Tool Output Contract. */
function resultsEnvelope(result: Result, extraWarnings: readonly string[]): ResultsEnvelope {
  if (result.success) {
    // F4: an empty success is `results: null`, never `{}` or a missing key.
    return {
      results: result.value === undefined ? null : result.value,
      meta_data: metaData(result, extraWarnings),
    };
  }
  return { results: { error: result.error }, meta_data: metaData(result, extraWarnings) } as ResultsEnvelope;
}

/** `exception_type` / `exception_message` of ADR-003: the name and message, never the stack. */
function exceptionFields(exception: unknown): { type: string; message: string } | undefined {
  if (exception === null || typeof exception !== 'object') return undefined;
  try {
    // Structural, not instanceof: errors come from other packages and realms (docs/architecture.md, "one translation point").
    const { name, message } = exception as { name?: unknown; message?: unknown };
    if (typeof name !== 'string' || typeof message !== 'string') return undefined;
    return { type: name, message: stripMcpErrorPrefix(message) };
  } catch {
    return undefined;
  }
}

/** F2 `error_data`: the Result's errorData plus the downstream's own code as `error_code`. */
function resultErrorData(result: FailureResult): Record<string, unknown> | undefined {
  const code = present(result.errorCode) ? result.errorCode : undefined;
  if (code === undefined) return hasKeys(result.errorData) ? { ...result.errorData } : undefined;
  return { ...result.errorData, error_code: code };
}

/** F2: exactly ADR-003 `Result.to_json()`, key order included. */
function resultEnvelope(result: Result): ResultEnvelope {
  const out: Record<string, unknown> = { success: result.success };
  if (result.success) {
    // to_json: `if self.value is not None` — null and undefined both leave `value` out.
    if (result.value !== null && result.value !== undefined) out['value'] = result.value;
  } else {
    out['error'] = result.error;
    // F2: an ADR-003 downstream's own failure comes back as it sent it, `error_type` and
    // `error_data` unchanged. Our closed type is implied: an error_type outside R3's list is a
    // downstream's in-band failure, which is always `tool_error`.
    const theirs = result.meta.convention === 'result' && present(result.errorCode);
    out['error_type'] = theirs ? result.errorCode : result.errorType;
    let errorData: Record<string, unknown> | undefined;
    if (!theirs) errorData = resultErrorData(result);
    else if (hasKeys(result.errorData)) errorData = { ...result.errorData };
    if (errorData !== undefined) out['error_data'] = errorData;
    const exception = exceptionFields(result.exception);
    if (exception !== undefined) {
      out['exception_type'] = exception.type;
      out['exception_message'] = exception.message;
    }
  }
  if (present(result.message)) out['message'] = result.message;
  if (present(result.instruction)) out['instruction'] = result.instruction;
  if (hasNotes(result.meta.notes)) out['notes'] = result.meta.notes;
  return out as ResultEnvelope;
}

/** F3: ADR-002 McpServerResponse, plus `instruction` at the top level so R4 survives. */
function responseEnvelope(result: Result): ResponseEnvelope {
  let out: Record<string, unknown>;
  if (result.success) {
    out = { status: 'SUCCESS', data: result.value === undefined ? null : result.value };
  } else {
    // The downstream's own code survives a round trip; our closed type goes to details.
    const code = present(result.errorCode) ? result.errorCode : result.errorType;
    let details: Record<string, unknown> | undefined = hasKeys(result.errorData)
      ? { ...result.errorData }
      : undefined;
    if (code !== result.errorType) details = { ...details, error_type: result.errorType };
    const error: Record<string, unknown> = { code, message: result.error };
    if (details !== undefined) error['details'] = details;
    out = { status: 'ERROR', error };
  }
  if (present(result.instruction)) out['instruction'] = result.instruction;
  if (hasNotes(result.meta.notes)) out['notes'] = result.meta.notes;
  return out as ResponseEnvelope;
}

function buildEnvelope(result: Result, format: OutputFormat, extraWarnings: readonly string[]): Envelope {
  const envelope =
    format === 'result'
      ? resultEnvelope(result)
      : format === 'response'
        ? responseEnvelope(result)
        : resultsEnvelope(result, extraWarnings);
  if (result.files.length > 0) {
    (envelope as { returned_file_names?: string[] }).returned_file_names = result.files.map(fileName);
    // F7: files kept by the gateway are listed as links, in the text the model reads too.
    if (result.files.some(isLinked))
      (envelope as { returned_file_links?: FileLinkEntry[] }).returned_file_links = result.files.map(linkOf);
  }
  return envelope;
}

/** F7: one file kept by the gateway, as a `resource_link` (null for a file carried inline). */
type FileLinkEntry = {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType: string;
  size: number;
} | null;

function isLinked(file: FileArtifact): boolean {
  return file.link !== undefined;
}

function linkOf(file: FileArtifact): FileLinkEntry {
  if (file.link === undefined) return null;
  return {
    type: 'resource_link',
    uri: file.link.uri,
    name: file.name,
    mimeType: file.mimeType,
    size: file.link.size,
  };
}

function fileName(file: FileArtifact): string {
  return file.name;
}

function fileContent(file: FileArtifact): string {
  return file.base64;
}

function attachFileContents(envelope: Envelope, files: readonly FileArtifact[]): void {
  // F7: a body the gateway keeps is read with resources/read, never carried here.
  if (files.length > 0 && !files.every(isLinked)) {
    (envelope as { returned_file_contents?: string[] }).returned_file_contents = files.map(fileContent);
  }
}

/**
 * The envelope of `result` in `format` (F1–F4), file bodies included: what `structuredContent`
 * carries. For tests and tools that record envelopes; the server uses {@link renderCallToolResult}.
 * @example renderEnvelope(ok({ rows: 3 }), 'results') // { results: { rows: 3 }, meta_data: { source: 'proxy' } }
 */
export function renderEnvelope(result: Result, format: OutputFormat): Record<string, unknown> {
  const envelope = buildEnvelope(result, format, []);
  attachFileContents(envelope, result.files);
  return envelope;
}

/** F5: the original non-text blocks that the SDK's own ContentBlockSchema accepts, cleaned by it. */
function passthroughBlocks(blocks: readonly unknown[]): { blocks: ContentBlock[]; dropped: number } {
  const kept: ContentBlock[] = [];
  let dropped = 0;
  for (const block of blocks) {
    let parsed: ReturnType<typeof ContentBlockSchema.safeParse> | undefined;
    try {
      parsed = ContentBlockSchema.safeParse(block);
    } catch {
      parsed = undefined;
    }
    // The low-level Server validates its own results: one bad block would fail the whole call.
    if (parsed?.success === true && parsed.data.type !== 'text') kept.push(parsed.data);
    else dropped += 1;
  }
  return { blocks: kept, dropped };
}

/**
 * A Result whose value cannot become JSON (a cycle, a BigInt, a throwing getter): rendered as a
 * `normalization_error` built from strings only, so the answer still goes out (R3).
 */
function unserializable(result: Result, reason: unknown, what = 'serialized to JSON'): Result {
  const meta = result.meta;
  // First line only: V8's circular-structure message continues with a multi-line path.
  const detail = reason instanceof Error ? (reason.message.split('\n')[0] ?? '') : 'unknown reason';
  return failure('normalization_error', `The tool result could not be ${what}: ${detail}`, {
    meta: {
      ...(typeof meta.server === 'string' ? { server: meta.server } : {}),
      ...(typeof meta.tool === 'string' ? { tool: meta.tool } : {}),
      ...(Number.isFinite(meta.elapsedMs) ? { elapsedMs: meta.elapsedMs } : {}),
      source: meta.source,
    },
    instruction: DEFAULT_INSTRUCTIONS.normalization_error,
  });
}

function assemble(result: Result, text: string, envelope: Envelope, media: ContentBlock[]) {
  const content: ContentBlock[] = [{ type: 'text', text }];
  // The user's message travels in its own block, marked for the user, not the model.
  if (present(result.message))
    content.push({ type: 'text', text: result.message, annotations: { audience: ['user'] } });
  for (const block of media) content.push(block);
  // F7: each kept file as the protocol's own link block, which hosts know how to open.
  for (const file of result.files) {
    const link = linkOf(file);
    if (link !== null) content.push(link);
  }
  const out: CallToolResult = {
    content,
    structuredContent: envelope as Record<string, unknown>,
    isError: !result.success,
  };
  // N12: the downstream's own `_meta` (reserved keys left out, ui:// URIs exposed) travels.
  if (hasKeys(result.meta.resultMeta)) out._meta = { ...result.meta.resultMeta };
  return out;
}

/**
 * U6: the downstream's CallToolResult in its own shape, for an MCP App's tool: the blocks the
 * SDK's ContentBlockSchema accepts (text included), its structuredContent and `isError` as it
 * sent them, and its `_meta` as {@link assemble} carries it. Undefined when there is no original
 * (a failure of ours: a timeout, an unavailable server), which gets the envelope.
 */
function renderOriginal(result: Result): CallToolResult | undefined {
  const original = result.original;
  if (original === null || typeof original !== 'object' || Array.isArray(original)) return undefined;
  const raw = original as Record<string, unknown>;
  const content: ContentBlock[] = [];
  for (const block of Array.isArray(raw['content']) ? (raw['content'] as unknown[]) : []) {
    const parsed = ContentBlockSchema.safeParse(block);
    if (parsed.success) content.push(parsed.data);
  }
  const out: CallToolResult = { content };
  const structured = raw['structuredContent'];
  if (structured !== undefined && structured !== null)
    out.structuredContent = structured as Record<string, unknown>;
  if (raw['isError'] === true) out.isError = true;
  if (hasKeys(result.meta.resultMeta)) out._meta = { ...result.meta.resultMeta };
  return out;
}

function render(result: Result, options: RenderOptions): CallToolResult {
  if (result.rendering === 'original') {
    const original = renderOriginal(result);
    if (original !== undefined) return original;
  }
  const media =
    options.media === 'passthrough' ? passthroughBlocks(result.mediaBlocks) : { blocks: [], dropped: 0 };
  const envelope = buildEnvelope(
    result,
    options.format,
    media.dropped > 0 ? [INVALID_MEDIA_BLOCK_WARNING] : [],
  );
  let text: string;
  try {
    // The one stringify of the call; the structuredContent is this same object, so the text
    // block and the structured result cannot disagree (F: "the same JSON").
    text = JSON.stringify(envelope);
    if (options.text === 'toon') text = shorterToon(text);
  } catch (error) {
    const fallback = unserializable(result, error);
    const safeEnvelope = buildEnvelope(fallback, options.format, []);
    return assemble(fallback, safeStringify(safeEnvelope), safeEnvelope, []);
  }
  // Bodies go to structuredContent only, after the text was made: base64 never enters the prompt.
  attachFileContents(envelope, result.files);
  return assemble(result, text, envelope, media.blocks);
}

/**
 * The upstream CallToolResult of `result` (F1–F5): `structuredContent` = the envelope;
 * `content[0]` = the same JSON without `returned_file_contents`; then the user `message` (if
 * any) as a text block with `audience: ["user"]`; then, with `media: passthrough`, the original
 * valid image/audio/resource/resource_link blocks. `isError` = `!result.success`. Never throws.
 * @example renderCallToolResult(result, { format: 'results', media: 'artifacts' })
 */
export function renderCallToolResult(result: Result, options: RenderOptions): CallToolResult {
  try {
    return render(result, options);
  } catch (error) {
    // Outermost net: a malformed Result object (not just an odd value) still gets an answer.
    try {
      return render(unserializable(failure('normalization_error', ''), error, 'rendered'), options);
    } catch {
      return {
        content: [{ type: 'text', text: '{"error":"The tool result could not be rendered."}' }],
        isError: true,
      };
    }
  }
}
