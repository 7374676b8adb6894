/**
 * I7: rate limits per caller. Every `rate_limits:` rule a call matches (its principal's patterns,
 * its exposed tool's globs) counts the call against that principal's own count of the rule, in
 * fixed windows of `per_s` seconds (window n is [n·per_s, (n+1)·per_s) since the epoch, so
 * replicas that share the counts agree on the windows). A call that would pass a limit is refused
 * with the seconds left in the window. Pure: the clock and the counts are given.
 */
import { compileSelection, matchesAny, type Principal } from './policy.js';

/** I7: one rate limit as written (`rate_limits:`). */
export interface RateLimitRule {
  /** Principal patterns (as `access:`); each matching principal has its own count. */
  readonly principals: readonly string[];
  /** Globs over exposed tool names; `!glob` excludes. */
  readonly tools: readonly string[];
  readonly calls: number;
  readonly perS: number;
}

/** One rule as a call meets it. */
export interface CompiledLimit {
  /** The rule's place in `rate_limits:` (its counts are keyed by it). */
  readonly index: number;
  readonly calls: number;
  readonly windowMs: number;
}

/** Where a principal's count of a rule is kept for the window that holds `now`. */
export function countKey(
  limit: CompiledLimit,
  principal: Principal,
  now: number,
): { key: string; resetAt: number } {
  const window = Math.floor(now / limit.windowMs);
  return { key: `${limit.index}\n${principal.key}\n${window}`, resetAt: (window + 1) * limit.windowMs };
}

/** The most (principal, tool) pairs whose matching rules are remembered (bounded). */
const REMEMBERED = 10_000;

/** The rules compiled once; `for` is cached per principal key and tool. */
export interface Limits {
  /** True when some rule exists (without one, no call pays anything). */
  readonly any: boolean;
  /** The rules that count a call of `principal` to exposed tool `tool`. */
  for(principal: Principal, tool: string): readonly CompiledLimit[];
}

/** @example const limits = compileLimits(config.rateLimits); limits.for(principal, 'fs_read'); */
export function compileLimits(rules: readonly RateLimitRule[] | undefined): Limits {
  const compiled = (rules ?? []).map((rule, index) => ({
    limit: { index, calls: rule.calls, windowMs: Math.round(rule.perS * 1000) },
    principals: rule.principals,
    tools: compileSelection(rule.tools),
  }));
  const cache = new Map<string, readonly CompiledLimit[]>();
  const none: readonly CompiledLimit[] = [];
  return {
    any: compiled.length > 0,
    for(principal, tool) {
      if (compiled.length === 0) return none;
      const key = `${principal.key}\n${tool}`;
      let found = cache.get(key);
      if (found === undefined) {
        found = compiled
          .filter((rule) => rule.tools(tool) && matchesAny(rule.principals, principal))
          .map((rule) => rule.limit);
        if (cache.size >= REMEMBERED) cache.clear();
        cache.set(key, found);
      }
      return found;
    },
  };
}

/** The verdict on one call. */
export type LimitVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly limit: CompiledLimit; readonly retryAfterMs: number };
