/**
 * T10, E4: the list-change bus tells no one of a change before any host was answered that list
 * (a 2026 host with a listen stream open from the start was told of each server coming up
 * before its first tools/list, whose answer already held them all), and tells 2026 hosts of a
 * burst of changes once.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COALESCE_MS, createNotifier } from '../../src/upstream/notifier.js';

const quiet = { debug: () => undefined } as unknown as Logger;

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('the list-change bus', () => {
  it('T10: a change before any host was answered that list is told to no one; after it, to the listen streams', () => {
    const notifier = createNotifier(quiet);
    const events: string[] = [];
    notifier.bus.subscribe((event) => void events.push(event.kind));
    notifier.toolsChanged();
    notifier.promptsChanged();
    vi.advanceTimersByTime(COALESCE_MS);
    expect(events).toEqual([]);
    notifier.listed({} as Server, 'tools');
    notifier.toolsChanged();
    notifier.promptsChanged();
    vi.advanceTimersByTime(COALESCE_MS);
    // Prompts were answered to no one yet: still nothing to tell of them.
    expect(events).toEqual(['tools_list_changed']);
  });

  it('T10: seven servers coming up one after another are one notification to 2026 hosts, and a later change another', () => {
    const notifier = createNotifier(quiet);
    const events: string[] = [];
    notifier.bus.subscribe((event) => void events.push(event.kind));
    notifier.listed({} as Server, 'tools');
    for (let server = 0; server < 7; server++) {
      notifier.toolsChanged();
      vi.advanceTimersByTime(COALESCE_MS / 7);
    }
    vi.advanceTimersByTime(COALESCE_MS);
    expect(events).toEqual(['tools_list_changed']);
    notifier.toolsChanged();
    vi.advanceTimersByTime(COALESCE_MS);
    expect(events).toEqual(['tools_list_changed', 'tools_list_changed']);
  });
});
