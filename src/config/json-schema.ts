/**
 * ConfigSchema → config/schema.json (C1): the JSON Schema editors use to complete and check a
 * config file (`# yaml-language-server: $schema=...`). Generated, never edited by hand;
 * test/config/schema-fresh.test.ts fails when the committed file is stale.
 */
import { z } from 'zod';
import { ConfigSchema } from './schema.js';

/** Where the generated file lives, relative to the repository root. */
export const CONFIG_SCHEMA_PATH = 'config/schema.json';

/**
 * The config's JSON Schema. `io: 'input'` describes what a user may WRITE, so keys with
 * defaults are optional; draft-07 because it is the dialect every YAML/JSON editor supports.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigSchema, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  return { ...schema, title: 'mcp-normalizer configuration' };
}

/** The file's exact text: two-space JSON and a final newline (prettier's formatting of it). */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
