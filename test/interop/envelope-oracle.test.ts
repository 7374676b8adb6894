/**
 * The interop oracle must be able to fail: a correct envelope (written by hand from
 * docs/output-formats.md, not produced by the product) passes, and every way of losing part of
 * the raw result is caught. Without this, a lenient oracle would make the interop suite a test
 * that cannot fail.
 */
import { describe, expect, it } from 'vitest';
import type { ProxiedResult, RawResult } from './envelope-oracle.js';
import { assertEnvelopeCarries, createMask } from './envelope-oracle.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const BLOB = Buffer.from('Resource 2: a blob created at 6:45:07 AM').toString('base64');

/** Renders an envelope the way docs/output-formats.md describes it (format results, artifacts). */
function proxied(envelope: Record<string, unknown>, message?: string): ProxiedResult {
  const { returned_file_contents: _bodies, ...visible } = envelope;
  const meta = envelope['meta_data'] as Record<string, unknown>;
  return {
    content: [
      { type: 'text', text: JSON.stringify(visible) },
      ...(message !== undefined
        ? [{ type: 'text', text: message, annotations: { audience: ['user'] } }]
        : []),
    ],
    structuredContent: envelope,
    isError: meta['is_error'] === true,
  };
}

const mixedRaw: RawResult = {
  content: [
    { type: 'text', text: 'Here you are:' },
    { type: 'image', data: PNG, mimeType: 'image/png' },
    {
      type: 'resource',
      resource: { uri: 'demo://resource/dynamic/text/1', mimeType: 'text/plain', text: 'one' },
    },
    {
      type: 'resource',
      resource: { uri: 'demo://resource/session/a.txt.gz', mimeType: 'application/gzip', blob: BLOB },
    },
    {
      type: 'resource_link',
      uri: 'demo://x/2',
      name: 'Blob 2',
      description: 'a blob',
      mimeType: 'text/plain',
    },
    { type: 'text', text: 'Done.' },
  ],
};

function mixedEnvelope(): Record<string, unknown> {
  return {
    results: 'Here you are:\nDone.',
    meta_data: {
      server: 'ev',
      tool: 'mixed',
      source: 'text',
      elapsed_ms: 3,
      resource_links: [{ uri: 'demo://x/2', name: 'Blob 2', description: 'a blob', mimeType: 'text/plain' }],
    },
    returned_file_names: ['image-1.png', 'resource-1.txt', 'a.txt.gz'],
    returned_file_contents: [PNG, Buffer.from('one').toString('base64'), BLOB],
  };
}

const options = { server: 'ev', tool: 'mixed' };

type Mutation = readonly [string, (envelope: Record<string, unknown>) => void];

const meta = (envelope: Record<string, unknown>) => envelope['meta_data'] as Record<string, unknown>;
const files = (envelope: Record<string, unknown>) => envelope['returned_file_contents'] as string[];
const names = (envelope: Record<string, unknown>) => envelope['returned_file_names'] as string[];

const MUTATIONS: readonly Mutation[] = [
  ['a text block is lost', (e) => (e['results'] = 'Here you are:')],
  ['the image is dropped', (e) => (files(e).shift(), names(e).shift())],
  ['the image bytes change', (e) => (files(e)[0] = PNG.replace('A', 'B'))],
  ['the text resource text changes', (e) => (files(e)[1] = Buffer.from('two').toString('base64'))],
  ['the blob is re-encoded', (e) => (files(e)[2] = Buffer.from('other').toString('base64'))],
  ['a file is misnamed', (e) => (names(e)[0] = 'file-1.bin')],
  ['a resource link is lost', (e) => (meta(e)['resource_links'] = [])],
  [
    'a resource link loses its description',
    (e) => (meta(e)['resource_links'] = [{ uri: 'demo://x/2', name: 'Blob 2' }]),
  ],
  ['a spurious N2 warning appears', (e) => (meta(e)['warnings'] = ['structured_text_mismatch'])],
  ['the source is wrong', (e) => (meta(e)['source'] = 'text_json')],
  ['the server is wrong', (e) => (meta(e)['server'] = 'other')],
];

