/**
 * Plain-text tables for the CLI (`check`, `tools`, `serve --http`): left-aligned columns
 * separated by two spaces, a header underlined with dashes. No colours, so the output reads
 * the same in a terminal, a log file and a test assertion.
 */

/** One column: its header and how a row renders in it. */
export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /**
   * Cut cells longer than this, ending them in `…`.
   * @default Infinity
   * @example { header: 'description', value: (t) => t.description, maxWidth: 60 }
   */
  readonly maxWidth?: number;
}

/**
 * Formats `rows` as a table; one line per row, no trailing spaces, ending without a newline.
 * @example formatTable([{ name: 'a' }], [{ header: 'name', value: (r) => r.name }])
 */
export function formatTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  const cells = rows.map((row) => columns.map((column) => cell(column.value(row), column.maxWidth)));
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((line) => (line[i] ?? '').length)),
  );
  const line = (values: readonly string[]): string =>
    values
      .map((value, i) => value.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [
    line(columns.map((column) => column.header)),
    line(widths.map((width) => '-'.repeat(width))),
    ...cells.map(line),
  ].join('\n');
}

/** One line, cut to `maxWidth` characters. */
function cell(value: string, maxWidth = Number.POSITIVE_INFINITY): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length > maxWidth ? `${flat.slice(0, Math.max(0, maxWidth - 1))}…` : flat;
}
