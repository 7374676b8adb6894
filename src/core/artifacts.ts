/**
 * File artifacts: names that are short, unique within a call and say what they are (N4), the
 * MIME type ↔ extension table, base64 checks (F5), and the spill of an oversized value into a
 * JSON file (N9).
 */
import type { ArtifactKind, FileArtifact } from './result.js';
import { ownValue, safeStringify, utf8ExceedsLimit } from './json.js';
import { NativeBuffer } from './native.js';

/** Default of `output.max_inline_bytes` (N9). */
export const DEFAULT_MAX_INLINE_BYTES = 65536;

/** Name of the JSON artifact that holds a spilled value (N9). */
export const SPILL_FILE_NAME = 'result.json';

/** How many characters of the value's JSON the spilled value keeps as `preview` (N9). */
export const PREVIEW_CHARS = 512;

/** How many characters of JSON the whole items of a cut list may take in `preview` (N9). */
export const PREVIEW_ROWS_CHARS = 2048;

const EXTENSION_BY_MIME: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/jpg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'image/x-icon': 'ico',
  'image/avif': 'avif',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/ogg': 'ogg',
  'audio/webm': 'weba',
  'audio/flac': 'flac',
  'audio/aac': 'aac',
  'audio/mp4': 'm4a',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/html': 'html',
  'text/css': 'css',
  'text/csv': 'csv',
  'text/xml': 'xml',
  'text/javascript': 'js',
  'text/x-python': 'py',
  'text/yaml': 'yaml',
  'application/json': 'json',
  'application/xml': 'xml',
  'application/yaml': 'yaml',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'application/gzip': 'gz',
  'application/x-gzip': 'gz',
  'application/x-tar': 'tar',
  'application/javascript': 'js',
  'application/octet-stream': 'bin',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
};

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = (() => {
  const out: Record<string, string> = {};
  // First MIME type listed for an extension wins (the canonical one comes first in the table).
  for (const [mime, ext] of Object.entries(EXTENSION_BY_MIME)) if (!Object.hasOwn(out, ext)) out[ext] = mime;
  out['jpeg'] = 'image/jpeg';
  out['htm'] = 'text/html';
  out['yml'] = 'application/yaml';
  return out;
})();

/** The essence of a MIME type: lower case, without parameters (`text/plain; charset=utf-8`). */
function essence(mimeType: string): string {
  const semi = mimeType.indexOf(';');
  return (semi === -1 ? mimeType : mimeType.slice(0, semi)).trim().toLowerCase();
}

/**
 * File extension for a MIME type: the table, else `txt` for `text/*`, `json` for `*+json`, and
 * `bin` for anything unknown.
 * @example extensionForMime('image/png') // 'png'
 */
export function extensionForMime(mimeType: string | undefined): string {
  if (mimeType === undefined) return 'bin';
  const key = essence(mimeType);
  const known = ownValue(EXTENSION_BY_MIME, key);
  if (known !== undefined) return known;
  if (key.endsWith('+json')) return 'json';
  if (key.startsWith('text/')) return 'txt';
  return 'bin';
}

/**
 * MIME type for a file name, from its extension; `application/octet-stream` when unknown.
 * @example mimeForFileName('chart.png') // 'image/png'
 */
export function mimeForFileName(name: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return 'application/octet-stream';
  return ownValue(MIME_BY_EXTENSION, name.slice(dot + 1).toLowerCase()) ?? 'application/octet-stream';
}

