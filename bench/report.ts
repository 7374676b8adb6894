/** Figures → the markdown table printed at the end of a run and pasted into docs/performance-log.md. */
import { KINDS, type Figure } from './figures.js';
import { median, pairedRatios, quartiles } from './stats.js';

/** A figure reduced to what the table shows. */
export interface Row {
  readonly id: string;
  readonly title: string;
  readonly unit: string;
  readonly medians: Partial<Record<(typeof KINDS)[number], number>>;
  /** normalizer ÷ direct, ÷ passthrough, ÷ supergateway: medians of the per-round ratios. */
  readonly vsDirect: number;
  readonly vsPassthrough: number;
  /** NaN where the figure has no supergateway (stdio). */
  readonly vsSupergateway: number;
  /** Where the middle half of those per-round ratios fell (undefined under 4 rounds). */
  readonly vsDirectRange?: readonly [number, number];
  readonly vsPassthroughRange?: readonly [number, number];
  readonly vsSupergatewayRange?: readonly [number, number];
  readonly goal?: string;
  /** undefined when there is no goal or no normalizer figure. */
  readonly met?: boolean;
}

/** Medians over rounds and paired ratios for one figure. */
export function summarize(figure: Figure): Row {
  const medians: Row['medians'] = {};
  for (const kind of KINDS) {
    const rounds = figure.rounds[kind];
    if (rounds !== undefined) medians[kind] = median(rounds);
  }
  const normalizer = figure.rounds.normalizer ?? [];
  const againstDirect = pairedRatios(normalizer, figure.rounds.direct ?? []);
  const againstPassthrough = pairedRatios(normalizer, figure.rounds.passthrough ?? []);
  const againstSupergateway = pairedRatios(normalizer, figure.rounds.supergateway ?? []);
  const vsDirect = median(againstDirect);
  const vsPassthrough = median(againstPassthrough);
  const vsDirectRange = quartiles(againstDirect);
  const vsPassthroughRange = quartiles(againstPassthrough);
  const vsSupergateway = median(againstSupergateway);
  const vsSupergatewayRange = quartiles(againstSupergateway);
  const row: Row = {
    id: figure.id,
    title: figure.title,
    unit: figure.unit,
    medians,
    vsDirect,
    vsPassthrough,
    vsSupergateway,
    ...(vsDirectRange === undefined ? {} : { vsDirectRange }),
    ...(vsPassthroughRange === undefined ? {} : { vsPassthroughRange }),
    ...(vsSupergatewayRange === undefined ? {} : { vsSupergatewayRange }),
  };
  if (figure.goal === undefined) return row;
  const ratio = { direct: vsDirect, passthrough: vsPassthrough, supergateway: vsSupergateway }[
    figure.goal.against
  ];
  const sign = figure.better === 'lower' ? '≤' : '≥';
  const goal = `${sign} ${figure.goal.bound.toFixed(Number.isInteger(figure.goal.bound * 10) ? 1 : 2)}× ${figure.goal.against}`;
  if (Number.isNaN(ratio)) return { ...row, goal };
  const met = figure.better === 'lower' ? ratio <= figure.goal.bound : ratio >= figure.goal.bound;
  return { ...row, goal, met };
}

function num(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '—';
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** `1.08× (1.01–1.15)`: the median per-round ratio and, from 4 rounds on, its interquartile range. */
function ratio(value: number, range?: readonly [number, number]): string {
  if (Number.isNaN(value)) return '—';
  return range === undefined
    ? `${value.toFixed(2)}×`
    : `${value.toFixed(2)}× (${range[0].toFixed(2)}–${range[1].toFixed(2)})`;
}

/**
 * The markdown table: one row per figure; setups that differ from "1 echo server" in the title.
 * A ratio cell is the median of the per-round ratios with, in parentheses, the range the middle
 * half of the rounds fell in: the run's own noise, next to the figure it qualifies.
 */
export function markdownTable(figures: readonly Figure[]): string {
  const lines = [
    '| Figure | unit | direct | passthrough | mcp-normalizer | supergateway | ÷ direct | ÷ passthrough | ÷ supergateway | target | met |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|---|:-:|',
  ];
  for (const figure of figures) {
    const row = summarize(figure);
    const setup = figure.setup;
    const cell = (kind: (typeof KINDS)[number]): string =>
      `${num(row.medians[kind])}${setup?.[kind] === undefined ? '' : ` (${setup[kind]})`}`;
    const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**';
    lines.push(
      `| ${row.title} | ${row.unit} | ${cell('direct')} | ${cell('passthrough')} | ${cell('normalizer')} | ` +
        `${cell('supergateway')} | ${ratio(row.vsDirect, row.vsDirectRange)} | ` +
        `${ratio(row.vsPassthrough, row.vsPassthroughRange)} | ${ratio(row.vsSupergateway, row.vsSupergatewayRange)} | ` +
        `${row.goal ?? ''} | ${met} |`,
    );
  }
  return lines.join('\n');
}
