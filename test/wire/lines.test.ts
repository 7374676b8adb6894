/**
 * The stdio framing both ends speak (wire/lines.ts): whole lines whatever the chunking, a line
 * over the limit skipped on its own with the id its ends show, and one line → one message.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, parseMessage, peekLine, type LinePeek, type LineSink } from '../../src/wire/lines.js';

type Event = { line: string } | { oversized: number; peek: LinePeek };

function collect(): { sink: LineSink; events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    sink: {
      line: (text) => events.push({ line: text }),
      oversized: (bytes, peek) => events.push({ oversized: bytes, peek }),
    },
  };
}

/** Feeds `bytes` to a fresh splitter in chunks cut at `cuts` (byte offsets). */
function split(bytes: Buffer, cuts: number[], maxLineBytes = 1 << 20): Event[] {
  const splitter = new LineSplitter(maxLineBytes);
  const { sink, events } = collect();
  let start = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    splitter.push(bytes.subarray(start, cut), sink);
    start = cut;
  }
  splitter.push(bytes.subarray(start), sink);
  return events;
}

describe('LineSplitter', () => {
  it('P7/U1: every line comes out whole and once, wherever the chunks are cut (UTF-8 sequences included)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !/[\r\n]/.test(s));
    fc.assert(
      fc.property(
        fc.array(
          text.map((s) => JSON.stringify({ jsonrpc: '2.0', id: 1, params: { s } })),
          { minLength: 1, maxLength: 8 },
        ),
        fc.array(fc.nat(), { maxLength: 12 }),
        (lines, rawCuts) => {
          const bytes = Buffer.from(lines.map((line) => `${line}\n`).join(''));
          const cuts = rawCuts.map((cut) => cut % (bytes.length + 1));
          expect(split(bytes, cuts)).toEqual(lines.map((line) => ({ line })));
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    ['CRLF endings', 'a\r\nb\r\n', [3], [{ line: 'a' }, { line: 'b' }]],
    ['a CR cut from its LF', 'ab\r\ncd\n', [3], [{ line: 'ab' }, { line: 'cd' }]],
    ['blank lines are skipped', '\n\r\na\n\n', [1], [{ line: 'a' }]],
    ['an unfinished last line waits', 'a\nb', [], [{ line: 'a' }]],
    ['three lines in one chunk', 'x\ny\nz\n', [], [{ line: 'x' }, { line: 'y' }, { line: 'z' }]],
  ] as const)('U1/P7: %s', (_name, input, cuts, expected) => {
    expect(split(Buffer.from(input), [...cuts])).toEqual(expected);
  });

  it.each([
    [
      'the TypeScript SDK (id last), in one chunk',
      `{"result":{"content":[{"type":"text","text":"${'x'.repeat(300)}"}]},"jsonrpc":"2.0","id":7}`,
      [],
      { id: 7, kind: 'response' },
    ],
    [
      'Python, Rust and Go (id first), cut into chunks',
      `{"jsonrpc":"2.0","id":"req-1","result":{"text":"${'y'.repeat(300)}"}}`,
      [5, 40, 200],
      { id: 'req-1', kind: 'response' },
    ],
    [
      'a nested "id" at the end is not the message id',
      `{"jsonrpc":"2.0","result":{"text":"${'z'.repeat(300)}","item":{"id":9}}}`,
      [100],
      { kind: 'response' },
    ],
    [
      'an escaped "id" inside a string is not the message id',
      `{"result":{"text":"${'w'.repeat(300)} \\"id\\":3}"},"jsonrpc":"2.0"}`,
      [50, 51],
      { kind: 'response' },
    ],
    [
      'a request from the TypeScript SDK',
      `{"method":"tools/call","params":{"arguments":{"t":"${'v'.repeat(300)}"}},"jsonrpc":"2.0","id":3}`,
      [300],
      { id: 3, kind: 'request' },
    ],
    [
      'a notification',
      `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'u'.repeat(300)}"}}`,
      [],
      { kind: 'request' },
    ],
  ] as const)(
    'P7: a line over the limit is skipped whole, with its id and kind: %s',
    (_name, long, cuts, peek) => {
      const bytes = Buffer.from(`{"a":1}\n${long}\n{"b":2}\n`);
      const events = split(
        bytes,
        cuts.map((cut) => cut + 8),
        200,
      );
      expect(events).toEqual([
        { line: '{"a":1}' },
        { oversized: Buffer.byteLength(long), peek },
        { line: '{"b":2}' },
      ]);
    },
  );

  it('P7: a line just at the limit is read; one byte more is skipped', () => {
    const at = `"${'a'.repeat(8)}"`; // 10 bytes
    expect(split(Buffer.from(`${at}\n`), [4], 10)).toEqual([{ line: at }]);
    expect(split(Buffer.from(`${at} \n`), [4], 10)).toEqual([{ oversized: 11, peek: {} }]);
  });

  it('P7: an oversized line holds at most the limit while it streams in', () => {
    const splitter = new LineSplitter(1000);
    const { sink, events } = collect();
    for (let i = 0; i < 50; i++) splitter.push(Buffer.alloc(100, 0x61), sink);
    expect(splitter.pendingBytes).toBe(5000);
    splitter.push(Buffer.from('\n{}\n'), sink);
    expect(events).toEqual([{ oversized: 5000, peek: {} }, { line: '{}' }]);
    expect(splitter.pendingBytes).toBe(0);
  });
});

describe('peekLine', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":12,"result":', '', { id: 12, kind: 'response' }],
    ['{"id":"a\\"b","jsonrpc":"2.0","error":', '', { id: 'a"b', kind: 'response' }],
    ['{"result":', '},"jsonrpc":"2.0","id":-4}', { id: -4, kind: 'response' }],
    ['{"result":', '},"jsonrpc":"2.0","id":"x"}\r', { id: 'x', kind: 'response' }],
    ['{"result":', '"id":5}}', { kind: 'response' }],
    ['{"method":"notifications/message","params":', '}}', { kind: 'request' }],
    ['{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"', '}}', { id: 1, kind: 'request' }],
    ['{"params":{"x":', '},"jsonrpc":"2.0","id":2}', { id: 2 }],
  ] as const)('P7: %s … %s → %j', (head, tail, peek) => {
    expect(peekLine(Buffer.from(head), Buffer.from(tail))).toEqual(peek);
  });
});