/** The artifact kind a MIME type suggests, for files whose origin says nothing (N6). */
export function kindForMime(mimeType: string): ArtifactKind {
  const key = essence(mimeType);
  if (key.startsWith('image/')) return 'image';
  if (key.startsWith('audio/')) return 'audio';
  if (key === 'application/json' || key.endsWith('+json')) return 'json';
  if (key.startsWith('text/')) return 'text';
  return 'blob';
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * True when `data` is standard base64 (RFC 4648 alphabet, no whitespace), with or without its
 * `=` padding: the strings `atob` accepts minus embedded whitespace, which a file consumer would
 * choke on (F5).
 */
export function isValidBase64(data: unknown): data is string {
  if (typeof data !== 'string') return false;
  const padded = data.endsWith('=');
  if (padded ? data.length % 4 !== 0 : data.length % 4 === 1) return false;
  return BASE64.test(data);
}

/** Bytes per `btoa` call in the fallback: a multiple of 3, so chunks concatenate without padding. */
const BTOA_CHUNK = 0x8000 - (0x8000 % 3);

/** Standard padded base64 of some bytes. */
export function bytesToBase64(bytes: Uint8Array): string {
  if (NativeBuffer !== undefined) {
    return NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  }
  return portableBytesToBase64(bytes);
}

/** {@link bytesToBase64} without `Buffer`: `btoa` over byte-string chunks. */
export function portableBytesToBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += BTOA_CHUNK) {
    out += btoa(String.fromCharCode.apply(null, bytes.subarray(i, i + BTOA_CHUNK) as unknown as number[]));
  }
  return out;
}

const encoder = new TextEncoder();

/**
 * Base64 of a string's UTF-8 bytes.
 * @example utf8ToBase64('hi') // 'aGk='
 */
export function utf8ToBase64(text: string): string {
  return bytesToBase64(encoder.encode(text));
}

const UNSAFE_NAME_CHARS = /[^A-Za-z0-9._-]+/g;
const MAX_NAME_LENGTH = 64;

/**
 * A file name a host can store as it is: the last segment of `name` after any `/` or `\\`, reduced
 * to `[A-Za-z0-9._-]` (every other run becomes `_`), without leading dots or underscores, at most
 * 64 characters with its extension kept. `undefined` when nothing is left. Hosts that follow the
 * Tool Output Contract persist `returned_file_names` as given: `../../.bashrc`, `/etc/cron.d/x`
 * or a NUL must never reach one.
 * @example safeFileName('../../../home/u/.bashrc') // 'bashrc'
 * @example safeFileName('report 2026.pdf') // 'report_2026.pdf'
 */
export function safeFileName(name: string): string | undefined {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const safe = base.replace(UNSAFE_NAME_CHARS, '_').replace(/^[._]+/, '');
  if (safe === '') return undefined;
  if (safe.length <= MAX_NAME_LENGTH) return safe;
  const dot = safe.lastIndexOf('.');
  const ext = dot > 0 && safe.length - dot <= 16 ? safe.slice(dot) : '';
  return safe.slice(0, MAX_NAME_LENGTH - ext.length) + ext;
}

/**
 * A file name taken from a resource URI's last path segment, when that segment looks like a file
 * name (it has an extension: `notes.txt`, not `1`): percent-decoded, reduced to `[A-Za-z0-9._-]`,
 * at most 64 characters. `undefined` otherwise (`data:` URIs, `test://static/resource/1`).
 * @example fileNameFromUri('file:///tmp/docs/notes.txt') // 'notes.txt'
 */
