/**
 * F6 measured with a real tokenizer (gpt-tokenizer, o200k): `output.text: toon` is never more
 * tokens than the JSON text on any golden case, the corpus's tabular cases are at least a quarter
 * fewer in all, and a table of five rows or more is at least a quarter fewer. The table of figures is docs/performance-log.md (`npx tsx scripts/toon-tokens.ts`).
 */
import { describe, expect, it } from 'vitest';
import { measureGolden, measureTable } from '../helpers/toon-tokens.js';

describe('the TOON text block, in tokens', () => {
  it('F6: on every case of the golden corpus the text block is never more tokens than the JSON', () => {
    const larger = measureGolden().filter((m) => m.textTokens > m.jsonTokens);
    expect(larger).toEqual([]);
  });

  it("F6: on the golden corpus's tabular cases (real SQLite query results among them) the text is at least 25% fewer tokens in all", () => {
    const tabular = measureGolden().filter((m) => m.tabular);
    const sum = (key: 'jsonTokens' | 'textTokens'): number => tabular.reduce((total, m) => total + m[key], 0);
    expect(tabular.filter((m) => m.name.includes('-captured-sqlite-')).length).toBeGreaterThanOrEqual(4);
    expect(sum('textTokens')).toBeLessThanOrEqual(0.75 * sum('jsonTokens'));
  });

  it.each([5, 20, 100])('F6: a table of %i rows is at least 25%% fewer tokens than its JSON', (rows) => {
    const m = measureTable(rows);
    expect(m.toon).toBe(true);
    expect(m.textTokens).toBeLessThanOrEqual(0.75 * m.jsonTokens);
  });

  it("F6: a table of 2 rows stays JSON (the rule starts at 3 rows: the golden corpus's 2-row tables measured larger as TOON)", () => {
    const m = measureTable(2);
    expect(m.toon).toBe(false);
    expect(m.textTokens).toBe(m.jsonTokens);
  });
});
