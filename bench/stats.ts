/** Small, exact statistics for the bench: nearest-rank percentiles, medians, paired ratios, quartiles. */

/**
 * Nearest-rank percentile of `values` (`p` in 0..100); NaN for an empty list.
 * @example percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** The middle value (mean of the two middle ones for an even count); NaN for an empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The per-round ratios a[i] / b[i], skipping a round where either value is missing or b is 0.
 * Rounds alternate the targets, so a and b of one round ran seconds apart: the median of these
 * cancels the machine's drift better than a ratio of medians would.
 * @example pairedRatios([2, 3], [1, 2]) // [2, 1.5]
 */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    if (Number.isFinite(x) && Number.isFinite(y) && y !== 0) ratios.push(x / y);
  }
  return ratios;
}

/**
 * The interquartile range (nearest-rank 25th and 75th percentiles): where the middle half of
 * the rounds fell. `undefined` for fewer than 4 values, where it would say nothing.
 * @example quartiles([1, 2, 3, 4, 5, 6, 7, 8]) // [2, 6]
 */
export function quartiles(values: readonly number[]): readonly [number, number] | undefined {
  return values.length < 4 ? undefined : [percentile(values, 25), percentile(values, 75)];
}
