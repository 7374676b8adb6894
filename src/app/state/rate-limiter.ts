/**
 * I7: the rate limits applied: each call a rule counts increments its principal's count for the
 * window (`core/rate-limits.ts`). The counts live in this process (a map swept of past windows),
 * or in the shared store (`store.ts`), where every replica counts the same calls, leased in runs
 * while the limit is far ({@link sharedCounts}); a call no rule counts touches neither.
 */
import { countKey, type CompiledLimit, type Limits, type LimitVerdict } from '../../core/rate-limits.js';
import type { Principal } from '../../core/policy.js';

/**
 * Where counts are kept: `increment` returns this call's number in the window (a promise from a
 * shared store, which rejects when the store cannot be reached); `limit` is the rule's.
 */
export interface Counts {
  increment(key: string, resetAt: number, limit: number): number | Promise<number>;
}

/** A replica leases at most this share of what is left of a limit in one store round trip. */
const LEASE_SHARE = 64;

/** One key's lease in this replica: the numbers it holds, and the round trip under way. */
interface Lease {
  next: number;
  last: number;
  /** The store's total at the last answer (what was left of the limit then). */
  total: number;
  readonly resetAt: number;
  /** The calls waiting for numbers (the next round trip takes at least this many). */
  waiting: number;
  inflight: Promise<void> | undefined;
}

/**
 * Issue 48: counts in the shared store, leased. Each round trip takes a run of numbers with one
 * `INCRBY`, and the replica hands them out to its next calls without asking again. A run is at
 * least as long as the calls waiting for it, and at most 1/{@link LEASE_SHARE} of what the last
 * answer left of the limit otherwise; one round trip per key is under way at a time, and the calls
 * that arrive meanwhile wait for it (issue 55: 32 calls at once each leased a run and dropped the
 * others', so a limit of 640 let 250–350 through). The numbers are unique across replicas, so no
 * more calls than the limit are ever allowed; a number a replica leased and did not use before its
 * window ended is lost (at most 1/64 of what was left, per replica). Near the limit a run is as
 * long as the calls waiting: counted call by call, exactly.
 */
export function sharedCounts(store: {
  increment(key: string, resetAt: number, by: number): Promise<number>;
}): Counts {
  const leases = new Map<string, Lease>();

  async function take(key: string, lease: Lease, limit: number): Promise<number> {
    lease.waiting++;
    try {
      for (;;) {
        if (lease.next <= lease.last) return lease.next++;
        if (lease.inflight === undefined) {
          const chunk = Math.max(lease.waiting, Math.floor((limit - lease.total) / LEASE_SHARE), 1);
          lease.inflight = store.increment(key, lease.resetAt, chunk).then(
            (total) => {
              lease.total = total;
              lease.next = total - chunk + 1;
              lease.last = total;
              lease.inflight = undefined;
            },
            (error: unknown) => {
              lease.inflight = undefined;
              throw error;
            },
          );
        }
        // Unreachable store: every call waiting for this round trip fails with it.
        await lease.inflight;
      }
    } finally {
      lease.waiting--;
    }
  }

  return {
    increment(key, resetAt, limit) {
      const lease = leases.get(key);
      if (lease !== undefined && lease.next <= lease.last) return lease.next++;
      if (lease !== undefined) return take(key, lease, limit);
      if (leases.size >= SWEEP_AT) {
        const now = Date.now();
        for (const [old, { resetAt: end, waiting }] of leases)
          if (end <= now && waiting === 0) leases.delete(old);
      }
      const fresh: Lease = { next: 1, last: 0, total: 0, resetAt, waiting: 0, inflight: undefined };
      leases.set(key, fresh);
      return take(key, fresh, limit);
    },
  };
}

/** The most counts kept before the past windows are swept. */
const SWEEP_AT = 10_000;

/** Counts in this process, for one gateway (replicas without a shared store each count their own). */
export function localCounts(): Counts {
  const counts = new Map<string, { count: number; resetAt: number }>();
  return {
    increment(key, resetAt) {
      let entry = counts.get(key);
      if (entry === undefined) {
        if (counts.size >= SWEEP_AT) {
          const now = Date.now();
          for (const [old, { resetAt: end }] of counts) if (end <= now) counts.delete(old);
        }
        counts.set(key, (entry = { count: 0, resetAt }));
      }
      return ++entry.count;
    },
  };
}

const ALLOWED: LimitVerdict = { allowed: true };

/** The limiter of one gateway. */
export interface RateLimiter {
  /**
   * I7: counts a call of `principal` to `tool`; refused when a limit it counts is passed. A
   * promise only when a limit counts the call and the counts are shared.
   */
  admit(principal: Principal, tool: string): LimitVerdict | Promise<LimitVerdict>;
}

interface Counted {
  readonly limit: CompiledLimit;
  readonly resetAt: number;
  readonly count: number;
}

/** The verdict on the counts after a call: refused by the passed limit with the longest wait. */
function verdictOf(counted: readonly Counted[], now: number): LimitVerdict {
  let refused: LimitVerdict = ALLOWED;
  for (const { limit, resetAt, count } of counted) {
    if (count <= limit.calls) continue;
    const retryAfterMs = resetAt - now;
    if (refused.allowed || retryAfterMs > refused.retryAfterMs)
      refused = { allowed: false, limit, retryAfterMs };
  }
  return refused;
}

/** @example const limiter = createRateLimiter(compileLimits(config.rateLimits), localCounts(), Date.now); */
export function createRateLimiter(limits: Limits, counts: Counts, clock: () => number): RateLimiter {
  return {
    admit(principal, tool) {
      const matching = limits.for(principal, tool);
      if (matching.length === 0) return ALLOWED;
      const now = clock();
      const pending = matching.map((limit) => {
        const { key, resetAt } = countKey(limit, principal, now);
        return { limit, resetAt, count: counts.increment(key, resetAt, limit.calls) };
      });
      if (pending.every((entry): entry is Counted => typeof entry.count === 'number'))
        return verdictOf(pending, now);
      return Promise.all(pending.map(async (entry) => ({ ...entry, count: await entry.count }))).then(
        (counted) => verdictOf(counted, now),
      );
    },
  };
}
