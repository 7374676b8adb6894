/**
 * Content blocks → text parts, file artifacts and resource links (N3–N5). The blocks come from a
 * downstream and are treated as untrusted JSON: every field is checked before it is used, and a
 * malformed block becomes a warning, never an exception.
 */
import type { Diagnostic, FileArtifact, ResourceLink, ResultSource } from './result.js';
import {
  isJsonObject,
  parsedJsonBytesBound,
  stringJsonBytesBound,
  tryParseJson,
  type JsonObject,
  type JsonParse,
} from './json.js';
import type { OutputContract } from './inband.js';
import {
  ArtifactNamer,
  extensionForMime,
  fileNameFromUri,
  isValidBase64,
  kindForMime,
  mimeForFileName,
  safeFileName,
  utf8ToBase64,
} from './artifacts.js';

/** Warning codes raised while reading content blocks. */
export const CONTENT_WARNINGS = {
  invalidBase64: 'invalid_base64',
  malformedBlock: 'malformed_content_block',
  unknownBlock: 'unknown_content_block',
  missingFileContent: 'missing_file_content',
  unsafeFileName: 'unsafe_file_name',
} as const;

/** Collects warning codes (deduplicated, in order) and the diagnostics behind them. */
export class WarningSink {
  readonly warnings: string[] = [];
  readonly diagnostics: Diagnostic[] = [];

  add(code: string, message: string): void {
    if (!this.warnings.includes(code)) this.warnings.push(code);
    this.diagnostics.push({ code, message });
  }
}

/** What {@link scanContent} found in a `content` array. */
export interface ContentScan {
  /** The `text` of every text block, in order. */
  readonly texts: string[];
  readonly files: FileArtifact[];
  readonly links: ResourceLink[];
  /** The original non-text blocks that were kept (by reference), for `output.media: passthrough`. */
  readonly mediaBlocks: unknown[];
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function readLink(block: JsonObject): ResourceLink | undefined {
  const uri = block['uri'];
  if (typeof uri !== 'string') return undefined;
  const link: { -readonly [K in keyof ResourceLink]: ResourceLink[K] } = { uri };
  const name = optionalString(block['name']);
  const title = optionalString(block['title']);
  const description = optionalString(block['description']);
  const mimeType = optionalString(block['mimeType']);
  if (name !== undefined) link.name = name;
  if (title !== undefined) link.title = title;
  if (description !== undefined) link.description = description;
  if (mimeType !== undefined) link.mimeType = mimeType;
  return link;
}

/**
 * Reads every block of `content`. Text blocks give `texts`; image and audio blocks and embedded
 * resources give file artifacts named by `namer` (N4); resource_link blocks give links (N4).
 * Unknown block types, blocks missing a required field and invalid base64 (F5) are dropped with a
 * warning in `sink`: they would also fail the SDK's own result validation if re-emitted.
 */
export function scanContent(
  content: readonly unknown[],
  namer: ArtifactNamer,
  sink: WarningSink,
): ContentScan {
  const scan: ContentScan = { texts: [], files: [], links: [], mediaBlocks: [] };
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    const type = isJsonObject(block) ? block['type'] : undefined;
    if (!isJsonObject(block) || typeof type !== 'string') {
      sink.add(
        CONTENT_WARNINGS.malformedBlock,
        `content[${i}] is not a content block (no string "type"); dropped`,
      );
      continue;
    }
    switch (type) {
      case 'text': {
        const text = block['text'];
        if (typeof text === 'string') scan.texts.push(text);
        else sink.add(CONTENT_WARNINGS.malformedBlock, `content[${i}] (text) has no string "text"; dropped`);
        break;
      }
      case 'image':
      case 'audio': {
        // N4: image-1.png, audio-1.wav; F5: invalid base64 is a warning and the block is dropped.
        const data = block['data'];
        const mimeType = optionalString(block['mimeType']) ?? 'application/octet-stream';
        if (!isValidBase64(data)) {
          sink.add(
            CONTENT_WARNINGS.invalidBase64,
            `content[${i}] (${type}) "data" is not valid base64; dropped`,
          );
          break;
        }
        const name = namer.numbered(type, extensionForMime(mimeType));
        scan.files.push({ name, mimeType, kind: type, base64: data });
        scan.mediaBlocks.push(block);
        break;
      }
      case 'resource': {
        const file = readEmbedded(block['resource'], i, namer, sink);
        if (file !== undefined) {
          scan.files.push(file);
          scan.mediaBlocks.push(block);
        }
        break;
      }
      case 'resource_link': {
        const link = readLink(block);
        if (link === undefined) {
          sink.add(
            CONTENT_WARNINGS.malformedBlock,
            `content[${i}] (resource_link) has no string "uri"; dropped`,
          );
          break;
        }
        scan.links.push(link);
        scan.mediaBlocks.push(block);
        break;
      }
      default:
        sink.add(
          CONTENT_WARNINGS.unknownBlock,
          `content[${i}] has unknown type ${JSON.stringify(type)}; dropped`,
        );
    }
  }
  return scan;
}

