/** U3: what check points out beside its problems (src/cli/hints.ts), as a table. */
import { describe, expect, it } from 'vitest';
import { configHints } from '../../src/cli/hints.js';
import type { Config } from '../../src/config/types.js';
import type { Catalog } from '../../src/core/catalog.js';

const tool = (name: string, server: string, gated = false) => ({
  name,
  server,
  ...(gated ? { gate: { value: name.toUpperCase() } } : {}),
});
const catalog = (tools: ReturnType<typeof tool>[]) => ({ tools }) as unknown as Catalog;
const config = (over: Partial<Config> = {}) => ({ profiles: {}, ...over }) as unknown as Config;

describe('check hints', () => {
  it('T7: a server whose every tool is destructive is pointed out; one with a safe tool is not', () => {
    const hints = configHints(
      config(),
      catalog([
        tool('x_write', 'x', true),
        tool('x_delete', 'x', true),
        tool('y_a', 'y', true),
        tool('y_b', 'y'),
      ]),
      () => true,
      true,
    );
    expect(hints).toEqual([expect.stringContaining('every tool of "x" (2) is marked destructive')]);
  });

  it('I3, I6: an access rule or a profile that selects none of the tools is pointed out, once every server is up', () => {
    const written = config({
      access: [
        { principals: ['group:dev'], allow: ['c_*'] },
        { principals: ['local'], allow: ['git_*'] },
      ],
      profiles: { readers: { tools: ['c_count'] }, typo: { tools: ['cc_*'] } },
    } as unknown as Partial<Config>);
    const tools = catalog([tool('c_count', 'c'), tool('c_hit', 'c')]);
    const sees = (profile: string, name: string) => (profile === 'readers' ? name === 'c_count' : false);
    expect(configHints(written, tools, sees, true)).toEqual([
      expect.stringContaining('access rule 2 (local) allows none of the 2 tools'),
      expect.stringContaining('profile "typo" selects none of the 2 tools'),
    ]);
    // A server still down may hold what they select: nothing is said then.
    expect(configHints(written, tools, sees, false)).toEqual([]);
  });
});
