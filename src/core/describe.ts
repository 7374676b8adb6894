/**
 * `describe_arguments` (CONTRACT T6): a short markdown list of a tool's arguments, built from its
 * inputSchema and appended to its description, for hosts and models that read descriptions more
 * carefully than schemas. Bounded: long descriptions are cut and a long list ends in "…and N more".
 */
import { isRecord } from './json.js';

/** Options of {@link describeArguments}. */
export interface DescribeOptions {
  /**
   * The longest list returned, in characters (lines are never cut in the middle).
   * @default 1500
   */
  readonly maxLength?: number;
  /**
   * The longest description of one argument, in characters.
   * @default 120
   */
  readonly maxDescription?: number;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** A short type label: `string`, `integer | null`, `array of string`, `one of "a", "b"`. */
function typeLabel(schema: Record<string, unknown>): string {
  if ('const' in schema) return `constant ${JSON.stringify(schema['const'])}`;
  if (Array.isArray(schema['enum'])) {
    const values = schema['enum'].slice(0, 6).map((v) => JSON.stringify(v));
    return `one of ${values.join(', ')}${schema['enum'].length > 6 ? ', …' : ''}`;
  }
  const type = schema['type'];
  const base = Array.isArray(type) ? type.filter((t) => typeof t === 'string').join(' | ') : type;
  if (base === 'array' && isRecord(schema['items'])) return `array of ${typeLabel(schema['items'])}`;
  if (typeof base === 'string' && base) return base;
  if (typeof schema['$ref'] === 'string') return 'see schema';
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const members = schema[keyword];
    if (Array.isArray(members)) return members.filter(isRecord).map(typeLabel).join(' | ') || 'any';
  }
  return 'any';
}

function lines(schema: Record<string, unknown>, depth: number, maxDescription: number): string[] {
  const properties = isRecord(schema['properties']) ? schema['properties'] : {};
  const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
  const out: string[] = [];
  const indent = '  '.repeat(depth);
  for (const [name, raw] of Object.entries(properties)) {
    const property = isRecord(raw) ? raw : {};
    const tags = [typeLabel(property)];
    if (required.has(name)) tags.push('required');
    const description =
      typeof property['description'] === 'string' && property['description'].trim()
        ? `: ${oneLine(property['description'], maxDescription)}`
        : '';
    out.push(`${indent}- \`${name}\` (${tags.join(', ')})${description}`);
    // Nested objects one level deep: enough to show a parameter object's shape, no deeper.
    if (depth === 0 && isRecord(property['properties'])) out.push(...lines(property, 1, maxDescription));
  }
  return out;
}

/**
 * T6: the arguments of `inputSchema` as a markdown list (name, type, required, description;
 * nested objects one level deep), or `""` when the schema declares no properties.
 * @example describeArguments({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] })
 * // '- `path` (string, required)'
 */
export function describeArguments(inputSchema: unknown, options: DescribeOptions = {}): string {
  if (!isRecord(inputSchema)) return '';
  const maxLength = options.maxLength ?? 1500;
  const all = lines(inputSchema, 0, options.maxDescription ?? 120);
  const kept: string[] = [];
  let length = 0;
  for (const [index, line] of all.entries()) {
    const more = `…and ${all.length - index} more (see the input schema)`;
    const reserve = index < all.length - 1 ? more.length + 1 : 0;
    if (length + line.length + 1 + reserve > maxLength) {
      kept.push(more);
      break;
    }
    kept.push(line);
    length += line.length + 1;
  }
  return kept.join('\n');
}
