/** I7: rate limits per caller (pure: the rules, and the limiter over counts and a clock). */
import { describe, expect, it } from 'vitest';
import { createRateLimiter, localCounts, sharedCounts } from '../../src/app/state/rate-limiter.js';
import { issuerPrincipal, LOCAL_PRINCIPAL, tokenPrincipal, type Principal } from '../../src/core/policy.js';
import { compileLimits, type LimitVerdict } from '../../src/core/rate-limits.js';

const alice = issuerPrincipal('https://idp', 'alice', { groups: ['dev'], scopes: [] });
const bob = issuerPrincipal('https://idp', 'bob', { groups: [], scopes: [] });
const robot = tokenPrincipal('robot', [], []);

function limiter(now: { t: number }): { admit(p: Principal, tool: string): LimitVerdict } {
  const limits = compileLimits([
    { principals: ['sub:alice', 'token:robot'], tools: ['fs_*', '!fs_stat'], calls: 3, perS: 10 },
    { principals: ['group:dev'], tools: ['*'], calls: 5, perS: 60 },
  ]);
  // Local counts answer at once: never a promise.
  return createRateLimiter(limits, localCounts(), () => now.t) as {
    admit(p: Principal, tool: string): LimitVerdict;
  };
}

describe('rate limits', () => {
  it('I7: without rules nothing is counted, for anybody', () => {
    const none = compileLimits(undefined);
    expect(none.any).toBe(false);
    expect(none.for(alice, 'fs_read')).toEqual([]);
  });

  it.each([
    ['alice, fs_read: both rules', alice, 'fs_read', [0, 1]],
    ['alice, fs_stat (excluded): the group rule only', alice, 'fs_stat', [1]],
    ['the static token robot, fs_read', robot, 'fs_read', [0]],
    ['bob (no rule names him)', bob, 'fs_read', []],
    ['the local user', LOCAL_PRINCIPAL, 'fs_read', []],
  ])('I7: the rules that count %s', (_name, principal, tool, indexes) => {
    const limits = compileLimits([
      { principals: ['sub:alice', 'token:robot'], tools: ['fs_*', '!fs_stat'], calls: 3, perS: 10 },
      { principals: ['group:dev'], tools: ['*'], calls: 5, perS: 60 },
    ]);
    expect(limits.for(principal, tool).map((limit) => limit.index)).toEqual(indexes);
  });

  it('I7: a principal gets its calls in a window, then a refusal with the wait; others are not limited', () => {
    const now = { t: 1_000_000 };
    const limits = limiter(now);
    const verdicts = [1, 2, 3, 4].map(() => limits.admit(robot, 'fs_read').allowed);
    expect(verdicts).toEqual([true, true, true, false]);
    now.t += 1500;
    expect(limits.admit(robot, 'fs_read')).toMatchObject({
      allowed: false,
      retryAfterMs: 8500,
      limit: { calls: 3 },
    });
    expect([1, 2, 3, 4, 5].map(() => limits.admit(bob, 'fs_read').allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    // The next window counts afresh (windows are fixed: [n·10 s, (n+1)·10 s) since the epoch).
    now.t = 1_010_000;
    expect(limits.admit(robot, 'fs_read').allowed).toBe(true);
  });

  it('I7: a call two rules count is refused by the one passed, with the longest wait', () => {
    const now = { t: 1_200_000 };
    const limits = limiter(now);
    for (let i = 0; i < 5; i++) expect(limits.admit(alice, 'web_get').allowed).toBe(true);
    const refused = limits.admit(alice, 'fs_read');
    expect(refused).toMatchObject({ allowed: false, limit: { index: 1 }, retryAfterMs: 60_000 });
  });
});

describe('rate limits counted in a shared store, leased', () => {
  /** A store of totals by key, shared by the "replicas" given it; how many round trips it took. */
  function fakeStore() {
    const totals = new Map<string, number>();
    let trips = 0;
    return {
      trips: () => trips,
      increment: async (key: string, _resetAt: number, by: number) => {
        trips++;
        const total = (totals.get(key) ?? 0) + by;
        totals.set(key, total);
        return total;
      },
    };
  }

  it('I7: far from the limit one round trip leases a run of numbers; the numbers are unique across replicas and never pass the limit', async () => {
    const store = fakeStore();
    const [one, two] = [sharedCounts(store), sharedCounts(store)];
    const numbers: number[] = [];
    for (let i = 0; i < 300; i++) numbers.push(await (i % 2 === 0 ? one : two).increment('k', 60_000, 6400));
    expect(new Set(numbers).size).toBe(300);
    expect(store.trips()).toBeLessThan(10);
    // Counted on until the limit: past it every number is a refusal's.
    const all = [...numbers];
    for (let i = 0; i < 7000 && all.filter((n) => n <= 6400).length < 6400; i++)
      all.push(await (i % 3 === 0 ? one : two).increment('k', 60_000, 6400));
    const allowed = all.filter((n) => n <= 6400);
    expect(new Set(allowed).size).toBe(allowed.length);
    expect(allowed.length).toBeLessThanOrEqual(6400);
    // What leases left unused is a small part of the limit.
    expect(allowed.length).toBeGreaterThanOrEqual(6300);
  });

  it.each([32, 200])(
    'I7: %i calls at once on each of two replicas: at least 98 percent of the limit allowed, never above it',
    async (inFlight) => {
      const store = fakeStore();
      const replicas = [sharedCounts(store), sharedCounts(store)];
      const numbers: number[] = [];
      // Waves of calls in flight at once on both replicas, until the limit is passed.
      for (let wave = 0; wave < 100 && numbers.filter((n) => n > 640).length === 0; wave++)
        numbers.push(
          ...(await Promise.all(
            Array.from({ length: inFlight * 2 }, (_, i) => replicas[i % 2]!.increment('k', 60_000, 640)),
          )),
        );
      const allowed = numbers.filter((n) => n <= 640);
      expect(new Set(numbers).size).toBe(numbers.length);
      expect(allowed.length).toBeLessThanOrEqual(640);
      expect(allowed.length).toBeGreaterThanOrEqual(Math.ceil(640 * 0.98));
    },
  );

  it('I7: calls waiting for a round trip share it, and an unreachable store fails each of them', async () => {
    let trips = 0;
    let fail = false;
    const counts = sharedCounts({
      increment: async (_key, _resetAt, by) => {
        trips++;
        if (fail) throw new Error('store down');
        return by;
      },
    });
    const first = await Promise.all(Array.from({ length: 20 }, () => counts.increment('k', 60_000, 6400)));
    expect(first.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(trips).toBe(1);
    fail = true;
    const failed = await Promise.allSettled(
      Array.from({ length: 300 }, () => counts.increment('k2', 60_000, 6400)),
    );
    expect(failed.every((outcome) => outcome.status === 'rejected')).toBe(true);
  });

  it('I7: near the limit every call is counted in the store, one by one: 10 allowed across two replicas, exactly', async () => {
    const store = fakeStore();
    const [one, two] = [sharedCounts(store), sharedCounts(store)];
    const numbers: number[] = [];
    for (let i = 0; i < 12; i++) numbers.push(await (i % 2 === 0 ? one : two).increment('k', 60_000, 10));
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(store.trips()).toBe(12);
  });
});
