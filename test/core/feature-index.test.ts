/**
 * The prompt and resource index (U5, with T1/T2/T3/T4 for prompt names): exposed names, URI
 * namespacing and its reverse rule, collisions withheld and reported, `prefix: ""`.
 */
import type { Prompt, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { buildFeatureIndex, diffFeatureIndexes } from '../../src/core/feature-index.js';
import type { FeatureServerInput } from '../../src/core/feature-index.js';
import {
  namespaceUri,
  splitNamespacedUri,
  templateLiteral,
  uriPrefix,
} from '../../src/core/uri-namespace.js';

const OPTIONS = { separator: '_', nameMaxLength: 64 };

function server(
  name: string,
  prefix: string,
  lists: Partial<Omit<FeatureServerInput, 'server' | 'prefix'>>,
): FeatureServerInput {
  return { server: name, prefix, prompts: [], resources: [], resourceTemplates: [], ...lists };
}
const prompt = (name: string): Prompt => ({ name, description: `prompt ${name}` });
const resource = (uri: string): Resource => ({ uri, name: uri });
const template = (uriTemplate: string): ResourceTemplate => ({ uriTemplate, name: uriTemplate });

describe('URI namespacing', () => {
  it.each([
    ['server prefix alone', undefined, 'fs', 'fs'],
    ['global and server prefix joined by a dot', 'acme', 'fs', 'acme.fs'],
    ['underscores become dashes (not valid in a scheme)', undefined, 'my_fs', 'my-fs'],
    ['upper case is lowered (schemes are case-insensitive)', undefined, 'Docs', 'docs'],
    ['a leading digit gets an x (a scheme starts with a letter)', undefined, '9lives', 'x9lives'],
    ['prefix "" and no global prefix: none', undefined, '', ''],
    ['prefix "" with a global prefix: the global one', 'acme', '', 'acme'],
  ])('U5: uriPrefix: %s', (_d, global, prefix, expected) => {
    expect(uriPrefix(global, prefix)).toBe(expected);
  });

  it.each([
    ['file:///notes/a.md'],
    ['https://example.com/a?b=c#d'],
    ['urn:isbn:0451450523'],
    ['data:text/plain;base64,SGk='],
    ['git+ssh://host/repo'],
    ['notes://note/{name}'],
  ])('U5: namespacing %s round-trips through the reverse rule, the URI verbatim', (uri) => {
    const exposed = namespaceUri('my-fs', uri);
    expect(exposed).toBe(`my-fs+${uri}`);
    expect(exposed).toMatch(/^[A-Za-z][A-Za-z0-9+.-]*:/); // still an RFC 3986 scheme
    expect(splitNamespacedUri(exposed)).toEqual({ prefix: 'my-fs', uri });
  });

  it.each([
    ['no plus', 'file:///a', undefined],
    ['a plus after the scheme', 'file:///a+b', undefined],
    ['upper-case prefix looked up lower-cased', 'FS+file:///a', { prefix: 'fs', uri: 'file:///a' }],
  ])('U5: splitNamespacedUri: %s', (_d, uri, expected) => {
    expect(splitNamespacedUri(uri)).toEqual(expected);
  });

  it('U5: namespaceUri with prefix "" leaves the URI unchanged; templateLiteral stops at the first brace', () => {
    expect(namespaceUri('', 'file:///a')).toBe('file:///a');
    expect(templateLiteral('file:///logs/{name}/{part}')).toBe('file:///logs/');
    expect(templateLiteral('file:///fixed')).toBe('file:///fixed');
  });
});

describe('feature index', () => {
  it('U5/T1/T2: prompt names are exposed names (prefix, separator, sanitized) and route by table lookup (T3)', () => {
    const index = buildFeatureIndex(
      [server('fs', 'files', { prompts: [prompt('summarize'), prompt('read.note')] })],
      { ...OPTIONS, globalPrefix: 'acme' },
    );
    expect(index.prompts.map((p) => p.definition.name)).toEqual([
      'acme_files_summarize',
      'acme_files_read_note',
    ]);
    expect(index.getPrompt('acme_files_read_note')).toMatchObject({ server: 'fs', original: 'read.note' });
    expect(index.prompts[0]?.definition.description).toBe('prompt summarize');
    expect(index.getPrompt('files_summarize')).toBeUndefined();
    expect(index.suggestPrompts('acme_files_sumarize')[0]).toBe('acme_files_summarize');
  });

  it('U5: resources and templates are namespaced; listed URIs and expanded templates route back', () => {
    const index = buildFeatureIndex(
      [
        server('notes', 'notes', {
          resources: [resource('notes://readme')],
          resourceTemplates: [template('notes://note/{name}')],
        }),
        server('my_fs', 'my_fs', { resources: [resource('file:///a')] }),
      ],
      OPTIONS,
    );
    expect(index.resources.map((r) => r.definition.uri)).toEqual(['notes+notes://readme', 'my-fs+file:///a']);
    expect(index.resourceTemplates.map((t) => t.definition.uriTemplate)).toEqual([
      'notes+notes://note/{name}',
    ]);
    expect(index.resolveUri('notes+notes://readme')).toEqual({ server: 'notes', uri: 'notes://readme' });
    expect(index.resolveUri('notes+notes://note/alpha')).toEqual({
      server: 'notes',
      uri: 'notes://note/alpha',
    });
    expect(index.resolveUri('MY-FS+file:///b')).toEqual({ server: 'my_fs', uri: 'file:///b' });
    expect(index.resolveUri('notes://readme')).toBeUndefined();
    expect(index.resolveUri('other+notes://readme')).toBeUndefined();
    expect(index.getTemplate('notes+notes://note/{name}')).toMatchObject({
      server: 'notes',
      original: 'notes://note/{name}',
    });
    expect(index.suggestUris('notes+notes://readm')[0]).toBe('notes+notes://readme');
  });

  it('U5: a server with prefix "" keeps its prompt names and URIs unchanged; its template reads route by the longest literal start', () => {
    const index = buildFeatureIndex(
      [
        server('a', '', {
          prompts: [prompt('hello')],
          resources: [resource('file:///readme')],
          resourceTemplates: [template('file:///{path}')],
        }),
        server('b', '', { resourceTemplates: [template('file:///logs/{name}')] }),
      ],
      OPTIONS,
    );
    expect(index.prompts[0]?.definition.name).toBe('hello');
    expect(index.resources[0]?.definition.uri).toBe('file:///readme');
    expect(index.resolveUri('file:///readme')).toEqual({ server: 'a', uri: 'file:///readme' });
    expect(index.resolveUri('file:///logs/today')).toEqual({ server: 'b', uri: 'file:///logs/today' });
    expect(index.resolveUri('file:///other')).toEqual({ server: 'a', uri: 'file:///other' });
  });

  it.each([
    [
      'two unprefixed servers with the same prompt',
      [server('a', '', { prompts: [prompt('hello')] }), server('b', '', { prompts: [prompt('hello')] })],
      'prompt',
      'hello',
    ],
    [
      'two unprefixed servers with the same resource URI',
      [
        server('a', '', { resources: [resource('file:///x')] }),
        server('b', '', { resources: [resource('file:///x')] }),
      ],
      'resource',
      'file:///x',
    ],
    [
      'two unprefixed servers with the same template',
      [
        server('a', '', { resourceTemplates: [template('file:///{p}')] }),
        server('b', '', { resourceTemplates: [template('file:///{p}')] }),
      ],
      'resource_template',
      'file:///{p}',
    ],
    [
      'server a_b tool/prompt c against server a prompt b_c',
      [server('a', 'a', { prompts: [prompt('b_c')] }), server('a_b', 'a_b', { prompts: [prompt('c')] })],
      'prompt',
      'a_b_c',
    ],
    [
      'two prefixes that give the same URI prefix',
      [
        server('x', 'my_fs', { resources: [resource('file:///1')] }),
        server('y', 'my-fs', { resources: [resource('file:///2')] }),
      ],
      'uri_prefix',
      'my-fs',
    ],
  ])('U5/T4: %s: the later one is withheld and reported, never shadowing', (_d, inputs, kind, name) => {
    const index = buildFeatureIndex(inputs, OPTIONS);
    expect(index.problems).toHaveLength(1);
    expect(index.problems[0]).toMatchObject({
      severity: 'error',
      code: 'collision',
      kind,
      name,
      keptBy: { server: inputs[0]!.server },
    });
    expect(index.problems[0]?.server).toBe(inputs[1]!.server);
    const served = [...index.prompts, ...index.resources, ...index.resourceTemplates].map((r) => r.server);
    expect(served).not.toContain(inputs[1]!.server);
  });

  it('U5: the diff says which upstream list changed, and nothing for an identical rebuild', () => {
    const before = buildFeatureIndex(
      [server('s', 's', { prompts: [prompt('p')], resources: [resource('x:1')] })],
      OPTIONS,
    );
    const same = buildFeatureIndex(
      [server('s', 's', { prompts: [prompt('p')], resources: [resource('x:1')] })],
      OPTIONS,
    );
    const morePrompts = buildFeatureIndex(
      [server('s', 's', { prompts: [prompt('p'), prompt('q')], resources: [resource('x:1')] })],
      OPTIONS,
    );
    const newTemplate = buildFeatureIndex(
      [
        server('s', 's', {
          prompts: [prompt('p')],
          resources: [resource('x:1')],
          resourceTemplates: [template('x:{a}')],
        }),
      ],
      OPTIONS,
    );
    expect(diffFeatureIndexes(before, same)).toEqual({ prompts: false, resources: false });
    expect(diffFeatureIndexes(before, morePrompts)).toEqual({ prompts: true, resources: false });
    expect(diffFeatureIndexes(before, newTemplate)).toEqual({ prompts: false, resources: true });
  });
});

describe('MCP Apps UI resources (U6)', () => {
  it('U6: a ui:// resource stays a ui:// URI with the prefix as its first segment, and reads route back', () => {
    const index = buildFeatureIndex(
      [
        server('pdf', 'pdf', { resources: [resource('ui://pdf-viewer/mcp-app.html')] }),
        server('maps', 'maps', { resourceTemplates: [template('ui://maps/{view}.html')] }),
      ],
      { ...OPTIONS, globalPrefix: 'acme' },
    );
    expect(index.resources.map((r) => r.definition.uri)).toEqual(['ui://acme.pdf/pdf-viewer/mcp-app.html']);
    expect(index.resourceTemplates.map((t) => t.definition.uriTemplate)).toEqual([
      'ui://acme.maps/maps/{view}.html',
    ]);
    expect(index.resolveUri('ui://acme.pdf/pdf-viewer/mcp-app.html')).toEqual({
      server: 'pdf',
      uri: 'ui://pdf-viewer/mcp-app.html',
    });
    expect(index.resolveUri('UI://acme.maps/maps/world.html')).toEqual({
      server: 'maps',
      uri: 'ui://maps/world.html',
    });
    expect(index.resolveUri('ui://nobody/x.html')).toBeUndefined();
  });
});

describe('skill resources (X1)', () => {
  it('X1: a skill:// resource stays a skill:// URI with the prefix as its first segment, and reads route back', () => {
    const index = buildFeatureIndex(
      [server('docs', 'docs', { resources: [resource('skill://release-notes/SKILL.md')] })],
      OPTIONS,
    );
    expect(index.resources.map((r) => r.definition.uri)).toEqual(['skill://docs/release-notes/SKILL.md']);
    expect(index.resolveUri('skill://docs/release-notes/references/GUIDE.md')).toEqual({
      server: 'docs',
      uri: 'skill://release-notes/references/GUIDE.md',
    });
    expect(index.resolveUri('skill://nobody/x/SKILL.md')).toBeUndefined();
  });
});

describe('listings in their own namespace', () => {
  it('U8, X7: resources are listed and routed in their canonical form; a prefix-"" server’s URI under another server’s prefix is withheld', () => {
    const index = buildFeatureIndex(
      [
        server('notes', 'notes', {
          resources: [resource('NOTES://a/../b%7e.md'), resource('skill://x/SKILL.md')],
        }),
        server('bare', '', {
          resources: [
            resource('notes+notes://b.md'),
            resource('SKILL://notes/s/SKILL.md'),
            resource('plain://c'),
          ],
        }),
      ],
      OPTIONS,
    );
    expect(index.resources.map((route) => route.exposed)).toEqual([
      'notes+notes://a/b~.md',
      'skill://notes/x/SKILL.md',
      'plain://c',
    ]);
    expect(index.resolveUri('notes+notes://a/b~.md')).toEqual({
      server: 'notes',
      uri: 'NOTES://a/../b%7e.md',
    });
    expect(index.problems.map((problem) => [problem.code, problem.server, problem.item])).toEqual([
      ['outside_namespace', 'bare', 'notes+notes://b.md'],
      ['outside_namespace', 'bare', 'SKILL://notes/s/SKILL.md'],
    ]);
  });
});
