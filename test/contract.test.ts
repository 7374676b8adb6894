/**
 * Every rule in docs/contract.md is cited by at least one test name, and every cited id exists.
 * Test names are the first string of an `it`/`test`/`describe` call (including `.each(...)(...)`)
 * that starts with one or more rule ids: `it('N2: ...')`, `it.each(rows)('T9/C5: ...')`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const contract = readFileSync(join(root, 'docs/contract.md'), 'utf8');

/** Rule ids as the contract defines them: list items starting with a bold id, e.g. `- **N2**`. */
const ruleIds = [...contract.matchAll(/^- \*\*([A-Z]\d+)\*\*/gm)].map((m) => m[1] as string);
const notBuiltSection = contract.split(/^## Not built$/m)[1] ?? '';
const notBuilt = new Set([...notBuiltSection.matchAll(/^- ([A-Z]\d+)\b/gm)].map((m) => m[1] as string));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

// The opening of a test name: `it(`, `test(`, `describe(`, or the second call of `.each(...)(`,
// never `.skip(` / `.todo(` (a skipped test proves nothing).
const NAME =
  /(?:\b(?:it|test|describe)(?:\.only)?|\))\s*\(\s*(['"`])((?:[A-Z]\d{1,2}[a-z]?\s*[/,&+]\s*)*[A-Z]\d{1,2})\b/g;

const citations = new Map<string, string[]>();
for (const file of testFiles(join(root, 'test'))) {
  const source = readFileSync(file, 'utf8');
  for (const match of source.matchAll(NAME)) {
    for (const id of (match[2] ?? '').split(/\s*[/,&+]\s*/)) {
      const list = citations.get(id) ?? [];
      list.push(relative(root, file));
      citations.set(id, list);
    }
  }
}

describe('the contract is covered by tests', () => {
  it('docs/contract.md lists the rule families R, N, T, S, F, L, C, P, U, E, O, Q, I, D, K, X and M', () => {
    const families = new Set(ruleIds.map((id) => id[0]));
    expect([...families].sort()).toEqual([
      'C',
      'D',
      'E',
      'F',
      'I',
      'K',
      'L',
      'M',
      'N',
      'O',
      'P',
      'Q',
      'R',
      'S',
      'T',
      'U',
      'X',
    ]);
    expect(ruleIds.length).toBeGreaterThanOrEqual(50);
  });

  const built = ruleIds.filter((id) => !notBuilt.has(id));
  it.each(built)('%s is cited by at least one test name', (id) => {
    expect(citations.get(id), `no test name cites ${id}: name a test "${id}: ..."`).toBeDefined();
  });

  it('every id a test cites is a rule of the contract, and none is marked not built', () => {
    const known = new Set(ruleIds);
    const unknown = [...citations.keys()].filter((id) => !known.has(id));
    expect(unknown, `tests cite ids that docs/contract.md does not define`).toEqual([]);
    const stale = [...citations.keys()].filter((id) => notBuilt.has(id));
    expect(stale, 'tests cite rules listed under "Not built": update the list').toEqual([]);
  });
});
