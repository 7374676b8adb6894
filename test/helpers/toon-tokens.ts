/**
 * F6 measured: tokens of the text block as JSON and as the renderer writes it with
 * `output.text: toon`, over the golden corpus (fixtures/results, the `results` envelope of each
 * case) and over tables of a growing number of rows, with a real tokenizer (gpt-tokenizer, the
 * o200k encoding of GPT-4o-class models). Used by test/upstream/toon.test.ts and by
 * scripts/toon-tokens.ts (the table in docs/performance-log.md).
 */
import { encode as tokens } from 'gpt-tokenizer';
import { normalizeCallToolResult } from '../../src/core/normalize.js';
import { ok } from '../../src/core/result.js';
import { renderCallToolResult } from '../../src/upstream/render.js';
import { readCorpus } from './golden.js';

/** One measured text block. */
export interface Measured {
  readonly name: string;
  /** An array of two or more objects with the same keys somewhere in it. */
  readonly tabular: boolean;
  readonly jsonTokens: number;
  readonly textTokens: number;
  readonly toon: boolean;
}

function isTabular(value: unknown): boolean {
  if (Array.isArray(value)) {
    const objects = value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item));
    if (value.length >= 2 && objects) {
      const keys = JSON.stringify(Object.keys(value[0] as object).sort());
      if (value.every((item) => JSON.stringify(Object.keys(item as object).sort()) === keys)) return true;
    }
    return value.some(isTabular);
  }
  return typeof value === 'object' && value !== null && Object.values(value).some(isTabular);
}

/** Every golden case (its input normalized, as the golden test does), measured in format `results`. */
export function measureGolden(): Measured[] {
  return readCorpus().map((entry) => {
    const result = normalizeCallToolResult(entry.data.input, {
      maxInlineBytes: 65536,
      inbandErrors: true,
      ...entry.data.options,
    });
    const text = (mode: 'json' | 'toon'): string => {
      const first = renderCallToolResult(result, { format: 'results', media: 'artifacts', text: mode })
        .content[0];
      return first?.type === 'text' ? first.text : '';
    };
    const json = text('json');
    const chosen = text('toon');
    return {
      name: entry.file.replace(/\.json$/, ''),
      tabular: isTabular(JSON.parse(json)),
      jsonTokens: tokens(json).length,
      textTokens: tokens(chosen).length,
      toon: chosen !== json,
    };
  });
}

/** A table of `rows` user records as a tool result, measured. */
export function measureTable(rows: number): Measured {
  const value = Array.from({ length: rows }, (_, i) => ({
    id: i + 1,
    name: `user${i}`,
    email: `user${i}@example.com`,
    active: i % 2 === 0,
    score: (i * 7) % 100,
  }));
  const rendered = (text: 'json' | 'toon'): string => {
    const first = renderCallToolResult(
      ok(value, { meta: { server: 'db', tool: 'list_users', source: 'structured', elapsedMs: 12 } }),
      {
        format: 'results',
        media: 'artifacts',
        text,
      },
    ).content[0];
    return first?.type === 'text' ? first.text : '';
  };
  const json = rendered('json');
  const text = rendered('toon');
  return {
    name: `${rows} rows`,
    tabular: true,
    jsonTokens: tokens(json).length,
    textTokens: tokens(text).length,
    toon: text !== json,
  };
}
