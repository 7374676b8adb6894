/**
 * T10, E4: the list-change bus tells no one of a change before any host was answered that list
 * (a 2026 host with a listen stream open from the start was told of each server coming up
 * before its first tools/list, whose answer already held them all).
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { createNotifier } from '../../src/upstream/notifier.js';

const quiet = { debug: () => undefined } as unknown as Logger;

describe('the list-change bus', () => {
  it('T10: a change before any host was answered that list is told to no one; after it, to the listen streams', () => {
    const notifier = createNotifier(quiet);
    const events: string[] = [];
    notifier.bus.subscribe((event) => void events.push(event.kind));
    notifier.toolsChanged();
    notifier.promptsChanged();
    expect(events).toEqual([]);
    notifier.listed({} as Server, 'tools');
    notifier.toolsChanged();
    notifier.promptsChanged();
    // Prompts were answered to no one yet: still nothing to tell of them.
    expect(events).toEqual(['tools_list_changed']);
  });
});
