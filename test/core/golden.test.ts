/**
 * The golden corpus (fixtures/results): every file is one raw CallToolResult and the Result it
 * must normalize to, written by hand from CONTRACT.md (N1–N11), or captured from a real reference
 * server (`<rule>-captured-*.json`, see scripts/capture-real-results.ts).
 *
 * Compared exactly, except what is not part of the contract's observable outcome: `exception`
 * (a live object), `mediaBlocks` (the original blocks by reference), `meta.diagnostics` (log
 * text) and `meta.elapsedMs` (timing). `envelopes` (rendered forms, added by the renderer's
 * tests) and `captured` (provenance) are ignored here.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { normalizeCallToolResult } from '../../src/core/normalize.js';
import { readCorpusFile } from '../helpers/golden.js';
import type { Result } from '../../src/core/result.js';

const CORPUS_DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'results');
const RULE_IDS = ['N1', 'N2', 'N3', 'N4', 'N5', 'N6', 'N7', 'N8', 'N9', 'N10', 'N11', 'N13'] as const;

const FileSchema = z.strictObject({
  name: z.string(),
  mimeType: z.string(),
  kind: z.enum(['image', 'audio', 'blob', 'text', 'json']),
  base64: z.string(),
  uri: z.string().optional(),
});

const MetaSchema = z.strictObject({
  source: z.enum(['structured', 'text_json', 'text', 'empty', 'passthrough', 'proxy']),
  warnings: z.array(z.string()),
  resourceLinks: z.array(z.record(z.string(), z.unknown())),
  convention: z.enum(['result', 'response', 'tool_result']).optional(),
  downstreamMeta: z.record(z.string(), z.unknown()).optional(),
  notes: z.array(z.string()).optional(),
  server: z.string().optional(),
  tool: z.string().optional(),
});

/** One corpus file. */
const CorpusCaseSchema = z.strictObject({
  description: z.string().min(10),
  rule: z.enum(RULE_IDS),
  options: z
    .strictObject({
      maxInlineBytes: z.number().int().nonnegative().optional(),
      inbandErrors: z.boolean().optional(),
      server: z.string().optional(),
      tool: z.string().optional(),
    })
    .optional(),
  captured: z
    .strictObject({ package: z.string(), version: z.string(), tool: z.string().optional() })
    .optional(),
  input: z.unknown(),
  expected: z.union([
    z.strictObject({
      success: z.literal(true),
      value: z.unknown(),
      message: z.string().optional(),
      instruction: z.string().optional(),
      meta: MetaSchema,
      files: z.array(FileSchema),
    }),
    z.strictObject({
      success: z.literal(false),
      error: z.string(),
      errorType: z.string(),
      errorCode: z.string().optional(),
      errorData: z.record(z.string(), z.unknown()).optional(),
      message: z.string().optional(),
      instruction: z.string().optional(),
      meta: MetaSchema,
      files: z.array(FileSchema),
    }),
  ]),
  // Rendered envelopes per output format; checked by the renderer's tests, not here.
  envelopes: z.record(z.string(), z.unknown()).optional(),
});

/** The Result as the corpus states it: without exception, mediaBlocks, diagnostics, elapsedMs. */
function observable(result: Result): unknown {
  const { mediaBlocks: _media, original: _original, ...rest } = result;
  const { diagnostics: _diagnostics, elapsedMs: _elapsed, ...meta } = result.meta;
  const out: Record<string, unknown> = { ...rest, meta };
  delete out['exception'];
  return JSON.parse(JSON.stringify(out));
}

const files = readdirSync(CORPUS_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();

const cases = files.map((file) => {
  const parsed = CorpusCaseSchema.safeParse(readCorpusFile(join(CORPUS_DIR, file)));
  return { file, parsed };
});

describe('golden corpus (fixtures/results)', () => {
  it('N1–N11: the corpus has at least 28 hand-made cases and covers every N-rule', () => {
    const handMade = cases.filter(({ file }) => !file.includes('-captured-'));
    expect(handMade.length).toBeGreaterThanOrEqual(28);
    const rules = new Set(cases.map(({ parsed }) => (parsed.success ? parsed.data.rule : undefined)));
    for (const rule of RULE_IDS) expect(rules, `no corpus case for ${rule}`).toContain(rule);
  });

  // Test names cite the case's rule: `N2: N2-structured-wins-over-disagreeing-text.json`.
  it.each(
    cases.map(({ file, parsed }) => [parsed.success ? parsed.data.rule : 'N10', file, parsed] as const),
  )('%s: %s', (_rule, file, parsed) => {
    expect(parsed.error?.issues ?? [], `${file} does not match the corpus schema`).toEqual([]);
    if (!parsed.success) return;
    const { rule, options, input, expected, description } = parsed.data;
    // A captured case's expected Result is drafted by the script; a person checks it against the
    // contract and rewrites the description before the case counts.
    expect(description.startsWith('UNREVIEWED'), `${file} has not been reviewed`).toBe(false);
    // The file name states the rule the case shows.
    expect(file.startsWith(`${rule}-`), `${file} is not named after ${rule}`).toBe(true);
    const result = normalizeCallToolResult(input, { maxInlineBytes: 65536, inbandErrors: true, ...options });
    expect(observable(result)).toStrictEqual(expected);
  });
});
