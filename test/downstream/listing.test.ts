/**
 * U5: a downstream's prompts, resources and templates are checked entry by entry; one malformed
 * entry is dropped with a reason and the rest are served (T12 does the same for tools, in the
 * catalog). The one listing machine (listing.ts) reads every kind.
 */
import { describe, expect, it } from 'vitest';
import {
  PROMPTS_LIST,
  readList,
  RESOURCES_LIST,
  TEMPLATES_LIST,
  TOOLS_LIST,
  type ListKind,
} from '../../src/downstream/listing.js';

describe('feature lists', () => {
  it.each([
    ['a prompt without a name', PROMPTS_LIST, [{ description: 'x' }, { name: 'ok' }], ['ok'], '#0'],
    [
      'a prompt whose arguments is not an array',
      PROMPTS_LIST,
      [{ name: 'bad', arguments: 'x' }, { name: 'ok' }],
      ['ok'],
      'bad',
    ],
    ['a resource without a uri', RESOURCES_LIST, [{ name: 'n' }, { uri: 'a:1', name: 'a' }], ['a:1'], '#0'],
    [
      'a duplicate resource uri',
      RESOURCES_LIST,
      [
        { uri: 'a:1', name: 'a' },
        { uri: 'a:1', name: 'b' },
      ],
      ['a:1'],
      'a:1',
    ],
    [
      'a template that is not an object',
      TEMPLATES_LIST,
      [7, { uriTemplate: 'a:{x}', name: 't' }],
      ['a:{x}'],
      '#0',
    ],
  ])('U5: %s is dropped with a reason, the rest kept', (_d, kind, entries, kept, droppedName) => {
    const checked = (kind as ListKind).check(entries);
    const key = kind === PROMPTS_LIST ? 'name' : kind === RESOURCES_LIST ? 'uri' : 'uriTemplate';
    const id = (entry: unknown): unknown => (entry as Record<string, unknown>)[key];
    expect(checked.entries.map(id)).toEqual(kept);
    expect(checked.dropped).toEqual([{ name: droppedName, reason: expect.any(String) }]);
  });

  it("T12: tools pass whole (every per-tool verdict is the catalog's)", () => {
    const entries = [42, { name: 'x' }, { name: 'x' }];
    expect(TOOLS_LIST.check(entries)).toEqual({ entries, dropped: [] });
  });

  it('U5: every page is listed; a downstream without the method has an empty list, a tool list is a failure', async () => {
    const pages: Record<string, Record<string, unknown>> = {
      '': { prompts: [{ name: 'a' }], nextCursor: 'p2' },
      p2: { prompts: [{ name: 'b' }] },
    };
    const listed = await readList(PROMPTS_LIST, async (_m, params) => pages[String(params['cursor'] ?? '')]!);
    expect(listed.entries.map((p) => (p as { name: string }).name)).toEqual(['a', 'b']);
    const notFound = () => Promise.reject(Object.assign(new Error('Method not found'), { code: -32601 }));
    await expect(readList(RESOURCES_LIST, notFound)).resolves.toEqual({ entries: [], dropped: [] });
    await expect(readList(TOOLS_LIST, notFound)).rejects.toThrow('Method not found');
  });
});
