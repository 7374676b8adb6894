import { Ajv2020 } from 'ajv/dist/2020.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { failure, ok, type FileArtifact } from '../../src/core/result.js';
import { OUTPUT_FORMATS } from '../../src/upstream/envelope-schema.js';
import { createFileStore, FILE_URI_PREFIX } from '../../src/upstream/file-store.js';
import { renderCallToolResult } from '../../src/upstream/render.js';
import { envelopeValidators } from '../helpers/envelope-validators.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4, 5, 6]).toString('base64');
const JSON_BODY = Buffer.from('{"rows":[1,2,3]}').toString('base64');
const image: FileArtifact = { name: 'screenshot-1.png', mimeType: 'image/png', base64: PNG, kind: 'image' };
const spilled: FileArtifact = {
  name: 'result.json',
  mimeType: 'application/json',
  base64: JSON_BODY,
  kind: 'json',
};

/** A clock the test moves. */
function clock(start = 1_000): { now: () => number; advance: (ms: number) => void } {
  let at = start;
  return { now: () => at, advance: (ms) => (at += ms) };
}

const sessionA = {};
const sessionB = {};

describe('the file store (F7)', () => {
  it('F7: keep moves every body into the store and links it; read gives the same bytes back', () => {
    const store = createFileStore({ maxBytes: 1_000_000, ttlMs: 60_000 });
    const kept = store.keep(ok('see files', { files: [image, spilled] }), sessionA);
    expect(kept.files.map((file) => file.base64)).toEqual(['', '']);
    const [first, second] = kept.files.map((file) => file.link);
    expect(first?.uri.startsWith(FILE_URI_PREFIX)).toBe(true);
    expect(first?.uri.endsWith('/screenshot-1.png')).toBe(true);
    expect(first?.size).toBe(10);
    expect(store.read(first?.uri ?? '', sessionA)).toEqual({
      contents: [{ uri: first?.uri, mimeType: 'image/png', blob: PNG }],
    });
    // A spilled JSON value reads as text: hosts show it, models can be given it.
    expect(store.read(second?.uri ?? '', sessionA)).toEqual({
      contents: [{ uri: second?.uri, mimeType: 'application/json', text: '{"rows":[1,2,3]}' }],
    });
    expect(store.size()).toEqual({ files: 2, bytes: 10 + 16 });
  });

  it('F7: a result without files is returned as it is', () => {
    const store = createFileStore({ maxBytes: 10, ttlMs: 10 });
    const result = ok(1);
    expect(store.keep(result, undefined)).toBe(result);
  });

  it.each([
    ['expired', 'this file link expired'],
    ['evicted', 'dropped to keep the file store under output.file_store.max_bytes (20 bytes)'],
    ['foreign', 'this file belongs to another session'],
    ['closed', 'the session this file belonged to has closed'],
    ['unknown', 'no file with this link is held by this mcp-normalizer process'],
  ])('F7: a link that is %s gets a clear resource-not-found error', (why, message) => {
    const time = clock();
    const store = createFileStore({ maxBytes: 20, ttlMs: 1_000, now: time.now });
    const uri = store.keep(ok(1, { files: [image] }), sessionA).files[0]?.link?.uri ?? '';
    let reader: object | undefined = sessionA;
    let asked = uri;
    if (why === 'expired') time.advance(1_000);
    if (why === 'evicted') store.keep(ok(1, { files: [image, image] }), sessionA);
    if (why === 'foreign') reader = sessionB;
    if (why === 'closed') store.forget(sessionA);
    if (why === 'unknown') asked = `${FILE_URI_PREFIX}nope/screenshot-1.png`;
    let thrown: unknown;
    try {
      store.read(asked, reader);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ message: expect.stringContaining(message) });
    // The SDK encodes ResourceNotFoundError as -32602 with the URI in data, in both eras.
    expect((thrown as { code: number }).code).toBeLessThan(0);
  });

  it('F7: a file without a session is anyone’s who holds the link; a session’s file only its own', () => {
    const store = createFileStore({ maxBytes: 1_000, ttlMs: 1_000 });
    const open = store.keep(ok(1, { files: [image] }), undefined).files[0]?.link?.uri ?? '';
    expect(store.read(open, sessionB).contents).toHaveLength(1);
    expect(store.read(open, undefined).contents).toHaveLength(1);
  });

  it('F7: the store stays under max_bytes (oldest first); one file larger than the bound is kept alone', () => {
    const time = clock();
    const store = createFileStore({ maxBytes: 25, ttlMs: 1_000, now: time.now });
    for (let i = 0; i < 5; i++) store.keep(ok(i, { files: [image] }), undefined);
    expect(store.size()).toEqual({ files: 2, bytes: 20 });
    const big: FileArtifact = { ...image, base64: Buffer.alloc(40).toString('base64') };
    const kept = store.keep(ok(1, { files: [big] }), undefined);
    expect(store.size()).toEqual({ files: 1, bytes: 40 });
    expect(store.read(kept.files[0]?.link?.uri ?? '', undefined).contents[0]).toMatchObject({
      blob: big.base64,
    });
    time.advance(1_000);
    store.keep(ok(1, { files: [image] }), undefined);
    expect(store.size()).toEqual({ files: 1, bytes: 10 });
  });

  it.each(OUTPUT_FORMATS)(
    'F7: in format %s the answer lists links, carries no body, and adds a resource_link block per file',
    (format) => {
      const store = createFileStore({ maxBytes: 1_000, ttlMs: 1_000 });
      for (const result of [
        ok('see files', { files: [image, spilled] }),
        failure('tool_error', 'x', { files: [image] }),
      ]) {
        const kept = store.keep(result, undefined);
        const rendered = renderCallToolResult(kept, { format, media: 'artifacts' });
        expect(() => CallToolResultSchema.parse(rendered)).not.toThrow();
        const envelope = rendered.structuredContent as Record<string, unknown>;
        const ajv = new Ajv2020({ strict: true, allErrors: true });
        const validate = envelopeValidators(ajv)[format];
        expect(validate(envelope), ajv.errorsText(validate.errors)).toBe(true);
        expect(envelope['returned_file_contents']).toBeUndefined();
        const links = envelope['returned_file_links'] as { uri: string; name: string }[];
        expect(links.map((link) => link.name)).toEqual(envelope['returned_file_names']);
        expect(rendered.content.filter((block) => block.type === 'resource_link')).toEqual(links);
        const all = JSON.stringify(rendered);
        expect(all).not.toContain(PNG);
        expect(all).not.toContain(JSON_BODY);
        // The model's text lists the links too (it can ask the host to open one).
        expect(JSON.parse((rendered.content[0] as { text: string }).text)).toEqual(envelope);
      }
    },
  );
});
