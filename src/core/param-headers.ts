/**
 * SEP-2243 (protocol 2026-07-28, Streamable HTTP): a tool argument whose property in the
 * `inputSchema` carries `"x-mcp-header": "<Name>"` is mirrored into the HTTP header
 * `Mcp-Param-<Name>`, and a 2026 server rejects a `tools/call` whose body and headers disagree
 * (`-32020`), an absent header included. The SDK mirrors them only in `client.callTool`, which
 * the gateway does not use (P7: raw requests, lenient results), so the gateway computes them
 * here (E5). Pure: declarations are read once per listing, headers built per call.
 *
 * Value encoding (streamable-http.mdx, "Custom Headers from Tool Parameters"): strings as they
 * are when they are visible ASCII without leading or trailing whitespace, else
 * `=?base64?<UTF-8 base64>?=`; booleans `true`/`false`; numbers in decimal. A declaration the
 * spec forbids (not on a primitive property reached through `properties` alone) is not mirrored:
 * the downstream rejects such a tool definition itself.
 */

/** One mirrored argument: where it sits in the arguments, and the header's `<Name>`. */
export interface ParamHeader {
  readonly path: readonly string[];
  readonly name: string;
}

const HEADER_KEY = 'x-mcp-header';
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean']);
const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';

/**
 * The `x-mcp-header` declarations of a tool's `inputSchema`, through `properties` at any depth.
 * @example paramHeaderDeclarations({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } })
 * // [{ path: ['region'], name: 'Region' }]
 */
export function paramHeaderDeclarations(inputSchema: unknown): ParamHeader[] {
  const found: ParamHeader[] = [];
  const visit = (node: unknown, path: readonly string[]): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as Record<string, unknown>;
    const name = schema[HEADER_KEY];
    if (path.length > 0 && typeof name === 'string' && TOKEN.test(name)) {
      if (typeof schema['type'] === 'string' && PRIMITIVE.has(schema['type'])) found.push({ path, name });
    }
    const properties = schema['properties'];
    if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) return;
    for (const [key, child] of Object.entries(properties as Record<string, unknown>))
      visit(child, [...path, key]);
  };
  visit(inputSchema, []);
  return found;
}

/**
 * The `Mcp-Param-*` headers for one call's arguments; an absent, null or non-primitive value
 * sends no header.
 * @example paramHeaders([{ path: ['region'], name: 'Region' }], { region: 'eu-west' }) // { 'Mcp-Param-Region': 'eu-west' }
 */
export function paramHeaders(
  declarations: readonly ParamHeader[],
  args: Record<string, unknown>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { path, name } of declarations) {
    let value: unknown = args;
    for (const key of path) {
      value =
        value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
    const text = primitiveText(value);
    if (text !== undefined) headers[`Mcp-Param-${name}`] = encodeValue(text);
  }
  return headers;
}

function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

/** Visible ASCII (and interior spaces or tabs) passes as it is; anything else is base64. */
function encodeValue(text: string): string {
  const plain =
    text !== '' &&
    text === text.trim() &&
    !(text.startsWith(SENTINEL_START) && text.endsWith(SENTINEL_END)) &&
    /^[\t\x20-\x7e]*$/.test(text);
  if (plain) return text;
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `${SENTINEL_START}${btoa(binary)}${SENTINEL_END}`;
}
