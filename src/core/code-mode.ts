/**
 * M1–M5, code mode: a server or a profile with `expose: code` lists, instead of its tools, the
 * search pair and `run_code`, whose one argument is the body of an async function. Inside it each
 * tool the caller may use is `tools.<exposed name>(args)`; what it returns is the call's result.
 * This file holds what is pure about it: the tool's definition, its argument, the bounds of a
 * run, and the TypeScript declaration of a tool a search returns.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { isRecord } from './json.js';
import type { SearchPair } from './catalog-types.js';

/** M3: the bounds of one run (app/code/sandbox.ts enforces them). */
export const CODE_LIMITS = {
  /** Time spent executing the snippet; waits for its tools do not count. */
  cpuMs: 2_000,
  /** The whole run, its tools' calls included. */
  wallMs: 120_000,
  memoryBytes: 64 * 1024 * 1024,
  /** What the snippet returns and logs, as JSON. */
  outputBytes: 256 * 1024,
  maxCalls: 100,
  maxInFlight: 8,
} as const;

/** M1: the longest snippet. */
export const CODE_MAX_BYTES = 64 * 1024;

/** M1: `run_code`'s definition, when the pair names it. */
export function codeToolDefinitions(pair: SearchPair): Tool[] {
  if (pair.run === undefined) return [];
  return [
    {
      name: pair.run,
      title: 'Run code against the tools',
      description:
        `Run JavaScript: the body of an async function. Each tool is \`await tools.<name>(args)\` with the name and arguments ${pair.search} gives (its \`declaration\` types them); it returns the tool's result or throws its error (\`error_type\`, \`message\`, \`instruction\`). ` +
        `Call several tools, filter and join their results in code, and \`return\` only what matters; \`console.log\` lines come back too. ` +
        `No network, files or clock; at most ${CODE_LIMITS.maxCalls} tool calls (${CODE_LIMITS.maxInFlight} at once), ${CODE_LIMITS.cpuMs / 1000} s of CPU, ${CODE_LIMITS.memoryBytes / 1024 / 1024} MiB.`,
      inputSchema: {
        type: 'object',
        properties: {
          code: {
            type: 'string',
            minLength: 1,
            maxLength: CODE_MAX_BYTES,
            description:
              'The body of an async function, e.g. `const a = await tools.x({}); return a.items.length;`',
          },
        },
        required: ['code'],
        additionalProperties: false,
      },
      annotations: { openWorldHint: true },
    },
  ];
}

/** M1: `run_code`'s argument, read; or why it is not one. */
export function readCodeArguments(args: unknown): { readonly code: string } | { readonly issue: string } {
  const code = isRecord(args) ? args['code'] : undefined;
  if (typeof code !== 'string' || code.trim() === '')
    return { issue: 'code: expected the body of an async function, a non-empty string' };
  if (new TextEncoder().encode(code).length > CODE_MAX_BYTES)
    return { issue: `code: longer than ${CODE_MAX_BYTES} bytes` };
  if (isRecord(args) && Object.keys(args).some((key) => key !== 'code'))
    return { issue: 'only `code` is taken' };
  return { code };
}

/** How deep a schema is turned into a type before the rest is `unknown`. */
const MAX_TYPE_DEPTH = 6;

/** A property key as TypeScript writes it. */
function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** M5: a JSON Schema as a TypeScript type (objects, arrays, enums, unions, primitives). */
export function typeOfSchema(schema: unknown, depth = 0): string {
  if (!isRecord(schema) || depth > MAX_TYPE_DEPTH) return 'unknown';
  if (Array.isArray(schema['enum']))
    return schema['enum'].map((value) => JSON.stringify(value) ?? 'unknown').join(' | ') || 'never';
  if ('const' in schema) return JSON.stringify(schema['const']) ?? 'unknown';
  for (const union of ['anyOf', 'oneOf'] as const) {
    const options = schema[union];
    if (Array.isArray(options) && options.length > 0)
      return options.map((option) => typeOfSchema(option, depth + 1)).join(' | ');
  }
  const type = schema['type'];
  if (Array.isArray(type))
    return type.map((one) => typeOfSchema({ ...schema, type: one }, depth)).join(' | ');
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOfSchema(schema['items'], depth + 1)}>`;
    case 'object':
    case undefined: {
      const properties = isRecord(schema['properties']) ? schema['properties'] : undefined;
      if (properties === undefined) return type === 'object' ? 'Record<string, unknown>' : 'unknown';
      const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
      const fields = Object.entries(properties).map(
        ([name, property]) =>
          `${key(name)}${required.has(name) ? '' : '?'}: ${typeOfSchema(property, depth + 1)}`,
      );
      return fields.length === 0 ? '{}' : `{ ${fields.join('; ')} }`;
    }
    default:
      return 'unknown';
  }
}

/**
 * M5: how a snippet calls `name`: its declaration, typed by its input schema (as normalized and
 * pinned), and its result by the output schema the downstream declared (the structured result is
 * the value a call returns, N1), else `unknown`; it stands in a match for the input schema.
 */
export function declarationOf(name: string, inputSchema: unknown, outputSchema?: unknown): string {
  const member = /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
  const result = outputSchema === undefined ? 'unknown' : typeOfSchema(outputSchema);
  return `tools${member}(args: ${typeOfSchema(inputSchema)}): Promise<${result}>`;
}
