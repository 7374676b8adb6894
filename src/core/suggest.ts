/**
 * "Did you mean …" for unknown tool names (T9) and unknown config keys (C5).
 */

/**
 * Levenshtein distance between two strings, with an optional ceiling: once every path exceeds
 * `max`, the function stops early and returns `max + 1` (a few hundred candidates stay cheap).
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    [previous, current] = [current, previous];
  }
  return previous[b.length] ?? max + 1;
}

/** Options of {@link closest}. */
export interface ClosestOptions {
  /**
   * How many names to return at most.
   * @default 3
   */
  readonly limit?: number;
  /**
   * The largest distance still worth suggesting, as a fraction of the longer name's length
   * (case is ignored; a candidate that contains the name, or is contained in it, always counts).
   * @default 0.4
   */
  readonly ratio?: number;
}

/**
 * The candidates closest to `name`, best first, ties in candidate order.
 * @example closest('fs_raed', ['fs_read', 'fs_write']) // ['fs_read']
 */
export function closest(name: string, candidates: Iterable<string>, options: ClosestOptions = {}): string[] {
  const limit = options.limit ?? 3;
  const ratio = options.ratio ?? 0.4;
  const needle = name.toLowerCase();
  const scored: { candidate: string; score: number; order: number }[] = [];
  let order = 0;
  for (const candidate of candidates) {
    const hay = candidate.toLowerCase();
    const budget = Math.max(1, Math.floor(Math.max(hay.length, needle.length) * ratio));
    const distance = editDistance(needle, hay, budget);
    const contains = needle.length >= 3 && (hay.includes(needle) || needle.includes(hay));
    if (distance <= budget || contains) {
      scored.push({ candidate, score: contains ? Math.min(distance, budget) : distance, order: order });
    }
    order++;
  }
  scored.sort((x, y) => x.score - y.score || x.order - y.order);
  return scored.slice(0, limit).map((s) => s.candidate);
}