describe('the interop oracle (test/interop/envelope-oracle.ts)', () => {
  it('oracle: accepts a hand-rendered envelope that carries text, image, text and blob resources and a link', () => {
    expect(() => assertEnvelopeCarries(mixedRaw, proxied(mixedEnvelope()), options)).not.toThrow();
  });

  it.each(MUTATIONS)('oracle: fails when %s', (_what, mutate) => {
    const envelope = mixedEnvelope();
    mutate(envelope);
    expect(() => assertEnvelopeCarries(mixedRaw, proxied(envelope), options)).toThrow();
  });

  it('oracle: fails when content[0] carries the file bodies or disagrees with structuredContent', () => {
    const leaky = proxied(mixedEnvelope());
    const withBodies: ProxiedResult = {
      ...leaky,
      content: [{ type: 'text', text: JSON.stringify(mixedEnvelope()) }],
    };
    expect(() => assertEnvelopeCarries(mixedRaw, withBodies, options)).toThrow();
  });

  const structuredRaw = (text: string): RawResult => ({
    content: [{ type: 'text', text }],
    structuredContent: { entities: [1, 2] },
  });
  const structuredEnvelope = (warnings?: string[]) => ({
    results: { entities: [1, 2] },
    meta_data: {
      server: 'ev',
      tool: 'mixed',
      source: 'structured',
      elapsed_ms: 1,
      ...(warnings ? { warnings } : {}),
    },
  });

  it.each([
    ['text equal to structuredContent', '{"entities":[1,2]}', false],
    ['the bare array of a single-key wrapper', '[\n  1,\n  2\n]', false],
    ['prose', 'two entities', false],
    ['JSON that truly differs', '[1,3]', true],
  ])('oracle: N2 expects a warning for %s only when the JSON truly differs', (_what, text, differs) => {
    const right = proxied(structuredEnvelope(differs ? ['structured_text_mismatch'] : undefined));
    const wrong = proxied(structuredEnvelope(differs ? undefined : ['structured_text_mismatch']));
    expect(() => assertEnvelopeCarries(structuredRaw(text), right, options)).not.toThrow();
    expect(() => assertEnvelopeCarries(structuredRaw(text), wrong, options)).toThrow();
  });

  it('oracle: an isError result must keep its text without the MCP error prefix, and its code', () => {
    const raw: RawResult = {
      content: [{ type: 'text', text: 'MCP error -32602: bad input' }],
      isError: true,
    };
    const envelope = (error: string, code?: string) => ({
      results: { error },
      meta_data: {
        is_error: true,
        error_type: 'tool_error',
        ...(code ? { error_code: code } : {}),
        server: 'ev',
        tool: 'mixed',
        source: 'text',
        elapsed_ms: 1,
        instruction: 'Tell the user.',
      },
    });
    expect(() => assertEnvelopeCarries(raw, proxied(envelope('bad input', '-32602')), options)).not.toThrow();
    expect(() => assertEnvelopeCarries(raw, proxied(envelope('bad input')), options)).toThrow();
    expect(() =>
      assertEnvelopeCarries(raw, proxied(envelope('something else', '-32602')), options),
    ).toThrow();
    const success = { ...proxied(envelope('bad input', '-32602')), isError: false };
    expect(() => assertEnvelopeCarries(raw, success, options)).toThrow();
  });

  it('oracle: a value over the inline limit must move to result.json whole', () => {
    const value = { content: 'x'.repeat(200) };
    const json = JSON.stringify(value);
    const raw: RawResult = { content: [{ type: 'text', text: value.content }], structuredContent: value };
    const envelope = (body: string) => ({
      results: {
        truncated: true,
        file: 'result.json',
        bytes: json.length,
        preview: json.slice(0, 512),
        advice: 'The whole result is in the file result.json.',
      },
      meta_data: { server: 'ev', tool: 'mixed', source: 'structured', elapsed_ms: 1 },
      returned_file_names: ['result.json'],
      returned_file_contents: [Buffer.from(body).toString('base64')],
    });
    const small = { ...options, maxInlineBytes: 100 };
    expect(() => assertEnvelopeCarries(raw, proxied(envelope(json)), small)).not.toThrow();
    expect(() => assertEnvelopeCarries(raw, proxied(envelope(json.slice(0, 150))), small)).toThrow();
  });

  it('oracle: the mask makes two calls comparable only where they differ by volatile parts', () => {
    const later = Buffer.from('Resource 2: a blob created at 6:45:08 AM').toString('base64');
    const envelope = mixedEnvelope();
    files(envelope)[2] = later;
    const mask = createMask(['/tmp/a']);
    expect(() => assertEnvelopeCarries(mixedRaw, proxied(envelope), options)).toThrow();
    expect(() => assertEnvelopeCarries(mixedRaw, proxied(envelope), { ...options, mask })).not.toThrow();
    expect(mask('/tmp/a/x.txt at Sun Nov 22 2026 06:45:07 GMT+0000 (Coordinated Universal Time)')).toBe(
      '<ROOT>/x.txt at <DATE>',
    );
  });
});
