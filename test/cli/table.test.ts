/**
 * Plain-text tables and config-path resolution of the CLI (U3).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfigPath } from '../../src/cli/common.js';
import { formatTable } from '../../src/cli/table.js';

describe('U3: CLI tables', () => {
  const columns = [
    { header: 'NAME', value: (row: { name: string; note: string }) => row.name },
    { header: 'NOTE', value: (row: { name: string; note: string }) => row.note, maxWidth: 8 },
  ];
  it.each([
    [
      'aligns columns to the widest cell',
      [
        { name: 'a', note: 'x' },
        { name: 'long_name', note: 'y' },
      ],
      'NAME       NOTE\n---------  ----\na          x\nlong_name  y',
    ],
    [
      'cuts long cells with an ellipsis',
      [{ name: 'a', note: 'abcdefghijk' }],
      'NAME  NOTE\n----  --------\na     abcdefg…',
    ],
    [
      'flattens newlines and leaves no trailing spaces',
      [
        { name: 'a', note: '' },
        { name: 'b', note: 'two\nline' },
      ],
      'NAME  NOTE\n----  --------\na\nb     two line',
    ],
  ])('U3: %s', (_label, rows, expected) => {
    expect(formatTable(rows, columns)).toBe(expected);
  });
});

describe('U3: which config file the CLI uses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-cli-'));
  const empty = mkdtempSync(join(tmpdir(), 'mcp-normalizer-cli-'));
  writeFileSync(join(dir, 'mcp-normalizer.yaml'), 'servers: {}\n');
  it.each([
    [
      '--config wins, relative to the working directory',
      'x.yaml',
      { MCP_NORMALIZER_CONFIG: 'y.yaml' },
      dir,
      join(dir, 'x.yaml'),
    ],
    ['then MCP_NORMALIZER_CONFIG', undefined, { MCP_NORMALIZER_CONFIG: 'y.yaml' }, dir, join(dir, 'y.yaml')],
    ['then ./mcp-normalizer.yaml', undefined, {}, dir, join(dir, 'mcp-normalizer.yaml')],
  ])('U3: %s', (_label, flag, env, cwd, expected) => {
    expect(resolveConfigPath(flag, env, cwd)).toBe(expected);
  });
  it('U3: with none of them, a config error (exit 3) that names the options', () => {
    expect(() => resolveConfigPath(undefined, {}, empty)).toThrow(expect.objectContaining({ exitCode: 3 }));
    expect(() => resolveConfigPath(undefined, {}, empty)).toThrow(/--config FILE/);
  });
});
