/**
 * Issue 48, K2: what a replica takes from the store the replicas share and gives it, on the
 * in-process store (app/state/local.ts) with a real state folder. A server whose first attempt
 * fails at once is remembered as listing nothing in this folder; that stand-in must neither hide
 * the catalog another replica remembered in the store nor reach the store itself.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLocalStore, localBacking } from '../../../src/app/state/local.js';
import { createMemory } from '../../../src/app/state/memory.js';
import { memoryPaths, readCatalogFile } from '../../../src/app/state/memory-files.js';
import { loadShared, seedShared, sharedNames } from '../../../src/app/state/shared-memory.js';
import { KEYS } from '../../../src/app/state/store.js';
import type { ServerSnapshot } from '../../../src/downstream/snapshot.js';
import { memoryConfig } from '../../helpers/fixtures.js';

const logger = pino({ level: 'silent' });
const server = memoryConfig('memory');
const down = {
  state: 'down',
  toolsWithheld: true,
  tools: [],
  features: { prompts: [], resources: [], resourceTemplates: [] },
};

/** What another replica remembered of `server` and put in the store. */
const theirs = {
  version: 1,
  server: 'memory',
  savedAt: '2026-11-29T20:18:04.736Z',
  tools: [{ name: 'read_graph', inputSchema: { type: 'object' } }],
  features: { prompts: [], resources: [], resourceTemplates: [] },
};

function replica(stateDir: string) {
  const where = { stateDir };
  const memory = createMemory({
    config: { ...where, pinning: 'warn' },
    logger,
    scrub: undefined,
    pinsChanged: () => undefined,
  });
  /** The first attempt of `server` failed before anything was read from the store. */
  const failedAtOnce = (): void => {
    expect(memory.remembers(server)).toBe(false);
    memory.stateChanged(server.name, 'down');
  };
  const listed = (): string[] =>
    memory
      .listing(server, down as unknown as ServerSnapshot)
      .tools.map((tool) => (tool as { name: string }).name);
  return { where, memory, failedAtOnce, listed };
}

describe('the memory the replicas share', () => {
  it('K2, issue 48: a server that failed at once, before the store was read, is listed from what the store remembers', async () => {
    const store = createLocalStore(localBacking(Date.now));
    const two = replica(mkdtempSync(join(tmpdir(), 'shared-memory-')));
    await store.put(KEYS.state(sharedNames(two.where, server).catalog), JSON.stringify(theirs));
    two.failedAtOnce();
    expect(two.listed()).toEqual([]);
    expect(await loadShared(store, two.memory, [server], two.where, logger)).toBe(true);
    expect(two.listed()).toEqual(['read_graph']);
    await two.memory.close();
  });

  it('K2: the stand-in stays in its folder: not given to the store, and replaced by the store after a restart', async () => {
    const store = createLocalStore(localBacking(Date.now));
    const stateDir = mkdtempSync(join(tmpdir(), 'shared-memory-'));
    const first = replica(stateDir);
    first.failedAtOnce();
    await first.memory.close();
    const path = memoryPaths(stateDir, server).catalog;
    expect(readCatalogFile(path)).toMatchObject({ tools: [], firstAttemptFailed: true });
    await seedShared(store, [server], first.where, logger);
    const key = KEYS.state(sharedNames(first.where, server).catalog);
    expect(await store.get(key)).toBeUndefined();

    // Another replica remembers the server; this one starts again, its server still failing.
    await store.put(key, JSON.stringify(theirs));
    const again = replica(stateDir);
    expect(again.memory.remembers(server)).toBe(true);
    expect(again.listed()).toEqual([]);
    expect(await loadShared(store, again.memory, [server], again.where, logger)).toBe(true);
    expect(again.listed()).toEqual(['read_graph']);
    await again.memory.close();
  });

  it('K2: a catalog this replica listed itself is kept, whatever the store holds', async () => {
    const store = createLocalStore(localBacking(Date.now));
    const own = replica(mkdtempSync(join(tmpdir(), 'shared-memory-')));
    await store.put(KEYS.state(sharedNames(own.where, server).catalog), JSON.stringify(theirs));
    own.memory.remembers(server);
    own.memory.stateChanged(server.name, 'ready');
    const live = {
      ...down,
      state: 'ready',
      toolsWithheld: false,
      tools: [{ name: 'mine', inputSchema: { type: 'object' } }],
    };
    own.memory.listing(server, live as unknown as ServerSnapshot);
    own.memory.stateChanged(server.name, 'down');
    expect(await loadShared(store, own.memory, [server], own.where, logger)).toBe(false);
    expect(own.listed()).toEqual(['mine']);
    await own.memory.close();
  });
});
