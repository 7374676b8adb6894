/**
 * docs/output-formats.md cannot drift from the renderer (F1–F5): every JSON example in it is
 * preceded by a marker `<!-- example: <id> -->`, and each id names a Result built below. The
 * test renders that Result with `renderCallToolResult` and requires the example to be exactly
 * the output, key order included (F2 promises ADR-003's key order): `call/<media>` examples
 * show the whole CallToolResult, `<format>/<case>` examples its `structuredContent`.
 *
 * The Results are the ones the normalizer and classifier produce for the downstream answers the
 * doc describes (an ADR-003 success with a message in structuredContent, an ADR-002 NOT_FOUND as
 * JSON text, a text plus an image, a thrown JSON-RPC error); they are spelled out with ok() and
 * failure() so that this test checks the renderer alone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_INSTRUCTIONS } from '../../src/core/instructions.js';
import { failure, ok } from '../../src/core/result.js';
import type { Result } from '../../src/core/result.js';
import type { MediaMode, OutputFormat } from '../../src/upstream/envelope-schema.js';
import { renderCallToolResult } from '../../src/upstream/render.js';

const DOC = join(import.meta.dirname, '../../docs/output-formats.md');

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';

/** An ADR-003 `{success: true, value, message}` in structuredContent, an embedded file and a link. */
const saved = ok(
  { saved: 1 },
  {
    meta: {
      server: 'notes',
      tool: 'save',
      source: 'structured',
      elapsedMs: 7,
      convention: 'result',
      resourceLinks: [{ uri: 'file:///notes/index.md', name: 'index.md', mimeType: 'text/markdown' }],
    },
    message: 'Saved your note.',
    files: [
      {
        name: 'today.md',
        mimeType: 'text/markdown',
        kind: 'text',
        base64: 'IyBUb2RheQo=',
        uri: 'file:///notes/today.md',
      },
    ],
    mediaBlocks: [
      {
        type: 'resource',
        resource: { uri: 'file:///notes/today.md', mimeType: 'text/markdown', text: '# Today\n' },
      },
      { type: 'resource_link', uri: 'file:///notes/index.md', name: 'index.md', mimeType: 'text/markdown' },
    ],
  },
);

const count = ok(
  { table: 'orders', rows: 42 },
  { meta: { server: 'db', tool: 'count_rows', source: 'structured', elapsedMs: 18 } },
);

const empty = ok(null, { meta: { server: 'db', tool: 'vacuum', source: 'empty', elapsedMs: 5 } });
/** F6: a table of five users, whose text block becomes TOON with `output.text: toon`. */
const table = ok(
  Array.from({ length: 5 }, (_, i) => ({
    id: i + 1,
    name: `user${i}`,
    email: `user${i}@example.com`,
    active: i % 2 === 0,
    score: (i * 7) % 100,
  })),
  { meta: { server: 'db', tool: 'list_users', source: 'structured', elapsedMs: 12 } },
);

/** An ADR-002 `{status: "ERROR", error: {code: "NOT_FOUND", ...}}` sent as JSON text (N8). */
const notFound = failure('tool_error', 'No table named "ordrs"', {
  meta: { server: 'db', tool: 'count_rows', source: 'text_json', elapsedMs: 9, convention: 'response' },
  errorCode: 'NOT_FOUND',
  errorData: { table: 'ordrs', suggestions: ['orders'] },
  instruction: DEFAULT_INSTRUCTIONS.tool_error,
});

/** A text block and an image block (N3, N4). */
const screenshot = ok('Screenshot taken.', {
  meta: { server: 'browser', tool: 'screenshot', source: 'text', elapsedMs: 240 },
  files: [{ name: 'image-1.png', mimeType: 'image/png', kind: 'image', base64: PNG }],
  mediaBlocks: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
});

/** F7: the same screenshot with `output.files: resource`: its body kept by the gateway. */
const linked = ok('Screenshot taken.', {
  meta: { server: 'browser', tool: 'screenshot', source: 'text', elapsedMs: 240 },
  files: [
    {
      name: 'image-1.png',
      mimeType: 'image/png',
      kind: 'image',
      base64: '',
      link: { uri: 'mcp-normalizer://files/q5Gk2mNwT8yLb0vXcR1aZw/image-1.png', size: 70 },
    },
  ],
  mediaBlocks: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
});

/** A JSON-RPC error the downstream threw, as `core/classify` turns it into a Result (R3). */
const thrown = failure('downstream_error', 'Invalid params: "table" must be a string', {
  meta: { server: 'db', tool: 'count_rows', source: 'proxy', elapsedMs: 3 },
  errorCode: '-32602',
  errorData: { code: -32602 },
  exception: new McpError(-32602, 'MCP error -32602: Invalid params: "table" must be a string'),
  instruction: DEFAULT_INSTRUCTIONS.downstream_error,
});

interface Example {
  /** The marker id in the doc. */
  readonly id: string;
  /** The contract rule the example shows. */
  readonly rule: 'F1' | 'F2' | 'F3' | 'F4' | 'F5' | 'F6' | 'F7';
  readonly result: Result;
  readonly format: OutputFormat;
  readonly media: MediaMode;
  /** The whole CallToolResult, or only its structuredContent (the envelope). */
  readonly shows: 'call' | 'envelope';
}

