/**
 * C1: config/schema.json is generated from the zod ConfigSchema and committed; it must match a
 * fresh generation, document every key, and agree with the zod schema on what is valid.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CONFIG_SCHEMA_PATH, configJsonSchema, configJsonSchemaText } from '../../src/config/json-schema.js';
import { interpolate } from '../../src/config/interpolate.js';

const root = path.resolve(import.meta.dirname, '../..');
const committed = readFileSync(path.join(root, CONFIG_SCHEMA_PATH), 'utf8');

/** Every `properties` entry of the schema, with its JSON pointer-ish path. */
function properties(node: unknown, at: string, out: { at: string; schema: Record<string, unknown> }[]): void {
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  const props = record['properties'];
  if (props !== null && typeof props === 'object') {
    for (const [key, value] of Object.entries(props)) {
      out.push({ at: `${at}.${key}`, schema: value as Record<string, unknown> });
      properties(value, `${at}.${key}`, out);
    }
  }
  for (const key of ['additionalProperties', 'items']) properties(record[key], `${at}.${key}`, out);
  for (const key of ['anyOf', 'oneOf']) {
    const list = record[key];
    if (Array.isArray(list)) list.forEach((item, index) => properties(item, `${at}.${key}[${index}]`, out));
  }
  const definitions = record['definitions'];
  if (definitions !== null && typeof definitions === 'object') {
    for (const [name, value] of Object.entries(definitions)) properties(value, `#/definitions/${name}`, out);
  }
}

describe('config/schema.json', () => {
  it('C1: the committed file equals a fresh generation', () => {
    expect(committed, 'config/schema.json is stale: run `npm run schema` and commit the result').toBe(
      configJsonSchemaText(),
    );
  });

  it('C1: every key is described', () => {
    const found: { at: string; schema: Record<string, unknown> }[] = [];
    properties(configJsonSchema(), '', found);
    expect(found.length).toBeGreaterThan(50);
    const undescribed = found.filter((p) => typeof p.schema['description'] !== 'string').map((p) => p.at);
    expect(undescribed).toEqual([]);
  });

  it('C1: a servers_dir file can point its editor at the server definition', () => {
    const definitions = configJsonSchema()['definitions'] as Record<string, { properties?: object }>;
    expect(Object.keys(definitions['server']?.properties ?? {})).toEqual(
      expect.arrayContaining(['command', 'url']),
    );
  });

  it('C1, C6: an editor validating with the JSON Schema accepts the C6 example and flags a typo', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(configJsonSchema());
    const text = readFileSync(path.join(root, 'fixtures/configs/valid/contract-c6.yaml'), 'utf8');
    const tree = interpolate(parse(text), { REMOTE_TOKEN: 't0ken', HOME: '/home/test' }).value;
    expect(validate(tree), JSON.stringify(validate.errors)).toBe(true);
    const typo = { ...(tree as Record<string, unknown>), log_levl: 'debug' };
    expect(validate(typo)).toBe(false);
  });
});