describe('parseMessage', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1,"method":"ping"}', true],
    ['not json', false],
    ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', false],
    ['null', false],
    ['42', false],
  ] as const)('P7/U1: %s → ok %s', (line, ok) => {
    const parsed = parseMessage(line);
    expect(parsed.ok).toBe(ok);
    if (!parsed.ok) expect(parsed.error).toContain(line.slice(0, 10));
  });
});

describe('parseMessage: a rewrite', () => {
  it('N13: the rewritten line is parsed; a rewrite that breaks the JSON falls back to the line', () => {
    const line = '{"jsonrpc":"2.0","id":1,"result":{"n":18446744073709551616}}';
    const kept = parseMessage(line, () => '{"jsonrpc":"2.0","id":1,"result":{"n":"18446744073709551616"}}');
    expect(kept).toMatchObject({ ok: true, message: { result: { n: '18446744073709551616' } } });
    expect(parseMessage(line, () => '{broken')).toMatchObject({ ok: true, message: { id: 1 } });
  });
});

describe('parseMessage: the JSON-RPC 2.0 envelope', () => {
  it.each([
    ['a request', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, true, undefined],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, true, undefined],
    ['a result', { jsonrpc: '2.0', id: 'a', result: { content: [] } }, true, undefined],
    ['an error', { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'bad' } }, true, undefined],
    ['jsonrpc 1.0 with a readable id', { jsonrpc: '1.0', id: 3, method: 'tools/list' }, false, 3],
    ['no jsonrpc member', { id: 5, method: 'tools/list' }, false, 5],
    ['a method that is no string', { jsonrpc: '2.0', id: 6, method: 42 }, false, 6],
    ['neither method nor result nor error', { jsonrpc: '2.0', id: 4 }, false, 4],
    ['a result that is no object', { jsonrpc: '2.0', id: 7, result: [1, 2] }, false, 7],
    ['a result whose _meta is no object', { jsonrpc: '2.0', id: 8, result: { _meta: 'x' } }, false, 8],
    ['a response with an unknown member', { jsonrpc: '2.0', id: 9, result: {}, extra: true }, false, 9],
    ['an error without a code', { jsonrpc: '2.0', id: 10, error: { message: 'x' } }, false, 10],
    ['an id that is an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'x' }, false, undefined],
    ['a request id that is no integer', { jsonrpc: '2.0', id: 1.5, method: 'x' }, false, undefined],
    ['a request id above 2^53', { jsonrpc: '2.0', id: 2 ** 53, method: 'x' }, false, undefined],
  ])('U1/P7: %s', (_label, value, ok, id) => {
    const parsed = parseMessage(JSON.stringify(value));
    expect(parsed.ok).toBe(ok);
    if (!parsed.ok) expect(parsed.id).toBe(id);
  });
});
