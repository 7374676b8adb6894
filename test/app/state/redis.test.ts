/**
 * K2, issue 57: a store command's one-second bound is the store's, not the loading of `redis`
 * (app/state/redis.ts loads it lazily). On a loaded machine the module can take most of a second
 * to load; a replica's first read (the remembered catalogs) must not be cut short by it. And a
 * store whose first connection attempt failed fails a command at once, with why.
 * `redis` is replaced by a client answering from memory, behind a gate the test opens.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRedisStore } from '../../../src/app/state/redis.js';
import { KEY_PREFIX } from '../../../src/app/state/store.js';

const redis = vi.hoisted(() => {
  let open: () => void = () => undefined;
  const state = {
    gate: Promise.resolve(),
    /** The next client's `get`; a promise that never settles stands for a silent Redis. */
    answer: (key: string): Promise<string | null> => Promise.resolve(`value of ${key}`),
    /** Why the next client's first connection attempt fails (it then retries, never connecting). */
    refused: undefined as string | undefined,
    shut() {
      state.gate = new Promise<void>((resolve) => (open = resolve));
    },
    open: () => open(),
  };
  return state;
});

vi.mock('redis', async () => {
  await redis.gate;
  const { EventEmitter } = await import('node:events');
  return {
    createClient: () =>
      Object.assign(new EventEmitter(), {
        connect(this: InstanceType<typeof EventEmitter>) {
          const refused = redis.refused;
          if (refused === undefined) return Promise.resolve();
          // As node-redis does: the attempt's error is emitted, and `connect` waits for a retry.
          queueMicrotask(() => this.emit('error', new Error(refused)));
          return new Promise(() => undefined);
        },
        get(key: string) {
          if (redis.refused !== undefined) return Promise.reject(new Error('The client is offline'));
          return redis.answer(key);
        },
        destroy: () => undefined,
      }),
  };
});

const silent = pino({ level: 'silent' });

describe('the Redis store: what its bound covers', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    redis.answer = (key) => Promise.resolve(`value of ${key}`);
    redis.refused = undefined;
  });

  it('K2, issue 57: a command issued while `redis` loads waits for it, then has its whole second', async () => {
    redis.shut();
    const store = createRedisStore('redis://127.0.0.1:1', silent);
    const got = store.get('state:catalogs/e.json');
    got.catch(() => undefined);
    // Loading takes longer than the bound itself (a machine with every core busy).
    await vi.advanceTimersByTimeAsync(1500);
    redis.open();
    await expect(got).resolves.toBe(`value of ${KEY_PREFIX}state:catalogs/e.json`);
    await store.close();
  });

  it('K2: a Redis that does not answer still fails the command after a second', async () => {
    const store = createRedisStore('redis://127.0.0.1:1', silent);
    redis.answer = () => new Promise(() => undefined);
    const got = store.get('state:catalogs/e.json');
    got.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(999);
    let settled = false;
    void got.finally(() => (settled = true)).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(got).rejects.toThrow('no answer within 1000 ms');
    await store.close();
  });

  it('K2, issue 48: once the first attempt to connect failed, a command fails at once, with why', async () => {
    redis.refused = 'connect ECONNREFUSED 127.0.0.1:6390';
    const store = createRedisStore('redis://127.0.0.1:6390', silent);
    const got = store.get('state:catalogs/e.json');
    got.catch(() => undefined);
    // No timer needs to fire: the command does not wait for its bound.
    await expect(got).rejects.toThrow('unreachable: connect ECONNREFUSED 127.0.0.1:6390');
    expect(store.health()).toMatchObject({ ok: false, error: 'connect ECONNREFUSED 127.0.0.1:6390' });
    await store.close();
  });
});
