/**
 * The bench's statistics and its table (bench/stats.ts, bench/report.ts): tables of exact values,
 * since every ratio in docs/performance-log.md comes through them.
 */
import { describe, expect, it } from 'vitest';
import type { Figure } from '../../bench/figures.js';
import { markdownTable, summarize } from '../../bench/report.js';
import { median, pairedRatios, percentile, quartiles } from '../../bench/stats.js';

describe('bench statistics', () => {
  it.each([
    [[1, 2, 3, 4], 50, 2],
    [[4, 1, 3, 2], 100, 4],
    [[4, 1, 3, 2], 0, 1],
    [[7], 99, 7],
    [[], 50, NaN],
  ])('percentile(%j, %d) = %d (nearest rank)', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  it.each([
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[], NaN],
  ])('median(%j) = %d', (values, expected) => {
    expect(median(values)).toBe(expected);
  });

  it('pairs rounds by index and skips a round with a missing value or a zero divisor', () => {
    expect(pairedRatios([2, 3, 4, NaN, 5], [1, 2, 0, 1, 5])).toEqual([2, 1.5, 1]);
    // Per-round ratios 1 and 2 have the median 1.5; the ratio of the medians would be 2.5 ÷ 1.5.
    expect(median(pairedRatios([1, 4], [1, 2]))).toBe(1.5);
  });

  it('quartiles need 4 values and give the middle half', () => {
    expect(quartiles([1, 2, 3])).toBeUndefined();
    expect(quartiles([8, 1, 7, 2, 6, 3, 5, 4])).toEqual([2, 6]);
  });
});

describe('bench report', () => {
  const figure: Figure = {
    id: 'stdio.echo.p50',
    title: 'echo p50, stdio',
    unit: 'µs',
    better: 'lower',
    rounds: {
      direct: [100, 100, 100, 100],
      passthrough: [200, 200, 200, 200],
      normalizer: [180, 220, 240, 200],
    },
    goal: { against: 'passthrough', bound: 1 },
  };

  it('a row holds the medians, the median per-round ratios, their quartiles and the verdict', () => {
    expect(summarize(figure)).toEqual({
      id: 'stdio.echo.p50',
      title: 'echo p50, stdio',
      unit: 'µs',
      medians: { direct: 100, passthrough: 200, normalizer: 210 },
      vsDirect: 2.1,
      vsPassthrough: 1.05,
      vsSupergateway: NaN,
      vsDirectRange: [1.8, 2.2],
      vsPassthroughRange: [0.9, 1.1],
      goal: '≤ 1.0× passthrough',
      met: false,
    });
  });

  it('the table shows each ratio with the range the middle half of the rounds fell in', () => {
    const table = markdownTable([figure]).split('\n');
    expect(table[2]).toBe(
      '| echo p50, stdio | µs | 100 | 200 | 210 | — | 2.10× (1.80–2.20) | 1.05× (0.90–1.10) | — | ≤ 1.0× passthrough | **no** |',
    );
  });

  it('over HTTP a figure is set against supergateway too, and a bound of two decimals keeps them', () => {
    const http: Figure = {
      ...figure,
      id: 'http.cold.echo.cpu64',
      title: 'cold CPU, http',
      rounds: { ...figure.rounds, supergateway: [400, 200, 300, 250] },
      goal: { against: 'supergateway', bound: 0.95 },
    };
    const row = summarize(http);
    expect(row.vsSupergateway).toBeCloseTo(0.8, 5);
    expect(row.vsSupergatewayRange).toEqual([0.45, 0.8]);
    expect(row).toMatchObject({ goal: '≤ 0.95× supergateway', met: true });
    expect(markdownTable([http]).split('\n')[2]).toContain(
      '| 210 | 275 | 2.10× (1.80–2.20) | 1.05× (0.90–1.10) | 0.80× (0.45–0.80) | ≤ 0.95× supergateway | yes |',
    );
  });
});
