/** Issue 57: the in-process store keeps the port's promises, as Redis does (app/state/local.ts). */
import { describe, expect, it } from 'vitest';
import { createLocalStore, localBacking } from '../../../src/app/state/local.js';
import { KEYS } from '../../../src/app/state/store.js';

describe('the in-process store', () => {
  it('issue 57: values expire after their ttlMs; onlyIfAbsent keeps the first; delete removes', async () => {
    let now = 1_000;
    const store = createLocalStore(localBacking(() => now));
    const lock = KEYS.refreshLock('s', 'alice');
    expect(await store.put(lock, 'r1', { ttlMs: 100, onlyIfAbsent: true })).toBe(true);
    expect(await store.put(lock, 'r2', { ttlMs: 100, onlyIfAbsent: true })).toBe(false);
    expect(await store.get(lock)).toBe('r1');
    now += 100;
    expect(await store.get(lock)).toBeUndefined();
    expect(await store.put(lock, 'r2', { onlyIfAbsent: true })).toBe(true);
    await store.delete(lock);
    expect(await store.get(lock)).toBeUndefined();
  });

  it('issue 57, I7: a count keeps the expiry its first increment set, and starts over after it', async () => {
    let now = 0;
    const store = createLocalStore(localBacking(() => now));
    const key = KEYS.rateLimit('alice:0');
    expect(await store.increment(key, 5, 1_000)).toBe(5);
    expect(await store.increment(key, 1, 9_000)).toBe(6);
    now = 1_000;
    expect(await store.increment(key, 1, 2_000)).toBe(1);
  });

  it('issue 57, D2: fields of a map are set, replaced and removed one at a time', async () => {
    const store = createLocalStore();
    const key = KEYS.logins('b');
    await store.setField(key, 'alice', '1');
    await store.setField(key, 'bob', '2');
    await store.setField(key, 'alice', '3');
    expect(await store.fields(key)).toEqual({ alice: '3', bob: '2' });
    await store.setField(key, 'alice', undefined);
    expect(await store.fields(key)).toEqual({ bob: '2' });
    expect(await store.fields(KEYS.logins('none'))).toEqual({});
  });

  it('issue 57, D4: a message reaches each listening connection once, after the publisher’s turn; a closed one hears nothing', async () => {
    const backing = localBacking();
    const [one, two, three] = [
      createLocalStore(backing),
      createLocalStore(backing),
      createLocalStore(backing),
    ];
    const heard: string[] = [];
    await one.subscribe('c', (message) => heard.push(`one ${message}`));
    await one.subscribe('c', (message) => heard.push(`one again ${message}`));
    await two.subscribe('c', (message) => heard.push(`two ${message}`));
    expect(await three.publish('c', 'hi')).toBe(2);
    expect(heard).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard.sort()).toEqual(['one again hi', 'one hi', 'two hi']);
    await two.close();
    expect(await three.publish('c', 'again')).toBe(1);
    expect(two.health()).toMatchObject({ ok: false });
    await expect(two.get('x')).rejects.toThrow('closed');
  });
});
