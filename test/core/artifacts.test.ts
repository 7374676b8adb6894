import { describe, expect, it } from 'vitest';
import {
  ArtifactNamer,
  PREVIEW_CHARS,
  PREVIEW_ROWS_CHARS,
  bytesToBase64,
  portableBytesToBase64,
  extensionForMime,
  fileNameFromUri,
  isValidBase64,
  kindForMime,
  mimeForFileName,
  spillIfTooLarge,
  utf8ToBase64,
} from '../../src/core/artifacts.js';

function decodeUtf8(base64: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
}

describe('MIME types and extensions', () => {
  it.each([
    ['image/png', 'png'],
    ['image/jpeg', 'jpg'],
    ['audio/wav', 'wav'],
    ['audio/mpeg', 'mp3'],
    ['text/plain; charset=utf-8', 'txt'],
    ['TEXT/MARKDOWN', 'md'],
    ['text/x-unknown', 'txt'],
    ['application/vnd.api+json', 'json'],
    ['application/gzip', 'gz'],
    ['application/x-something', 'bin'],
    [undefined, 'bin'],
  ])('N4: %s → .%s', (mime, ext) => {
    expect(extensionForMime(mime)).toBe(ext);
  });

  it.each([
    ['chart.png', 'image/png'],
    ['data.JSON', 'application/json'],
    ['photo.jpeg', 'image/jpeg'],
    ['notes.md', 'text/markdown'],
    ['noextension', 'application/octet-stream'],
    ['weird.xyz', 'application/octet-stream'],
  ])('N6: the MIME type of a returned file %s is %s', (name, mime) => {
    expect(mimeForFileName(name)).toBe(mime);
  });

  it.each([
    ['image/png', 'image'],
    ['audio/ogg', 'audio'],
    ['application/json', 'json'],
    ['text/csv', 'text'],
    ['application/pdf', 'blob'],
  ])('N6: %s files are of kind %s', (mime, kind) => {
    expect(kindForMime(mime)).toBe(kind);
  });
});

describe('base64', () => {
  it.each([
    ['padded', 'aGk=', true],
    ['unpadded', 'aGk', true],
    ['empty', '', true],
    ['two pad chars', 'aA==', true],
    ['bad length', 'aGkxa', false],
    ['padding with bad length', 'aG=', false],
    ['illegal character', 'a*k=', false],
    ['embedded whitespace', 'aG k=', false],
    ['base64url alphabet', 'a-_b', false],
    ['not a string', 42, false],
  ])('F5: %s → valid %s', (_label, data, expected) => {
    expect(isValidBase64(data)).toBe(expected);
  });

  it.each([
    ['', ''],
    ['h', 'aA=='],
    ['hi', 'aGk='],
    ['hi!', 'aGkh'],
    ['héllo 😀', btoa(String.fromCharCode(...new TextEncoder().encode('héllo 😀')))],
  ])('N4: utf8ToBase64(%j) matches btoa', (text, expected) => {
    expect(utf8ToBase64(text)).toBe(expected);
  });

  it.each([
    ['native', bytesToBase64],
    ['portable (no Buffer)', portableBytesToBase64],
  ])('N4: %s bytesToBase64 handles inputs across chunk boundaries and offsets', (_label, encode) => {
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256);
    const expected = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));
    expect(encode(bytes)).toBe(expected);
    const view = bytes.subarray(5, 50_006);
    expect(encode(view)).toBe(btoa(Array.from(view, (b) => String.fromCharCode(b)).join('')));
  });

  it('F5: a 12 MB base64 string is checked without a crash', () => {
    expect(isValidBase64('QUJD'.repeat(3_000_000))).toBe(true);
  });
});

describe('artifact names', () => {
  it.each([
    ['file:///tmp/docs/notes.txt', 'notes.txt'],
    ['https://x.test/a/report%20final.pdf?x=1#top', 'report_final.pdf'],
    ['test://static/resource/1', undefined],
    ['data:text/plain;base64,aGk=', undefined],
    ['file:///tmp/dir/', undefined],
    ['file:///tmp/.hidden', undefined],
    ['file:///a/%E0%A4%A.txt', 'E0_A4_A.txt'],
    [undefined, undefined],
  ])('N4: a name from the URI %s is %s', (uri, expected) => {
    expect(fileNameFromUri(uri)).toBe(expected);
  });

  it('N4: long names are cut and keep their extension', () => {
    const name = fileNameFromUri(`file:///${'a'.repeat(100)}.json`);
    expect(name).toHaveLength(64);
    expect(name?.endsWith('.json')).toBe(true);
  });

  it('N4: numbered names count per stem and exact names are deduplicated', () => {
    const namer = new ArtifactNamer();
    expect([
      namer.numbered('image', 'png'),
      namer.numbered('image', 'jpg'),
      namer.numbered('audio', 'wav'),
      namer.exact('notes.txt'),
      namer.exact('notes.txt'),
      namer.exact('notes.txt'),
      namer.exact('image-3.png'),
      namer.numbered('image', 'png'),
      namer.exact('README'),
      namer.exact('README'),
    ]).toEqual([
      'image-1.png',
      'image-2.jpg',
      'audio-1.wav',
      'notes.txt',
      'notes-2.txt',
      'notes-3.txt',
      'image-3.png',
      'image-4.png',
      'README',
      'README-2',
    ]);
  });
});

