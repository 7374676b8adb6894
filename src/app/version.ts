/**
 * The package's own name and version, read once from its package.json: announced as
 * `serverInfo` in `initialize` and printed by `--version`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package name, also the upstream server's name. */
export const PACKAGE_NAME = 'mcp-normalizer';

let cached: string | undefined;

/**
 * The version in package.json. Walks up from this file because the depth differs between the
 * sources (`src/app`, run by tsx/vitest) and the build (`dist/src/app`); `0.0.0` if not found.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') {
        cached = pkg.version;
        return cached;
      }
    } catch {
      // No package.json at this level: keep walking up.
    }
    dir = dirname(dir);
  }
  cached = '0.0.0';
  return cached;
}
