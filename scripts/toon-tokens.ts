/**
 * F6: prints the token table of docs/performance-log.md (`npx tsx scripts/toon-tokens.ts`): the
 * golden corpus and tables of 2 to 100 rows, the text block as JSON and with `output.text: toon`,
 * counted with gpt-tokenizer (o200k).
 */
import { measureGolden, measureTable, type Measured } from '../test/helpers/toon-tokens.js';

const sum = (list: readonly Measured[], key: 'jsonTokens' | 'textTokens'): number =>
  list.reduce((total, m) => total + m[key], 0);
const ratio = (list: readonly Measured[]): string =>
  (sum(list, 'textTokens') / sum(list, 'jsonTokens')).toFixed(2);
const golden = measureGolden();
const tabular = golden.filter((m) => m.tabular);
const rows = [
  ['golden corpus, all cases', golden],
  ['golden corpus, tabular cases', tabular],
  ['golden corpus, other cases', golden.filter((m) => !m.tabular)],
] as const;
const lines = [
  '| text blocks | cases | TOON chosen | JSON tokens | tokens with `text: toon` | ratio |',
  '| :--- | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    ([label, list]) =>
      `| ${label} | ${list.length} | ${list.filter((m) => m.toon).length} | ${sum(list, 'jsonTokens')} | ${sum(list, 'textTokens')} | ${ratio(list)} |`,
  ),
  ...[2, 5, 20, 100].map((n) => {
    const m = measureTable(n);
    return `| a table of ${n} user records | 1 | ${m.toon ? 1 : 0} | ${m.jsonTokens} | ${m.textTokens} | ${(m.textTokens / m.jsonTokens).toFixed(2)} |`;
  }),
];
process.stdout.write(`${lines.join('\n')}\n`);