describe('spill (N9)', () => {
  it('N9: a value within the limit stays inline', () => {
    expect(spillIfTooLarge({ a: 'x'.repeat(10) }, 100, new ArtifactNamer())).toBeUndefined();
  });

  it('N9: a bound within the limit skips serialization entirely', () => {
    const value = {
      toJSON() {
        throw new Error('must not be serialized');
      },
    };
    expect(spillIfTooLarge(value, 100, new ArtifactNamer(), 50)).toBeUndefined();
  });

  it('N9: a value over the limit becomes a JSON artifact and a truncated marker', () => {
    const value = { text: 'é'.repeat(600) };
    const json = JSON.stringify(value);
    const spilled = spillIfTooLarge(value, 1000, new ArtifactNamer());
    expect(spilled?.value).toEqual({
      truncated: true,
      file: 'result.json',
      bytes: new TextEncoder().encode(json).length,
      preview: json.slice(0, PREVIEW_CHARS),
      advice: expect.stringContaining('result.json') as unknown,
    });
    expect(spilled?.file).toMatchObject({ name: 'result.json', mimeType: 'application/json', kind: 'json' });
    expect(decodeUtf8(spilled?.file.base64 ?? '')).toBe(json);
  });

  it.each([
    ['a list', Array.from({ length: 1500 }, (_, i) => ({ id: i, name: `row ${i}` })), undefined],
    [
      'an object with a list field',
      { rows: Array.from({ length: 1500 }, (_, i) => ({ id: i, name: `row ${i}` })), count: 1500 },
      'rows',
    ],
  ])(
    'N9: %s is cut at an item boundary, with how many are left out and how to ask for fewer',
    (_label, value, key) => {
      const spilled = spillIfTooLarge(value, 1000, new ArtifactNamer());
      const preview = spilled?.value.preview as unknown;
      const rows = (key === undefined ? preview : (preview as Record<string, unknown>)[key]) as unknown[];
      expect(spilled?.value).toMatchObject({ truncated: true, items: 1500, shown: rows.length });
      expect(rows.length).toBeGreaterThan(10);
      // Whole rows, the first ones, and the preview stays small.
      expect(rows).toEqual(Array.from({ length: rows.length }, (_, i) => ({ id: i, name: `row ${i}` })));
      expect(JSON.stringify(preview).length).toBeLessThanOrEqual(PREVIEW_ROWS_CHARS);
      if (key !== undefined) expect(preview).toMatchObject({ count: 1500 });
      expect(spilled?.value.advice).toMatch(/first \d+ of 1500 .*result\.json.*(filter|limit|page)/);
    },
  );

  it('N9: the limit is on bytes, not characters', () => {
    // 40 two-byte characters: 42 characters of JSON but 82 bytes.
    expect(spillIfTooLarge('é'.repeat(40), 60, new ArtifactNamer())).toBeDefined();
    expect(spillIfTooLarge('e'.repeat(40), 60, new ArtifactNamer())).toBeUndefined();
  });

  it('N9: the preview never splits a surrogate pair', () => {
    const value = `${'a'.repeat(PREVIEW_CHARS - 2)}😀😀`;
    const spilled = spillIfTooLarge(value, 10, new ArtifactNamer());
    // JSON adds a leading quote, so the first emoji straddles the cut.
    expect(spilled?.value.preview).toBe(`"${'a'.repeat(PREVIEW_CHARS - 2)}`);
  });

  it('N9: the spill file name does not collide with another artifact', () => {
    const namer = new ArtifactNamer();
    namer.exact('result.json');
    expect(spillIfTooLarge('x'.repeat(100), 10, namer)?.file.name).toBe('result-2.json');
  });
});
