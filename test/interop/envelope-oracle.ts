/**
 * The interop oracle: given the raw CallToolResult a server sent to a DIRECT client and the
 * CallToolResult mcp-normalizer sent for the same call (format `results`, media `artifacts`),
 * asserts field by field that the envelope carries everything the raw result had, as
 * docs/contract.md and docs/output-formats.md promise:
 *
 * - every text block: as the value (N3: its JSON parse, the string, an array of parses, or the
 *   blocks joined by a newline), unless structuredContent is the value (N1);
 * - structuredContent: equal to `results` (N1), through the documented transformations only:
 *   N6 (a `{results}` payload is unwrapped), N8 (an ADR-003 `{success: true, value?, message?}`
 *   payload becomes its value and `meta_data.message`) and N9 (a value over the inline limit
 *   moves into `result.json`);
 * - N2: `structured_text_mismatch` exactly when a JSON text block truly differs from
 *   structuredContent. "Truly" is the documented choice of src/core/compare.ts: a text equal to
 *   structuredContent, or to the only value of a single-key structuredContent (the wrapper MCP
 *   forces on array and string results, as server-memory and server-filesystem send), agrees;
 * - images, audio and blob resources: files whose base64 equals the raw data; embedded text
 *   resources: files whose decoded text equals the raw text; names that say what they are (N4);
 * - resource_link blocks: `meta_data.resource_links`, field for field, in order (N4);
 * - `isError: true`: `is_error`, `error_type: tool_error`, the error text without the SDK's
 *   `MCP error -NNNNN:` prefix (whose code goes to `error_code`), the JSON payload in
 *   `error_data`, an instruction (N7, R4);
 * - the rendering rules: content[0] is the envelope's JSON without `returned_file_contents`,
 *   content[1] is the user message when there is one, `isError` mirrors `is_error` (F1, F4).
 *
 * It is written from the contract, not from src/: it shares no code with the normalizer, so a
 * bug there cannot hide here. Volatile parts (temp folders, clock times, session ids) differ
 * between two calls of the same tool; {@link createMask} replaces them on both sides first.
 */
import { expect } from 'vitest';

/** A raw CallToolResult, as a server sent it. */
export type RawResult = Readonly<Record<string, unknown>>;

/** What the product sent: a CallToolResult whose structuredContent is the envelope. */
export interface ProxiedResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly [key: string]: unknown;
}

/** What the oracle needs to know besides the two results. */
export interface OracleOptions {
  /** The server key of the product config (`meta_data.server`). */
  readonly server: string;
  /** The downstream tool's own name (`meta_data.tool`). */
  readonly tool: string;
  /**
   * `output.max_inline_bytes` of the product config (N9).
   * @default 65536
   */
  readonly maxInlineBytes?: number;
  /** Replaces volatile substrings on both sides before comparing. @default identity */
  readonly mask?: (text: string) => string;
}

const MISMATCH = 'structured_text_mismatch';
const SPILL_FILE = 'result.json';
const PREVIEW_CHARS = 512;
const NO_MESSAGE = 'The tool reported an error without a message';
const MCP_ERROR_PREFIX = /^(?:\s*MCP error (-?\d+):\s*)+/;

/** Extensions the reference servers' MIME types must get (N4: names say what they are). */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'audio/wav': 'wav',
  'text/plain': 'txt',
  'application/gzip': 'gz',
  'application/json': 'json',
};

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
    );
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && deepEqual(a[key], b[key]));
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * A mask over every string of a JSON value. Base64 strings that hold UTF-8 text (server-everything
 * puts a clock time inside its blob resources) are decoded, masked and re-encoded; binary base64 is
 * left alone.
 */
export function maskDeep<T>(value: T, mask: (text: string) => string): T {
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const masked = mask(node);
      if (masked !== node || node.length < 8 || node.length % 4 !== 0 || !BASE64.test(node)) return masked;
      const text = Buffer.from(node, 'base64').toString('utf8');
      if (Buffer.from(text, 'utf8').toString('base64') !== node) return node; // not UTF-8 text
      const maskedText = mask(text);
      return maskedText === text ? node : Buffer.from(maskedText, 'utf8').toString('base64');
    }
    if (Array.isArray(node)) return node.map(walk);
    if (isObject(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return node;
  };
  return walk(value) as T;
}

