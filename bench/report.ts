/** Figures → the markdown table printed at the end of a run and pasted into docs/performance.md. */
import { KINDS, type Figure } from './figures.js';
import { median, pairedRatio } from './stats.js';

/** A figure reduced to what the table shows. */
export interface Row {
  readonly id: string;
  readonly title: string;
  readonly unit: string;
  readonly medians: Partial<Record<(typeof KINDS)[number], number>>;
  /** normalizer ÷ direct and normalizer ÷ passthrough: medians of the per-round ratios. */
  readonly vsDirect: number;
  readonly vsPassthrough: number;
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
  const vsDirect = pairedRatio(normalizer, figure.rounds.direct ?? []);
  const vsPassthrough = pairedRatio(normalizer, figure.rounds.passthrough ?? []);
  const row: Row = {
    id: figure.id,
    title: figure.title,
    unit: figure.unit,
    medians,
    vsDirect,
    vsPassthrough,
  };
  if (figure.goal === undefined) return row;
  const ratio = figure.goal.against === 'direct' ? vsDirect : vsPassthrough;
  const sign = figure.better === 'lower' ? '≤' : '≥';
  const goal = `${sign} ${figure.goal.bound.toFixed(1)}× ${figure.goal.against}`;
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

function ratio(value: number): string {
  return Number.isNaN(value) ? '—' : `${value.toFixed(2)}×`;
}

/** The markdown table: one row per figure; setups that differ from "1 echo server" in the title. */
export function markdownTable(figures: readonly Figure[]): string {
  const lines = [
    '| Figure | unit | direct | passthrough | mcp-normalizer | ÷ direct | ÷ passthrough | target | met |',
    '|---|---|--:|--:|--:|--:|--:|---|:-:|',
  ];
  for (const figure of figures) {
    const row = summarize(figure);
    const setup = figure.setup;
    const cell = (kind: (typeof KINDS)[number]): string =>
      `${num(row.medians[kind])}${setup?.[kind] === undefined ? '' : ` (${setup[kind]})`}`;
    const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**';
    lines.push(
      `| ${row.title} | ${row.unit} | ${cell('direct')} | ${cell('passthrough')} | ${cell('normalizer')} | ` +
        `${ratio(row.vsDirect)} | ${ratio(row.vsPassthrough)} | ${row.goal ?? ''} | ${met} |`,
    );
  }
  return lines.join('\n');
}
