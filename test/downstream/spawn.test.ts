/**
 * C3: what a stdio child inherits. `spawn.ts` keeps its own copy of the SDK's safe default set
 * (the SDK's module loads the whole client bundle): the two must stay equal.
 */
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import type { StdioTransportConfig } from '../../src/config/types.js';
import { inheritedEnvironment, spawnSpec } from '../../src/downstream/spawn.js';
import { stdioTransport } from '../helpers/fixtures.js';

describe('a stdio child environment (C3)', () => {
  it("C3: a child inherits exactly the SDK's safe default set of our environment", () => {
    expect(inheritedEnvironment()).toEqual(getDefaultEnvironment());
  });

  it.each([
    ['kept', { PATH: '/bin', HOME: '/h', SECRET_TOKEN: 'x' }, { PATH: '/bin', HOME: '/h' }],
    ['a shell function left out', { PATH: '/bin', SHELL: '() { :; }' }, { PATH: '/bin' }],
    ['nothing set', {}, {}],
  ])('C3: inherited environment, %s', (_case, env, expected) => {
    if (process.platform === 'win32') return;
    expect(inheritedEnvironment(env)).toEqual(expected);
  });

  it('C3: the configured env wins over the inherited set', () => {
    const spec = spawnSpec({
      ...(stdioTransport('node', ['s.js']) as StdioTransportConfig),
      env: { PATH: '/only/this' },
    });
    expect(spec.env['PATH']).toBe('/only/this');
    expect(spec).toMatchObject({ command: 'node', args: ['s.js'] });
  });
});