export function fileNameFromUri(uri: string | undefined): string | undefined {
  if (uri === undefined || uri.startsWith('data:')) return undefined;
  const path = uri.replace(/[?#].*$/, '');
  const segment = path.slice(path.lastIndexOf('/') + 1);
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // A malformed escape: keep the raw segment, the sanitizer below makes it safe.
  }
  const safe = decoded.replace(UNSAFE_NAME_CHARS, '_').replace(/^[._]+/, '');
  const dot = safe.lastIndexOf('.');
  if (dot <= 0 || dot === safe.length - 1) return undefined;
  if (safe.length <= MAX_NAME_LENGTH) return safe;
  const ext = safe.slice(dot);
  return safe.slice(0, MAX_NAME_LENGTH - ext.length) + ext;
}

/** Gives the artifacts of one call their names (N4). Create one per call: it is stateful. */
export class ArtifactNamer {
  private readonly used = new Set<string>();
  private readonly counters = new Map<string, number>();

  /** `stem-N.ext` with N counting per stem from 1 (`image-1.png`, `image-2.png`), unique. */
  numbered(stem: string, extension: string): string {
    let n = (this.counters.get(stem) ?? 0) + 1;
    while (this.used.has(`${stem}-${n}.${extension}`)) n++;
    this.counters.set(stem, n);
    return this.claim(`${stem}-${n}.${extension}`);
  }

  /** `name` itself when still free, else `name-2.ext`, `name-3.ext`, ... */
  exact(name: string): string {
    if (!this.used.has(name)) return this.claim(name);
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    let n = 2;
    while (this.used.has(`${stem}-${n}${ext}`)) n++;
    return this.claim(`${stem}-${n}${ext}`);
  }

  private claim(name: string): string {
    this.used.add(name);
    return name;
  }
}

/** The value that replaces an oversized one (N9). */
export interface SpilledValue {
  readonly truncated: true;
  /** Name of the JSON artifact holding the whole value. */
  readonly file: string;
  /** Size of the value's JSON in UTF-8 bytes. */
  readonly bytes: number;
  /** How many items the list that was cut holds (the value, or its largest list field). */
  readonly items?: number;
  /** How many of them {@link SpilledValue.preview} shows, from the first. */
  readonly shown?: number;
  /**
   * The value with its list cut to its first {@link SpilledValue.shown} items, whole items only
   * (at most {@link PREVIEW_ROWS_CHARS} characters of JSON, and half of `max_inline_bytes`); a
   * value with no such list, or whose first item alone is larger: the first
   * {@link PREVIEW_CHARS} characters of its JSON.
   */
  readonly preview: unknown;
  /** What the model can do: where the whole value is, and how to ask for less. */
  readonly advice: string;
}

/** The start of `text`, never splitting a surrogate pair. */
function previewOf(text: string): string {
  if (text.length <= PREVIEW_CHARS) return text;
  const last = text.charCodeAt(PREVIEW_CHARS - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? PREVIEW_CHARS - 1 : PREVIEW_CHARS;
  return text.slice(0, end);
}

/**
 * N9: when the value's JSON is larger than `maxInlineBytes`, returns the JSON artifact and the
 * {@link SpilledValue} that replaces the value; otherwise `undefined`. `bound` is an upper bound
 * on the JSON's size known by the caller (e.g. from the text it was parsed from): when it is
 * within the limit, the value is not serialized at all. `knownJson` is the value's JSON when the
 * caller already has it (the text block it was parsed from): it is measured and spilled as it is,
 * so a 1 MB JSON-in-text result is parsed once and never serialized again.
 */
export function spillIfTooLarge(
  value: unknown,
  maxInlineBytes: number,
  namer: ArtifactNamer,
  bound?: number,
  knownJson?: string,
): { value: SpilledValue; file: FileArtifact } | undefined {
  if (bound !== undefined && bound <= maxInlineBytes) return undefined;
  // Scalars small by construction (null, booleans, numbers) never reach the limit in practice,
  // but the check is cheap and keeps the rule exact for absurd limits.
  const json = knownJson ?? safeStringify(value);
  if (!utf8ExceedsLimit(json, maxInlineBytes)) return undefined;
  const name = namer.exact(SPILL_FILE_NAME);
  const encoded = encoder.encode(json);
  return {
    // One UTF-8 encoding gives both the size and the file's bytes.
    value: spilledValue(
      value,
      json,
      name,
      encoded.length,
      Math.min(PREVIEW_ROWS_CHARS, Math.floor(maxInlineBytes / 2)),
    ),
    file: { name, mimeType: 'application/json', kind: 'json', base64: bytesToBase64(encoded) },
  };
}

/**
 * The list a large value is made of: the value itself, or its top-level array field with the
 * most items (a query's `{rows: [...], count}`); undefined when it has none.
 */
function listOf(value: unknown): { items: readonly unknown[]; key?: string } | undefined {
  if (Array.isArray(value)) return { items: value };
  if (typeof value !== 'object' || value === null) return undefined;
  let best: { items: readonly unknown[]; key: string } | undefined;
  for (const [key, field] of Object.entries(value)) {
    if (Array.isArray(field) && field.length > (best?.items.length ?? 1)) best = { items: field, key };
  }
  return best;
}

/**
 * N9: the stand-in of a value too large to inline. A list is cut at an item boundary: the
 * preview is the same value with its first items only, which the model reads as it reads the
 * whole (a cut inside the JSON text left it half a row to guess at), and the advice says how many
 * are missing and how to ask for fewer.
 */
function spilledValue(
  value: unknown,
  json: string,
  file: string,
  bytes: number,
  budget: number,
): SpilledValue {
  const list = listOf(value);
  if (list !== undefined) {
    // The fields beside the list stay; the items follow while the preview stays within bounds.
    const rest = list.key === undefined ? 2 : safeStringify({ ...(value as object), [list.key]: [] }).length;
    let size = rest;
    let shown = 0;
    for (const item of list.items) {
      size += safeStringify(item).length + 1;
      if (size > budget) break;
      shown++;
    }
    if (shown > 0) {
      const head = list.items.slice(0, shown);
      const preview = list.key === undefined ? head : { ...(value as object), [list.key]: head };
      const what = list.key === undefined ? 'items' : `items of "${list.key}"`;
      return {
        truncated: true,
        file,
        bytes,
        items: list.items.length,
        shown,
        preview,
        advice:
          `Only the first ${shown} of ${list.items.length} ${what} are shown; the whole result (${bytes} bytes) ` +
          `is in the file ${file}. To see others, ask for fewer (a filter, a limit, a page or an offset) ` +
          'instead of repeating the same request.',
      };
    }
  }
  return {
    truncated: true,
    file,
    bytes,
    preview: previewOf(json),
    advice:
      `The result (${bytes} bytes) is too large to show; preview is the start of its JSON and the whole ` +
      `result is in the file ${file}. Ask for a smaller part of it (a filter, fewer fields, a page) ` +
      'instead of repeating the same request.',
  };
}

/** Base64 shorter than this is left in place: too small to matter, and short strings collide. */
const MIN_MOVED_BASE64 = 64;
/** How deep {@link moveEmbeddedBase64} looks; deeper values are left as they are. */
const MAX_MOVE_DEPTH = 32;

/**
 * N4/F: some servers repeat a file's bytes inside their structured result (server-filesystem's
 * `read_media_file` puts the image block in `structuredContent` too). The file already travels
 * as an artifact, out of the model's prompt; a copy in the value would put the base64 right back
 * in. Every string in `value` that is exactly the base64 of one of `files` is replaced by
 * `[base64 moved to file <name>]`. Objects and arrays are copied only along changed paths.
 * Returns the names of the files whose base64 was found (empty when nothing changed).
 */
export function moveEmbeddedBase64(
  value: unknown,
  files: readonly FileArtifact[],
): { value: unknown; moved: string[] } {
  const byBase64 = new Map<string, string>();
  for (const file of files) {
    if (file.base64.length >= MIN_MOVED_BASE64 && !byBase64.has(file.base64)) {
      byBase64.set(file.base64, file.name);
    }
  }
  const moved = new Set<string>();
  if (byBase64.size === 0) return { value, moved: [] };

  const walk = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') {
      const name = node.length >= MIN_MOVED_BASE64 ? byBase64.get(node) : undefined;
      if (name === undefined) return node;
      moved.add(name);
      return `[base64 moved to file ${name}]`;
    }
    if (typeof node !== 'object' || node === null || depth >= MAX_MOVE_DEPTH) return node;
    if (Array.isArray(node)) {
      let copy: unknown[] | undefined;
      node.forEach((item, i) => {
        const next = walk(item, depth + 1);
        if (next !== item) (copy ??= node.slice())[i] = next;
      });
      return copy ?? node;
    }
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(node)) {
      const next = walk(item, depth + 1);
      if (next !== item) (copy ??= { ...(node as Record<string, unknown>) })[key] = next;
    }
    return copy ?? node;
  };
  const out = walk(value, 0);
  return { value: out, moved: [...moved] };
}