function envelope(id: string, rule: Example['rule'], result: Result): Example {
  const format = id.split('/')[0] as OutputFormat;
  return { id, rule, result, format, media: 'artifacts', shows: 'envelope' };
}

const EXAMPLES: readonly Example[] = [
  { id: 'call/artifacts', rule: 'F1', result: saved, format: 'results', media: 'artifacts', shows: 'call' },
  envelope('results/success', 'F1', count),
  envelope('results/empty', 'F4', empty),
  envelope('results/failure', 'F1', notFound),
  envelope('results/files', 'F1', screenshot),
  envelope('result/success', 'F2', count),
  envelope('result/empty', 'F4', empty),
  envelope('result/failure', 'F2', notFound),
  envelope('result/thrown', 'F2', thrown),
  envelope('result/files', 'F2', screenshot),
  envelope('response/success', 'F3', count),
  envelope('response/empty', 'F4', empty),
  envelope('response/failure', 'F3', notFound),
  envelope('response/files', 'F3', screenshot),
  envelope('results/table', 'F6', table),
  { id: 'call/file-links', rule: 'F7', result: linked, format: 'results', media: 'artifacts', shows: 'call' },
  {
    id: 'call/passthrough',
    rule: 'F5',
    result: saved,
    format: 'results',
    media: 'passthrough',
    shows: 'call',
  },
];

/** Every ```json block of the doc, with the marker id on the nearest non-blank line above it. */
function docExamples(text: string): { id: string | undefined; json: string; line: number }[] {
  const lines = text.split('\n');
  const out: { id: string | undefined; json: string; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== '```json') continue;
    let above = i - 1;
    while (above >= 0 && lines[above]?.trim() === '') above--;
    const id = /^<!-- example: (\S+) -->$/.exec(lines[above]?.trim() ?? '')?.[1];
    const end = lines.findIndex((line, j) => j > i && line.trim() === '```');
    out.push({ id, json: lines.slice(i + 1, end).join('\n'), line: i + 1 });
    i = end;
  }
  return out;
}

const blocks = docExamples(readFileSync(DOC, 'utf8'));

function rendered(example: Example): unknown {
  const result = renderCallToolResult(example.result, { format: example.format, media: example.media });
  return example.shows === 'call' ? result : result.structuredContent;
}

function check(example: Example): void {
  const block = blocks.find((candidate) => candidate.id === example.id);
  expect(block, `docs/output-formats.md has no block marked "${example.id}"`).toBeDefined();
  const shown: unknown = JSON.parse(block?.json ?? 'null');
  const actual = rendered(example);
  expect(shown).toStrictEqual(actual);
  // Same content is not enough for F2 ("key order included"): the order must match too.
  expect(JSON.stringify(shown)).toBe(JSON.stringify(actual));
}

/** `[id, example]` rows of one rule, so that `%s` puts the bare id in the test name. */
const byRule = (rule: Example['rule']) =>
  EXAMPLES.filter((example) => example.rule === rule).map((example) => [example.id, example] as const);

const checkRow = (_id: string, example: Example): void => check(example);

describe('docs/output-formats.md', () => {
  it('F1/F2/F3/F4/F5: every JSON block is marked with an example id, each id once, each one checked below', () => {
    const unmarked = blocks.filter((block) => block.id === undefined).map((block) => `line ${block.line}`);
    expect(unmarked, 'JSON blocks without an <!-- example: id --> marker').toEqual([]);
    const ids = blocks.map((block) => block.id);
    expect(new Set(ids).size, 'an example id is used twice').toBe(ids.length);
    expect([...ids].sort()).toEqual(EXAMPLES.map((example) => example.id).sort());
  });

  it.each(byRule('F1'))('F1: docs/output-formats.md %s example is what the renderer produces', checkRow);
  it.each(byRule('F2'))('F2: docs/output-formats.md %s example is what the renderer produces', checkRow);
  it.each(byRule('F3'))('F3: docs/output-formats.md %s example is what the renderer produces', checkRow);
  it.each(byRule('F4'))('F4: docs/output-formats.md %s example is what the renderer produces', checkRow);
  it.each(byRule('F5'))('F5: docs/output-formats.md %s example is what the renderer produces', checkRow);
  it.each(byRule('F6'))('F6: docs/output-formats.md %s example is what the renderer produces', checkRow);
  it.each(byRule('F7'))('F7: docs/output-formats.md %s example is what the renderer produces', checkRow);

  it('F6: the TOON block after the table example is the text block the renderer writes with output.text: toon', () => {
    const text = readFileSync(DOC, 'utf8');
    // The untagged block that follows the tagged JSON one.
    const after = text.slice(text.indexOf('and with `output.text: toon`'));
    const toon = /\n```\n([\s\S]*?)\n```/.exec(after)?.[1];
    const first = renderCallToolResult(table, { format: 'results', media: 'artifacts', text: 'toon' })
      .content[0];
    expect(first?.type === 'text' ? first.text : undefined).toBe(toon);
  });
});