/** N4: an embedded resource (text or blob) → a file artifact, or a warning. */
function readEmbedded(
  resource: unknown,
  index: number,
  namer: ArtifactNamer,
  sink: WarningSink,
): FileArtifact | undefined {
  if (!isJsonObject(resource)) {
    sink.add(
      CONTENT_WARNINGS.malformedBlock,
      `content[${index}] (resource) has no "resource" object; dropped`,
    );
    return undefined;
  }
  const uri = optionalString(resource['uri']);
  const text = resource['text'];
  const blob = resource['blob'];
  const isText = typeof text === 'string';
  if (!isText && blob === undefined) {
    sink.add(
      CONTENT_WARNINGS.malformedBlock,
      `content[${index}] (resource) has neither "text" nor "blob"; dropped`,
    );
    return undefined;
  }
  if (!isText && !isValidBase64(blob)) {
    sink.add(
      CONTENT_WARNINGS.invalidBase64,
      `content[${index}] (resource) "blob" is not valid base64; dropped`,
    );
    return undefined;
  }
  const mimeType =
    optionalString(resource['mimeType']) ?? (isText ? 'text/plain' : 'application/octet-stream');
  const fromUri = fileNameFromUri(uri);
  const name =
    fromUri !== undefined ? namer.exact(fromUri) : namer.numbered('resource', extensionForMime(mimeType));
  const file: { -readonly [K in keyof FileArtifact]: FileArtifact[K] } = {
    name,
    mimeType,
    kind: isText ? 'text' : 'blob',
    base64: isText ? utf8ToBase64(text) : (blob as string),
  };
  if (uri !== undefined) file.uri = uri;
  return file;
}

const NONE: readonly string[] = Object.freeze([]);

/** A value read from text blocks (N3), with an upper bound on its JSON size for N9. */
export interface TextValue {
  readonly value: unknown;
  readonly source: Extract<ResultSource, 'text_json' | 'text'>;
  /** Upper bound on the UTF-8 size of the value's compact JSON. */
  readonly bound: number;
  /**
   * The downstream's own JSON text of the value, when the value is the parse of one text block:
   * N9 then spills that text as it is instead of serializing a large value again.
   */
  readonly json?: string;
  /** N13: number tokens of the texts kept as strings (a double could not carry their digits). */
  readonly inexact: readonly string[];
  /** N3, N11: the prose blocks beside the JSON block(s) that became the value, in order. */
  readonly notes: readonly string[];
}

/**
 * N3: one text block → its JSON parse if it parses (`text_json`), else the string (`text`).
 * Several → an array of their parses if every block parses (`text_json`); else, when some
 * blocks are JSON objects or arrays and the others prose, the JSON block is the value (several:
 * the array of them) and the prose blocks are notes (N11), so that a JSON payload beside a page of
 * text reaches the model as JSON, not escaped inside one long string (pdf-reader-mcp's
 * `read_pdf`); else (prose only) the texts joined by a newline (`text`). `parses` carries parses
 * already made (index-aligned with `texts`) so that no text is parsed twice.
 */
