/**
 * K5, K6: the state folder as the gateway finds it: made 0700, never through a symbolic link, and
 * its files read only within bounds (app/state/state-files.ts).
 */
import { chmodSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStateFile, secureStateDir, StateFolderError } from '../../src/app/state/state-files.js';
import { stateDirPath } from '../../src/config/normalize.js';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'state-dir-'));
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('the state folder', () => {
  it('K6: a missing folder is created 0700; one open to others, and its catalogs/ and pins/, are made 0700', () => {
    const missing = join(fresh(), 'a', 'mcp-normalizer');
    secureStateDir(missing);
    expect(mode(missing)).toBe(0o700);
    const open = fresh();
    chmodSync(open, 0o777);
    mkdirSync(join(open, 'catalogs'), { mode: 0o755 });
    mkdirSync(join(open, 'pins'), { mode: 0o770 });
    chmodSync(join(open, 'pins'), 0o770);
    secureStateDir(open);
    for (const path of [open, join(open, 'catalogs'), join(open, 'pins')]) expect(mode(path)).toBe(0o700);
  });

  it.each(['catalogs', 'pins'])('K6: a %s/ that is a symbolic link is refused, naming it', (name) => {
    const dir = fresh();
    const elsewhere = fresh();
    symlinkSync(elsewhere, join(dir, name));
    expect(() => secureStateDir(dir)).toThrow(StateFolderError);
    expect(() => secureStateDir(dir)).toThrow(new RegExp(`${name}/ as a symbolic link`));
  });

  it('K5, K6: a state file that is a symbolic link is not followed', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'real.json'), '{"version":1}');
    symlinkSync(join(dir, 'real.json'), join(dir, 'link.json'));
    expect(readStateFile(join(dir, 'real.json'))).toEqual({ version: 1 });
    expect(readStateFile(join(dir, 'link.json'))).toBeUndefined();
  });

  it.each([
    ['an absolute XDG_STATE_HOME', { XDG_STATE_HOME: '/xdg', HOME: '/home/u' }, '/xdg/mcp-normalizer'],
    [
      'an empty XDG_STATE_HOME',
      { XDG_STATE_HOME: '', HOME: '/home/u' },
      '/home/u/.local/state/mcp-normalizer',
    ],
    [
      'a relative XDG_STATE_HOME',
      { XDG_STATE_HOME: 'state', HOME: '/home/u' },
      '/home/u/.local/state/mcp-normalizer',
    ],
  ])('K6: %s', (_what, env, dir) => {
    expect(stateDirPath(undefined, '/cfg', env)).toBe(dir);
  });
});