/**
 * The volatile parts of the reference servers' answers: the temp folders of the run (each side
 * has its own), server-everything's `created at <time>` and session ids, and server-filesystem's
 * `Date#toString()` timestamps.
 */
export function createMask(roots: readonly string[] = []): (text: string) => string {
  const sorted = [...roots].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const root of sorted) out = out.split(root).join('<ROOT>');
    return out
      .replace(/created at [0-9:.]+(?:[\s\u202f]?[AP]M)?/g, 'created at <TIME>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<UUID>')
      .replace(/\w{3} \w{3} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^)]*\))?/g, '<DATE>');
  };
}

interface ExpectedFile {
  readonly what: string;
  readonly kind: 'image' | 'audio' | 'text' | 'blob';
  readonly mimeType: string;
  /** Raw base64 (image, audio, blob) ... */
  readonly base64?: string;
  /** ... or raw text (embedded text resource). */
  readonly text?: string;
  readonly uri?: string;
}

interface RawParts {
  readonly texts: string[];
  readonly files: ExpectedFile[];
  readonly links: Json[];
}

/** Splits the raw content into what N3 and N4 say becomes value, files and links. */
function readRaw(raw: RawResult): RawParts {
  const parts: RawParts = { texts: [], files: [], links: [] };
  const content = raw['content'];
  if (content === undefined) return parts;
  if (!Array.isArray(content)) throw new Error('oracle: the raw content is not an array');
  content.forEach((block: unknown, index) => {
    if (!isObject(block)) throw new Error(`oracle: raw content[${index}] is not an object`);
    const what = `raw content[${index}] (${String(block['type'])})`;
    switch (block['type']) {
      case 'text':
        parts.texts.push(String(block['text']));
        break;
      case 'image':
      case 'audio':
        parts.files.push({
          what,
          kind: block['type'],
          mimeType: String(block['mimeType']),
          base64: String(block['data']),
        });
        break;
      case 'resource': {
        const resource = block['resource'] as Json;
        const uri = typeof resource['uri'] === 'string' ? resource['uri'] : undefined;
        const isText = typeof resource['text'] === 'string';
        parts.files.push({
          what,
          kind: isText ? 'text' : 'blob',
          mimeType: String(resource['mimeType'] ?? (isText ? 'text/plain' : 'application/octet-stream')),
          ...(isText ? { text: resource['text'] as string } : { base64: String(resource['blob']) }),
          ...(uri !== undefined ? { uri } : {}),
        });
        break;
      }
      case 'resource_link': {
        const link: Json = { uri: block['uri'] };
        for (const key of ['name', 'title', 'description', 'mimeType']) {
          if (typeof block[key] === 'string') link[key] = block[key];
        }
        parts.links.push(link);
        break;
      }
      default:
        throw new Error(`oracle: ${what} is a block type the reference servers do not send`);
    }
  });
  return parts;
}

/** N3: the value of the text blocks. */
function valueOfTexts(texts: readonly string[]): { value: unknown; source: 'text_json' | 'text' } {
  const parses = texts.map(parseJson);
  if (texts.length === 1) {
    const only = parses[0];
    return only?.ok ? { value: only.value, source: 'text_json' } : { value: texts[0], source: 'text' };
  }
  return parses.every((p) => p.ok)
    ? { value: parses.map((p) => (p.ok ? p.value : undefined)), source: 'text_json' }
    : { value: texts.join('\n'), source: 'text' };
}

/** N2: does some JSON text block disagree with structuredContent, with none agreeing? */
function trulyDiffers(structured: unknown, texts: readonly string[]): boolean {
  const keys = isObject(structured) ? Object.keys(structured) : [];
  const inner = keys.length === 1 && isObject(structured) ? structured[keys[0] as string] : undefined;
  let sawJson = false;
  for (const text of texts) {
    const parsed = parseJson(text);
    if (!parsed.ok) continue;
    sawJson = true;
    if (deepEqual(parsed.value, structured)) return false;
    if (keys.length === 1 && (inner === text || deepEqual(parsed.value, inner))) return false;
  }
  return sawJson;
}

