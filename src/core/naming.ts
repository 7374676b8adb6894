/**
 * Exposed tool names (CONTRACT T1, T2): compose the prefixes and the tool name, replace every
 * character the major model APIs reject, and cut names that are too long so they end in a short
 * hash of the full name. Pure: the global prefix is passed in (reading `MCP_TOOL_PREFIX` is the
 * config's job).
 */

/** T2: what every exposed name matches (with the length bound from the options). */
export const EXPOSED_NAME_CHARS = /^[A-Za-z0-9_-]+$/;

/** T2: the default maximum length of an exposed name. */
export const DEFAULT_NAME_MAX_LENGTH = 64;

/** Length of the hash suffix that ends a cut name (base36 digits). */
export const NAME_HASH_LENGTH = 6;

/** The parts of an exposed name (T1). */
export interface ExposedNameParts {
  /**
   * Global prefix: config `prefix`, else the env var `MCP_TOOL_PREFIX`, else none. `undefined`
   * and `""` both mean none.
   * @example 'acme'
   */
  readonly globalPrefix?: string;
  /**
   * The server's prefix: its `prefix`, else its config key. `""` exposes the tool unprefixed.
   * @example 'fs'
   */
  readonly serverPrefix: string;
  /**
   * Put between the parts.
   * @default '_'
   */
  readonly separator: string;
  /** The tool's name after `rename` (T5). */
  readonly tool: string;
  /**
   * The longest name allowed (T2).
   * @default 64
   */
  readonly maxLength: number;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const HASH_MODULUS = 36 ** NAME_HASH_LENGTH;

/**
 * 32-bit FNV-1a over the UTF-8 bytes of `text` (the standard test vectors hold: `""` →
 * `0x811c9dc5`, `"a"` → `0xe40c292c`). Hand-written because core may not import `node:crypto`,
 * and a name hash needs stability, not secrecy.
 */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  const feed = (byte: number): void => {
    hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
  };
  for (const char of text) {
    const cp = char.codePointAt(0) ?? 0;
    if (cp < 0x80) feed(cp);
    else if (cp < 0x800) {
      feed(0xc0 | (cp >> 6));
      feed(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      feed(0xe0 | (cp >> 12));
      feed(0x80 | ((cp >> 6) & 0x3f));
      feed(0x80 | (cp & 0x3f));
    } else {
      feed(0xf0 | (cp >> 18));
      feed(0x80 | ((cp >> 12) & 0x3f));
      feed(0x80 | ((cp >> 6) & 0x3f));
      feed(0x80 | (cp & 0x3f));
    }
  }
  return hash >>> 0;
}

/**
 * T2: a short stable hash of `text`: {@link NAME_HASH_LENGTH} base36 characters (lower case
 * letters and digits, so always valid in a name).
 * @example shortHash('fs_read') // six characters, the same on every run and machine
 */
export function shortHash(text: string): string {
  return (fnv1a32(text) % HASH_MODULUS).toString(36).padStart(NAME_HASH_LENGTH, '0');
}

/**
 * T1: the parts joined by the separator, empty prefixes left out, nothing sanitized yet.
 * @example composeName({ globalPrefix: 'acme', serverPrefix: 'fs', separator: '_', tool: 'read', maxLength: 64 }) // 'acme_fs_read'
 */
export function composeName(parts: Omit<ExposedNameParts, 'maxLength'>): string {
  const pieces: string[] = [];
  if (parts.globalPrefix) pieces.push(parts.globalPrefix);
  if (parts.serverPrefix) pieces.push(parts.serverPrefix);
  pieces.push(parts.tool);
  return pieces.join(parts.separator);
}

/**
 * T2: every character outside `[A-Za-z0-9_-]` becomes `_`, one per code point (so an emoji is
 * one `_`, not two). Different names can sanitize to the same name (`a.b`, `a_b`): the catalog
 * reports those as collisions (T4).
 */
export function sanitizeName(name: string): string {
  let out = '';
  for (const char of name) out += /^[A-Za-z0-9_-]$/.test(char) ? char : '_';
  return out;
}

/**
 * T1 + T2: the exposed name of a tool. Always matches `^[A-Za-z0-9_-]{1,maxLength}$`. A name
 * longer than `maxLength` is cut and ends in `_` + a hash of the FULL unsanitized name, so two
 * long names that differ only after the cut, or only in characters that sanitizing merges,
 * still get different names.
 * @example exposedName({ serverPrefix: 'files', separator: '_', tool: 'read.text', maxLength: 64 }) // 'files_read_text'
 */
export function exposedName(parts: ExposedNameParts): string {
  const maxLength = Math.max(1, Math.floor(parts.maxLength));
  const full = composeName(parts);
  const clean = sanitizeName(full);
  if (clean.length > 0 && clean.length <= maxLength) return clean;
  const hash = shortHash(full);
  // Too short to hold "<cut>_<hash>": the hash alone (cut to fit) is the most distinctive name.
  if (maxLength <= NAME_HASH_LENGTH + 1) return hash.slice(0, maxLength);
  if (clean.length === 0) return hash;
  return `${clean.slice(0, maxLength - NAME_HASH_LENGTH - 1)}_${hash}`;
}

/** The most characters of a name an agent sent that any output repeats (logs, spans, answers). */
export const ECHOED_NAME_CHARS = 128;

/**
 * A name an agent sent, cut for repeating it anywhere: an unknown name is unbounded input (one
 * 1 MB name made a 1 MB span name and 5 MB of log).
 * @example echoedName('x'.repeat(1000)) // 'xxx…(128 of 1000 characters)'
 */
export function echoedName(name: string): string {
  if (name.length <= ECHOED_NAME_CHARS) return name;
  return `${name.slice(0, ECHOED_NAME_CHARS)}…(${ECHOED_NAME_CHARS} of ${name.length} characters)`;
}
