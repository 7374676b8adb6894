/**
 * The golden corpus (fixtures/results) as the renderer's tests and the recording script read it:
 * each case's input normalized with the case's options, then rendered in every output format.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonExact } from '../../src/core/exact-json.js';
import { normalizeCallToolResult, type NormalizeOptions } from '../../src/core/normalize.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../../src/upstream/envelope-schema.js';
import { renderCallToolResult } from '../../src/upstream/render.js';

export const CORPUS_DIR = join(import.meta.dirname, '../../fixtures/results');

/** One corpus file, as far as rendering is concerned. */
export interface GoldenCase {
  readonly file: string;
  readonly data: {
    readonly rule: string;
    readonly input: unknown;
    readonly options?: Partial<NormalizeOptions>;
    readonly envelopes?: Partial<Record<OutputFormat, unknown>>;
    readonly [key: string]: unknown;
  };
}

/**
 * One corpus file as the downstream transports read a message (N13): a number a double cannot
 * carry is kept as a string of its digits, so a case's structuredContent reaches the normalizer
 * as it would from the wire.
 */
export function readCorpusFile(path: string): unknown {
  const parsed = parseJsonExact(readFileSync(path, 'utf8'));
  if (!parsed.ok) throw new Error(`${path} is not JSON`);
  return parsed.value;
}

export function readCorpus(): GoldenCase[] {
  return readdirSync(CORPUS_DIR)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      data: readCorpusFile(join(CORPUS_DIR, file)) as GoldenCase['data'],
    }));
}

/** The envelope (structuredContent) of every format for one case, with media as artifacts. */
export function renderEnvelopes(entry: GoldenCase): Record<OutputFormat, unknown> {
  const result = normalizeCallToolResult(entry.data.input, {
    maxInlineBytes: 65536,
    inbandErrors: true,
    ...entry.data.options,
  });
  const out = {} as Record<OutputFormat, unknown>;
  for (const format of OUTPUT_FORMATS) {
    out[format] = renderCallToolResult(result, { format, media: 'artifacts' }).structuredContent;
  }
  return out;
}
