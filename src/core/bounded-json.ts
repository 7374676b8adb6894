/**
 * Data the gateway reads back from where others can write (the shared store, the state folder, a
 * message from another replica) is untrusted: its size and depth are checked before it is parsed,
 * and a record past them is no record. Pure.
 *
 * Why before `JSON.parse`: parsing a 5,000-deep text succeeds, but every recursive walk after it
 * (a schema check, `JSON.stringify` itself past ~4,000 levels on Node 20) overflows the stack, so a
 * record nested that deep stopped every replica that read it (issue 55). The depth is counted on
 * the text, outside strings, without recursion.
 */

/** How large and how deep an untrusted record may be. */
export interface JsonBounds {
  /** UTF-16 length of the text (at most about three times as many bytes). */
  readonly maxChars: number;
  /** Objects and arrays nested in one another. */
  readonly maxDepth: number;
}

/** A remembered catalog or pins file: large (hundreds of tools), schemas nest. */
export const STATE_FILE_BOUNDS: JsonBounds = Object.freeze({ maxChars: 32 * 1024 * 1024, maxDepth: 256 });
/** A small record (a login, a task, a sign-in, a message between replicas). */
export const RECORD_BOUNDS: JsonBounds = Object.freeze({ maxChars: 1024 * 1024, maxDepth: 64 });

/** Whether JSON `text` nests objects and arrays deeper than `max` (strings skipped). */
export function jsonTextDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

/**
 * The value of JSON `text` when it is within `bounds`, else undefined (never throws).
 * @example parseBoundedJson('{"a":1}', RECORD_BOUNDS) // { a: 1 }
 * @example parseBoundedJson('['.repeat(5000) + ']'.repeat(5000), RECORD_BOUNDS) // undefined
 */
export function parseBoundedJson(text: string | undefined, bounds: JsonBounds): unknown {
  if (text === undefined || text.length > bounds.maxChars || jsonTextDeeperThan(text, bounds.maxDepth))
    return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