function within(value: Json, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

/** The documented transformations of a success value (N6, N8), or the value itself. */
function transformSuccess(
  value: unknown,
  source: string,
): { value: unknown; source: string; message?: string } {
  if (!isObject(value)) return { value, source };
  if (
    'results' in value &&
    within(value, ['results', 'meta_data', 'returned_file_names', 'returned_file_contents'])
  ) {
    if (!within(value, ['results']))
      throw new Error('oracle: an N6 payload with metadata or files is not modelled');
    return { value: value['results'] ?? null, source: 'passthrough' };
  }
  if (
    typeof value['success'] === 'boolean' &&
    within(value, ['success', 'value', 'message', 'instruction'])
  ) {
    if (value['success'] !== true || 'instruction' in value)
      throw new Error('oracle: this ADR-003 payload is not modelled');
    return {
      value: value['value'] ?? null,
      source,
      ...(typeof value['message'] === 'string' ? { message: value['message'] } : {}),
    };
  }
  const inband =
    (typeof value['status'] === 'string' && within(value, ['status', 'data', 'error'])) ||
    (within(value, ['result', 'error']) && Object.keys(value).length === 2);
  if (inband) throw new Error('oracle: an ADR-002 / ADR-0005 payload is not modelled');
  return { value, source };
}

const BASE64_MOVED = 'base64_moved_to_file';

/**
 * N4: every string of `value` that is exactly the base64 of one of the raw files (64 characters
 * or more) becomes `[base64 moved to file <name>]`, `name` being that file's returned name.
 */
function moveRepeatedBase64(
  value: unknown,
  parts: RawParts,
  names: readonly string[],
): { value: unknown; names: string[] } {
  const byData = new Map<string, string>();
  parts.files.forEach((file, i) => {
    const name = names[i];
    if (
      file.base64 !== undefined &&
      file.base64.length >= 64 &&
      name !== undefined &&
      !byData.has(file.base64)
    )
      byData.set(file.base64, name);
  });
  const used = new Set<string>();
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const name = byData.get(node);
      if (name === undefined) return node;
      used.add(name);
      return `[base64 moved to file ${name}]`;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (isObject(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return node;
  };
  const out = walk(value);
  return { value: out, names: [...used] };
}

/** The value a success must carry: N1, else N3, else N5; then N6 / N8. */
function successValue(
  raw: RawResult,
  texts: readonly string[],
): { value: unknown; source: string; message?: string } {
  const structured = raw['structuredContent'];
  if (structured !== undefined && structured !== null) return transformSuccess(structured, 'structured');
  if (texts.length > 0) {
    const { value, source } = valueOfTexts(texts);
    return transformSuccess(value, source);
  }
  return transformSuccess(null, 'empty');
}

function expectFiles(parts: RawParts, names: readonly string[], contents: readonly unknown[]): void {
  expect(new Set(names).size, `file names are unique within the call (N4): ${names.join(', ')}`).toBe(
    names.length,
  );
  parts.files.forEach((file, i) => {
    const name = names[i];
    const body = contents[i];
    expect(typeof name, `${file.what} became file ${i + 1} (N4)`).toBe('string');
    expect(typeof body, `${file.what} has its file body (N4)`).toBe('string');
    if (file.base64 !== undefined) {
      expect(body, `${file.what}: the file's base64 equals the raw data (N4)`).toBe(file.base64);
    } else {
      const decoded = Buffer.from(body as string, 'base64').toString('utf8');
      expect(decoded, `${file.what}: the file's text equals the raw resource text (N4)`).toBe(file.text);
    }
    const extension = EXTENSIONS[file.mimeType.split(';')[0]?.trim() ?? ''];
    const segment =
      file.uri
        ?.replace(/[?#].*$/, '')
        .split('/')
        .pop() ?? '';
    if (file.kind === 'image' || file.kind === 'audio') {
      expect(name, `${file.what}: an ${file.kind} file is named ${file.kind}-N (N4)`).toMatch(
        new RegExp(`^${file.kind}-\\d+\\.${extension ?? '\\w+'}$`),
      );
    } else if (/^[\w-]+(\.[\w-]+)+$/.test(segment) && !file.uri?.startsWith('data:')) {
      expect(name, `${file.what}: named after its URI (N4)`).toBe(segment);
    } else {
      expect(name, `${file.what}: an unnamed resource is resource-N (N4)`).toMatch(
        new RegExp(`^resource-\\d+\\.${extension ?? '\\w+'}$`),
      );
    }
  });
}

/**
 * Asserts that `proxied` (mcp-normalizer's answer, format `results`) carries everything `raw` (a
 * direct call's answer) had. Throws the first failed expectation, whose message says which field.
 */
export function assertEnvelopeCarries(
  rawIn: RawResult,
  proxiedIn: ProxiedResult,
  options: OracleOptions,
): void {
  const mask = options.mask ?? ((text: string) => text);
  const raw = maskDeep(rawIn, mask);
  const proxied = maskDeep(proxiedIn, mask);
  const maxInline = options.maxInlineBytes ?? 65_536;

  const envelope = proxied.structuredContent;
  if (!isObject(envelope)) throw new Error('mcp-normalizer sent no structuredContent envelope');
  const meta = envelope['meta_data'];
  if (!isObject(meta)) throw new Error('the envelope has no meta_data object');
  const content = proxied.content ?? [];

  // F1: content[0] is the envelope without the file bodies; isError mirrors is_error.
  const { returned_file_contents: bodies, ...visible } = envelope;
  const first = content[0];
  expect(isObject(first) && first['type'] === 'text', 'content[0] is a text block').toBe(true);
  expect(
    JSON.parse((first as Json)['text'] as string),
    'content[0] is the envelope without returned_file_contents',
  ).toEqual(visible);
  expect(proxied.isError === true, 'isError mirrors meta_data.is_error').toBe(meta['is_error'] === true);
  expect(meta['server'], 'meta_data.server').toBe(options.server);
  expect(meta['tool'], 'meta_data.tool').toBe(options.tool);
  expect(typeof meta['elapsed_ms'], 'meta_data.elapsed_ms').toBe('number');

  const parts = readRaw(raw);
  const structured = raw['structuredContent'];
  const hasStructured = structured !== undefined && structured !== null;
  const names = (envelope['returned_file_names'] ?? []) as string[];
  const contents = (bodies ?? []) as unknown[];
  expect(contents.length, 'returned_file_contents matches returned_file_names').toBe(names.length);
  expectFiles(parts, names, contents);
  expect(meta['resource_links'] ?? [], 'resource links, field for field and in order (N4)').toEqual(
    parts.links,
  );

  // N2 holds for failures too: a disagreement is worth a warning whatever the outcome.
  const warnings = hasStructured && trulyDiffers(structured, parts.texts) ? [MISMATCH] : [];

  if (raw['isError'] === true) {
    expect(
      meta['warnings'] ?? [],
      'N2: structured_text_mismatch exactly when the JSON truly differs',
    ).toEqual(warnings);
    // N7: the failure, its text (or the payload's error/message field) and its payload.
    let payload: unknown;
    let source = parts.texts.length > 0 ? 'text' : 'empty';
    if (hasStructured) {
      payload = structured;
      source = 'structured';
    } else if (parts.texts.length > 0) {
      const fromText = valueOfTexts(parts.texts);
      if (fromText.source === 'text_json') {
        payload = fromText.value;
        source = 'text_json';
      }
    }
    const fromPayload = isObject(payload)
      ? [payload['error'], payload['message']].find((field): field is string => typeof field === 'string')
      : undefined;
    const joined = parts.texts.join('\n');
    const text = fromPayload ?? (joined.trim() !== '' ? joined : NO_MESSAGE);
    const prefix = MCP_ERROR_PREFIX.exec(text);
    const error = prefix && text.length > prefix[0].length ? text.slice(prefix[0].length) : text;
    expect(proxied.isError, 'N7: isError').toBe(true);
    expect(meta['is_error'], 'N7: meta_data.is_error').toBe(true);
    expect(meta['error_type'], 'N7: meta_data.error_type').toBe('tool_error');
    expect(envelope['results'], 'N7: results.error is the error text').toEqual({ error });
    expect(meta['error_code'], 'N7: the MCP error code goes to error_code').toBe(prefix?.[1]);
    expect(meta['source'], 'meta_data.source').toBe(source);
    if (payload !== undefined) {
      expect(meta['error_data'], 'N7: the JSON payload is kept in error_data').toEqual(
        isObject(payload) ? payload : { payload },
      );
    }
    expect(
      typeof meta['instruction'] === 'string' && meta['instruction'] !== '',
      'R4: a failure has an instruction',
    ).toBe(true);
    return;
  }

  const found = successValue(raw, parts.texts);
  // N4: a string of the value that repeats a file's base64 is replaced by a reference to the file.
  const moved = moveRepeatedBase64(found.value, parts, names);
  const transformed = { ...found, value: moved.value };
  expect(
    meta['warnings'] ?? [],
    'N2: structured_text_mismatch exactly when the JSON truly differs; N4: base64_moved_to_file when the value repeated a file',
  ).toEqual(moved.names.length > 0 ? [...warnings, BASE64_MOVED] : warnings);
  expect(proxied.isError === true, 'a success stays a success').toBe(false);
  expect(meta['is_error'], 'a success has no is_error').toBeUndefined();
  expect(meta['source'], 'meta_data.source').toBe(transformed.source);

  // N8: an in-band message is meta_data.message and the user-facing block content[1].
  expect(meta['message'], 'meta_data.message').toBe(transformed.message);
  if (transformed.message !== undefined) {
    expect(content[1], 'F1: the message block for the user').toEqual({
      type: 'text',
      text: transformed.message,
      annotations: { audience: ['user'] },
    });
  }
  expect(content.length, 'media artifacts: nothing but the JSON and message blocks in content').toBe(
    transformed.message === undefined ? 1 : 2,
  );

  const json = JSON.stringify(transformed.value);
  // N9 counts the bytes the product saw, so measure the value before masking.
  const rawParts = readRaw(rawIn);
  const unmasked = moveRepeatedBase64(successValue(rawIn, rawParts.texts).value, rawParts, names).value;
  const bytes = Buffer.byteLength(JSON.stringify(unmasked), 'utf8');
  if (bytes <= maxInline) {
    // N1 / N3 / N5 + F4: the value itself (null, never {}, when empty).
    expect(envelope['results'], 'results carries the raw value').toEqual(transformed.value);
    expect(names.length, 'no file beyond the raw media (N4)').toBe(parts.files.length);
    return;
  }
  // N9: the value moved to result.json; results says where and how big.
  const spilled = envelope['results'] as Json;
  expect(spilled, 'N9: results is the spill marker').toMatchObject({
    truncated: true,
    file: SPILL_FILE,
    bytes,
    advice: expect.stringContaining(SPILL_FILE) as unknown,
  });
  const value = transformed.value;
  const list = Array.isArray(value) ? { items: value, key: undefined } : listField(value);
  if (typeof spilled['preview'] === 'string') {
    expect(json.startsWith(spilled['preview']), 'N9: preview is the start of the JSON').toBe(true);
    // The first 512 characters, one fewer when the 512th would split a surrogate pair.
    expect(spilled['preview'].length, 'N9: the preview is the first 512 characters').toBeGreaterThanOrEqual(
      Math.min(json.length, PREVIEW_CHARS - 1),
    );
  } else {
    // A list is cut at an item boundary: its first items, whole, the rest of the value as it is.
    expect(list, 'N9: a value preview only for a list').toBeDefined();
    const shown = spilled['shown'] as number;
    expect(spilled['items'], 'N9: how many items the list has').toBe(list?.items.length);
    const head = list?.items.slice(0, shown);
    expect(spilled['preview'], 'N9: the first items, whole').toEqual(
      list?.key === undefined ? head : { ...(value as Json), [list.key]: head },
    );
  }
  expect(names.length, 'N9: one file beyond the raw media').toBe(parts.files.length + 1);
  expect(names[parts.files.length], 'N9: the spill file').toBe(SPILL_FILE);
  const spilledJson = Buffer.from(contents[parts.files.length] as string, 'base64').toString('utf8');
  expect(JSON.parse(spilledJson), 'N9: result.json holds the whole value').toEqual(transformed.value);
}

/** N9: the top-level list field with the most items (at least 2) of an object value. */
function listField(value: unknown): { items: unknown[]; key: string } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let best: { items: unknown[]; key: string } | undefined;
  for (const [key, field] of Object.entries(value)) {
    if (Array.isArray(field) && field.length > (best?.items.length ?? 1)) best = { items: field, key };
  }
  return best;
}
