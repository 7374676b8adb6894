/** The bench's unit of output: one measured quantity, per target, one value per round. */
import type { TargetKind } from './targets.js';

/** A target the issue sets for mcp-normalizer: a ratio against a yardstick, never asserted in tests. */
export interface Goal {
  readonly against: 'direct' | 'passthrough' | 'supergateway';
  /** `normalizer ÷ against` must be ≤ bound (better: lower) or ≥ bound (better: higher). */
  readonly bound: number;
}

/** One row of the report. */
export interface Figure {
  /** Stable key in the JSON results, e.g. `stdio.echo.p50`. */
  readonly id: string;
  readonly title: string;
  readonly unit: string;
  readonly better: 'lower' | 'higher';
  /** Per target, one value per round, rounds aligned (round i of each target ran side by side). */
  readonly rounds: Partial<Record<TargetKind, number[]>>;
  /** What stood behind each target when it differs from "1 echo server", e.g. `20×100 tools`. */
  readonly setup?: Partial<Record<TargetKind, string>>;
  readonly goal?: Goal;
}

/** The order of the report's columns and of every round. */
export const KINDS: readonly TargetKind[] = ['direct', 'passthrough', 'normalizer', 'supergateway'];

/** The targets a wire has: supergateway serves Streamable HTTP only. */
export function kindsOf(wire: 'stdio' | 'http'): readonly TargetKind[] {
  return wire === 'http' ? KINDS : KINDS.filter((kind) => kind !== 'supergateway');
}