export function valueFromTexts(texts: readonly string[], parses: (JsonParse | undefined)[] = []): TextValue {
  if (texts.length === 1) {
    const text = texts[0] ?? '';
    const parsed = parses[0] ?? tryParseJson(text);
    parses[0] = parsed;
    return parsed.ok
      ? {
          value: parsed.value,
          source: 'text_json',
          bound: parsedJsonBytesBound(text.length),
          json: text,
          inexact: parsed.inexact,
          notes: NONE,
        }
      : { value: text, source: 'text', bound: stringJsonBytesBound(text), inexact: NONE, notes: NONE };
  }
  let every = true;
  for (let i = 0; i < texts.length; i++) {
    const parsed = parses[i] ?? tryParseJson(texts[i] ?? '');
    parses[i] = parsed;
    if (!parsed.ok) every = false;
  }
  const values: unknown[] = [];
  const inexact: string[] = [];
  const notes: string[] = [];
  let bound = 2;
  let json: string | undefined;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i] ?? '';
    const parsed = parses[i] as JsonParse;
    // Mixed with prose, only an object or an array counts as the JSON block: `42` or `true`
    // beside prose is prose.
    if (parsed.ok && (every || (typeof parsed.value === 'object' && parsed.value !== null))) {
      values.push(parsed.value);
      inexact.push(...parsed.inexact);
      bound += parsedJsonBytesBound(text.length) + 1;
      json = text;
    } else {
      notes.push(text);
    }
  }
  if (values.length === 0) {
    const joined = texts.join('\n');
    return { value: joined, source: 'text', bound: stringJsonBytesBound(joined), inexact: NONE, notes: NONE };
  }
  if (values.length === 1 && !every) {
    const text = json ?? '';
    return {
      value: values[0],
      source: 'text_json',
      bound: parsedJsonBytesBound(text.length),
      json: text,
      inexact,
      notes,
    };
  }
  return { value: values, source: 'text_json', bound, inexact, notes };
}

/** N6: the returned files of an output-contract payload → artifacts (names kept, deduplicated). */
export function returnedFiles(
  contract: OutputContract,
  namer: ArtifactNamer,
  sink: WarningSink,
  files: FileArtifact[],
): void {
  const names = contract.returned_file_names ?? [];
  const contents = contract.returned_file_contents ?? [];
  const count = Math.max(names.length, contents.length);
  for (let i = 0; i < count; i++) {
    const entry = contents[i];
    if (entry === undefined) {
      sink.add(CONTENT_WARNINGS.missingFileContent, `returned_file_names[${i}] has no content; dropped`);
      continue;
    }
    const base64 = typeof entry === 'string' ? entry : entry.b64;
    if (!isValidBase64(base64)) {
      sink.add(CONTENT_WARNINGS.invalidBase64, `returned_file_contents[${i}] is not valid base64; dropped`);
      continue;
    }
    const given = names[i] ?? (typeof entry === 'string' ? undefined : entry.name);
    const safe = given === undefined ? undefined : safeFileName(given);
    const name = safe !== undefined ? namer.exact(safe) : namer.numbered('file', 'bin');
    const mimeType = mimeForFileName(name);
    // A repeated safe name only gets its `-2` (N4); a name made safe is reported with its original.
    const renamed = given !== undefined && given !== '' && safe !== given;
    if (renamed) {
      sink.add(
        CONTENT_WARNINGS.unsafeFileName,
        `returned_file_names[${i}] ${JSON.stringify(given)} is not a safe file name; returned as ${name}`,
      );
    }
    files.push({
      name,
      mimeType,
      kind: kindForMime(mimeType),
      base64,
      ...(renamed ? { originalName: given } : {}),
    });
  }
}
