/** I3, I6: one view per caller: what it lists, searches and may read, applied in one place. */
import { describe, expect, it } from 'vitest';
import { buildCatalog, type CatalogOptions } from '../../src/core/catalog.js';
import { compilePolicy, issuerPrincipal, LOCAL_PRINCIPAL } from '../../src/core/policy.js';
import { searchPairNames } from '../../src/core/search.js';
import { createViews } from '../../src/app/views.js';

const options: CatalogOptions = {
  separator: '_',
  nameMaxLength: 64,
  explicitDestructive: false,
  strictArguments: false,
  describeArguments: false,
  reserveSearchPair: true,
};
const tool = (name: string, readOnly = false): Record<string, unknown> => ({
  name,
  inputSchema: { type: 'object' },
  ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
});
const catalog = buildCatalog(
  [
    { server: 'fs', prefix: 'fs', tools: [tool('read', true), tool('write')] },
    { server: 'web', prefix: 'web', tools: [tool('fetch', true)] },
  ],
  options,
);
const pair = searchPairNames(options);
const alice = issuerPrincipal('https://idp', 'alice', { groups: [], scopes: [] });
const bob = issuerPrincipal('https://idp', 'bob', { groups: [], scopes: ['deploy'] });
const policy = compilePolicy([
  { principals: ['sub:alice'], allow: ['fs_*'], resources: ['file:///docs/**'] },
  { principals: ['sub:bob'], allow: ['*'], scopes: { 'web_*': 'web' } },
]);
const names = (tools: readonly { name: string }[]): string[] => tools.map((t) => t.name);

describe('views', () => {
  it('I3: a view without a policy or profile is everything, and nothing is private', () => {
    const views = createViews({});
    expect(views.personal).toBe(false);
    const view = views.of(alice, undefined);
    expect(view).toBeUndefined();
    expect(views.tools(view, catalog, pair)).toBe(catalog.definitions);
    expect(views.holds(view, 'web_fetch')).toBe(true);
    expect(() => views.refuse(view, 'prompt', 'anything')).not.toThrow();
  });

  it.each([
    ['alice', alice, ['fs_read', 'fs_write']],
    ['bob', bob, ['fs_read', 'fs_write', 'web_fetch']],
  ])('I3: %s lists what its rule allows', (_name, who, listed) => {
    const views = createViews({ policy });
    expect(names(views.tools(views.of(who, undefined), catalog, pair))).toEqual(listed);
  });

  it('I3: a principal no rule names sees nothing, not even the search pair, and is logged once', () => {
    const lines: unknown[] = [];
    const views = createViews({ policy, logger: { info: (fields: unknown) => void lines.push(fields) } });
    const mallory = issuerPrincipal('https://idp', 'mallory', { groups: [], scopes: [] });
    views.of(mallory, undefined);
    const view = views.of(mallory, undefined);
    views.of(alice, undefined);
    expect(views.tools(view, catalog, pair)).toEqual([]);
    expect(views.verdict(view, 'fs_read')).toEqual({ allowed: false, reason: 'no_rule' });
    expect(lines).toEqual([{ principal: 'https://idp#mallory' }]);
  });

  it('I6: a profile in search mode lists only the search pair, and searches every tool of its view', () => {
    const views = createViews({
      profiles: {
        agent: { tools: () => true, prompts: () => true, resources: () => false, expose: 'search' },
      },
    });
    const view = views.of(LOCAL_PRINCIPAL, 'agent');
    expect(names(views.tools(view, catalog, pair))).toEqual([pair.search, pair.call]);
    expect(views.searchScope(view)).toBe('all');
    expect(views.searchScope(undefined)).toBe('search');
  });

  it('I6: a profile in read_only mode lists its read-only tools; ofProfile ignores the rules', () => {
    const readOnly = (name: string): boolean => name !== 'fs_write';
    const views = createViews({
      policy,
      profiles: {
        ro: { tools: readOnly, prompts: () => false, resources: () => false, expose: 'read_only' },
      },
    });
    expect(names(views.tools(views.of(alice, 'ro'), catalog, pair))).toEqual(['fs_read']);
    expect(names(views.callable(views.ofProfile('ro'), catalog))).toEqual(['fs_read', 'web_fetch']);
  });

  it('I4: the step-up names the scope a caller lacks, and only when that is all it lacks', () => {
    const views = createViews({ policy });
    expect(views.missingScope(bob, 'web_fetch')).toBe('web');
    expect(views.missingScope(bob, 'fs_read')).toBeUndefined();
    expect(views.missingScope(alice, 'web_fetch')).toBeUndefined();
  });

  it('I3: hidden prompts and resources are left out of lists and refused as InvalidParams; file links pass', () => {
    const views = createViews({ policy });
    const view = views.of(alice, undefined);
    expect(views.resources(view, [{ uri: 'file:///docs/a.md' }, { uri: 'file:///etc/passwd' }])).toEqual([
      { uri: 'file:///docs/a.md' },
    ]);
    expect(views.templates(view, [{ uriTemplate: 'file:///etc/{name}' }])).toEqual([]);
    expect(() => views.refuse(view, 'resource', 'file:///etc/passwd')).toThrow(
      expect.objectContaining({ code: -32602, data: { uri: 'file:///etc/passwd', reason: 'access_denied' } }),
    );
    expect(() => views.refuse(view, 'resource', 'mcp-normalizer://files/abc')).not.toThrow();
    expect(() => views.refuse(view, 'resource', 'file:///docs/a.md')).not.toThrow();
  });
});
