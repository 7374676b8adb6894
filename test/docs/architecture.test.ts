/**
 * docs/architecture.md is the map of the house: every source file is named in its module list,
 * so a new module cannot land without a line saying what it is for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const map = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(join(ROOT, 'src'), path)] : [];
  });
}

describe('docs/architecture.md', () => {
  it('arch: names every source file under its folder', () => {
    const modules = map.split('## Modules')[1]?.split('## Contracts')[0] ?? '';
    const missing = sources(join(ROOT, 'src')).filter((file) => {
      const [folder, ...rest] = file.split('/');
      if (rest.length === 0) return !map.includes(`src/${folder}`);
      // Named in its folder's section as `name.ts` (or `commands/name.ts`).
      const section = modules.split(`### ${folder}`)[1]?.split('\n### ')[0] ?? '';
      return !section.includes(`\`${rest.join('/')}\``);
    });
    expect(missing).toEqual([]);
  });
});
