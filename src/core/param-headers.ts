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
 * `=?base64?<UTF-8 base64>?=`; booleans `true`/`false`; numbers in decimal. A tool with a
 * declaration the spec forbids is withheld from the catalog ({@link paramHeaderProblem}).
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

/** SEP-2243: the property types a declaration may sit on (`number` is explicitly not one). */
const DECLARABLE = new Set(['string', 'integer', 'boolean']);

/**
 * Keywords whose subschemas are not reached through `properties` alone: a declaration under one
 * of them makes the tool invalid. The values of the last four are `name → subschema` objects.
 */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
] as const;
const NAMED_SUBSCHEMAS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** A schema node that carries `x-mcp-header`, where the walk of {@link annotations} met it. */
interface Annotation {
  readonly path: readonly string[];
  /** Reached from the root through `properties` alone. */
  readonly reachable: boolean;
  readonly name: unknown;
  readonly type: unknown;
}

/**
 * Every node of `inputSchema` that carries `x-mcp-header`, in walk order: each node, then its
 * `properties`, then the subschemas of {@link UNREACHABLE} (everything under those unreachable).
 */
function annotations(inputSchema: unknown): Annotation[] {
  const found: Annotation[] = [];
  const visit = (node: unknown, path: readonly string[], reachable: boolean): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as Record<string, unknown>;
    if (HEADER_KEY in schema) found.push({ path, reachable, name: schema[HEADER_KEY], type: schema['type'] });
    const properties = schema['properties'];
    if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const [key, child] of Object.entries(properties as Record<string, unknown>))
        visit(child, [...path, key], reachable);
    }
    for (const keyword of UNREACHABLE) {
      const sub = schema[keyword];
      if (sub === undefined || sub === null || typeof sub !== 'object') continue;
      const branches = Array.isArray(sub) ? sub : NAMED_SUBSCHEMAS.has(keyword) ? Object.values(sub) : [sub];
      for (const branch of branches) visit(branch, [...path, `<${keyword}>`], false);
    }
  };
  visit(inputSchema, [], true);
  return found;
}

/**
 * The `x-mcp-header` declarations of a tool's `inputSchema`, through `properties` at any depth.
 * @example paramHeaderDeclarations({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } })
 * // [{ path: ['region'], name: 'Region' }]
 */
export function paramHeaderDeclarations(inputSchema: unknown): ParamHeader[] {
  const found: ParamHeader[] = [];
  for (const { path, reachable, name, type } of annotations(inputSchema)) {
    if (!reachable || path.length === 0 || typeof name !== 'string' || !TOKEN.test(name)) continue;
    if (typeof type === 'string' && PRIMITIVE.has(type)) found.push({ path, name });
  }
  return found;
}

/**
 * SEP-2243: why a tool's `x-mcp-header` declarations make it one a client must not use, or
 * undefined when they are valid. Each is a header-name token on a string, integer or boolean
 * property reached from the root through `properties` alone, and no two of a tool name the same
 * header (case-insensitively). The rules are the SDK client's (`scanXMcpHeaderDeclarations`,
 * not exported), checked the same way by the conformance suite.
 * @example paramHeaderProblem({ properties: { a: { type: 'number', 'x-mcp-header': 'A' } } }) // 'its x-mcp-header "A" on /a is on a number property, not a string, integer or boolean one (SEP-2243: ...)'
 */
export function paramHeaderProblem(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  for (const annotation of annotations(inputSchema)) {
    const problem = annotationProblem(annotation, seen);
    if (problem !== undefined) return `${problem} (SEP-2243: a client must not use such a tool)`;
  }
  return undefined;
}

/** What is wrong with one declaration, given the names of the valid ones before it (`seen`). */
function annotationProblem(
  { path, reachable, name, type }: Annotation,
  seen: Map<string, string>,
): string | undefined {
  const at = `/${path.join('/')}`;
  if (!reachable || path.length === 0)
    return `its x-mcp-header on ${at} is not on a property reached through properties alone`;
  if (typeof name !== 'string' || name === '') return `its x-mcp-header on ${at} is empty or not a string`;
  if (!TOKEN.test(name)) return `its x-mcp-header ${JSON.stringify(name)} on ${at} is not a header name`;
  const typed = typeof type === 'string' ? type : 'untyped';
  if (!DECLARABLE.has(typed))
    return `its x-mcp-header ${JSON.stringify(name)} on ${at} is on a ${typed} property, not a string, integer or boolean one`;
  const earlier = seen.get(name.toLowerCase());
  if (earlier !== undefined)
    return `its x-mcp-header ${JSON.stringify(name)} on ${at} repeats the one on ${earlier}`;
  seen.set(name.toLowerCase(), at);
  return undefined;
}

/**
 * SEP-2243 ("a null value sends no header"): the declared parameters whose `null` means absent,
 * those their parent's `required` does not list. The gateway drops such a `null` before it checks
 * the arguments (T8), so a host may send one, as the conformance suite's `sep-2243-client-omit-null` does.
 * @example nullableParamPaths({ properties: { verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' } } }) // [['verbose']]
 */
export function nullableParamPaths(inputSchema: unknown): string[][] {
  const paths: string[][] = [];
  for (const { path } of paramHeaderDeclarations(inputSchema)) {
    let parent: unknown = inputSchema;
    for (const key of path.slice(0, -1))
      parent = ((parent as Record<string, unknown>)['properties'] as Record<string, unknown>)[key];
    const required = (parent as Record<string, unknown>)['required'];
    if (!(Array.isArray(required) && required.includes(path[path.length - 1]))) paths.push([...path]);
  }
  return paths;
}

/** `args` without a `null` at any of `paths` (copied only where one is dropped). */
export function withoutNullParams(
  args: Record<string, unknown>,
  paths: readonly (readonly string[])[],
): Record<string, unknown> {
  let out = args;
  for (const path of paths) out = dropNull(out, path);
  return out;
}

function dropNull(node: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [key, ...rest] = path;
  if (key === undefined || !Object.hasOwn(node, key)) return node;
  const value = node[key];
  if (rest.length === 0) {
    if (value !== null) return node;
    const { [key]: _dropped, ...kept } = node;
    return kept;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return node;
  const inner = dropNull(value as Record<string, unknown>, rest);
  return inner === value ? node : { ...node, [key]: inner };
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
