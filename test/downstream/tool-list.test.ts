import { describe, expect, it } from 'vitest';
import { listAllEntries, MAX_LIST_PAGES, stableJson } from '../../src/downstream/tool-list.js';

/** Every page of `tools/list` through `fetchPage`. */
const listAllPages = (fetchPage: (cursor: string | undefined) => Promise<Record<string, unknown>>) =>
  listAllEntries('tools/list', 'tools', fetchPage);

describe('list helpers', () => {
  it('T10: stableJson ignores key order and undefined keys but not array order', () => {
    expect(stableJson({ b: 1, a: { d: [1, 2], c: null } })).toBe(
      stableJson({ a: { c: null, d: [1, 2] }, b: 1 }),
    );
    expect(stableJson({ a: 1, u: undefined })).toBe(stableJson({ a: 1 }));
    expect(stableJson([1, 2])).not.toBe(stableJson([2, 1]));
    expect(stableJson([{ name: 'a' }])).not.toBe(stableJson([{ name: 'a', title: 'A' }]));
  });

  it('P4: listAllPages follows every cursor and concatenates the pages', async () => {
    const pages: Record<string, { tools: unknown; nextCursor?: string }> = {
      start: { tools: [1, 2], nextCursor: 'p2' },
      p2: { tools: [3], nextCursor: 'p3' },
      p3: { tools: [4] },
    };
    const seen: (string | undefined)[] = [];
    const entries = await listAllPages(async (cursor) => {
      seen.push(cursor);
      return pages[cursor ?? 'start']!;
    });
    expect(entries).toEqual([1, 2, 3, 4]);
    expect(seen).toEqual([undefined, 'p2', 'p3']);
  });

  it.each([
    ['a page without a tools array', async () => ({ tools: 'nope' }), /has no "tools" array/],
    ['a cursor that repeats', async () => ({ tools: [], nextCursor: 'same' }), /cursor "same" twice/],
  ])('P4: listAllPages rejects %s with a clear message', async (_d, fetchPage, message) => {
    await expect(listAllPages(fetchPage)).rejects.toThrow(message);
  });

  it('P4: listAllPages stops after MAX_LIST_PAGES distinct pages', async () => {
    let n = 0;
    await expect(listAllPages(async () => ({ tools: [], nextCursor: String(n++) }))).rejects.toThrow(
      `more than ${MAX_LIST_PAGES} pages`,
    );
    expect(n).toBe(MAX_LIST_PAGES);
  });
});
