/**
 * C5: every broken config in fixtures/configs/invalid is rejected with exactly the lines in its
 * `<name>.expected.txt` (file:line:col, key path, what is wrong, how to fix), and no Config.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadConfig } from '../../src/config/load.js';

const dir = path.resolve(import.meta.dirname, '../../fixtures/configs/invalid');
const env = { HOME: '/home/test', REMOTE_TOKEN: 'remote-secret-token' };

const cases = readdirSync(dir)
  .filter((name) => /\.(ya?ml|json)$/.test(name))
  .sort()
  .map((name) => ({
    name,
    expected: readFileSync(path.join(dir, name.replace(/\.(ya?ml|json)$/, '.expected.txt')), 'utf8')
      .split('\n')
      .filter((line) => line !== ''),
  }));

describe('fixtures/configs/invalid', () => {
  it('C5: holds at least 25 broken configs, each with its expected messages', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
    for (const c of cases) expect(c.expected.length, c.name).toBeGreaterThan(0);
  });

  it.each(cases)('C5: $name is rejected with the exact messages', async ({ name, expected }) => {
    const result = await loadConfig(path.join(dir, name), env);
    expect(result.config).toBeUndefined();
    expect(result.errors.map((problem) => formatProblem(problem, dir))).toEqual(expected);
  });

  it.each(cases)('C5: every problem of $name names a file, line and column', async ({ name }) => {
    const result = await loadConfig(path.join(dir, name), env);
    for (const problem of result.errors) {
      expect(problem.file).toMatch(/\.(ya?ml|json)$/);
      expect(problem.line).toBeGreaterThan(0);
      expect(problem.column).toBeGreaterThan(0);
    }
  });
});
