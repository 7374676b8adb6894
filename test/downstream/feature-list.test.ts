/**
 * U5: a downstream's prompts, resources and templates are checked entry by entry; one malformed
 * entry is dropped with a reason and the rest are served (as T12 does for tools).
 */
import { describe, expect, it } from 'vitest';
import {
  checkEntries,
  listFeature,
  PROMPTS_LIST,
  RESOURCES_LIST,
  TEMPLATES_LIST,
} from '../../src/downstream/feature-list.js';

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
  ])('U5: %s is dropped with a reason, the rest kept', (_d, spec, entries, kept, droppedName) => {
    const checked = checkEntries(spec as typeof PROMPTS_LIST, entries);
    const key = spec === PROMPTS_LIST ? 'name' : spec === RESOURCES_LIST ? 'uri' : 'uriTemplate';
    const id = (entry: object): unknown => (entry as Record<string, unknown>)[key];
    expect(checked.entries.map(id)).toEqual(kept);
    expect(checked.dropped).toEqual([{ name: droppedName, reason: expect.any(String) }]);
  });

  it('U5: every page is listed; a downstream without the method has an empty list', async () => {
    const pages: Record<string, Record<string, unknown>> = {
      '': { prompts: [{ name: 'a' }], nextCursor: 'p2' },
      p2: { prompts: [{ name: 'b' }] },
    };
    const listed = await listFeature(
      PROMPTS_LIST,
      async (_m, params) => pages[String(params['cursor'] ?? '')]!,
    );
    expect(listed.entries.map((p) => p.name)).toEqual(['a', 'b']);
    const missing = await listFeature(RESOURCES_LIST, () =>
      Promise.reject(Object.assign(new Error('nope'), { code: -32601 })),
    );
    expect(missing).toEqual({ entries: [], dropped: [] });
    await expect(listFeature(RESOURCES_LIST, () => Promise.reject(new Error('broken')))).rejects.toThrow(
      'broken',
    );
  });
});
