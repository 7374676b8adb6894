/**
 * The Python peers (the official `mcp` SDK and FastMCP), installed by `scripts/install-peers.sh`
 * into `.peers/python` (`.ci/run` runs it). A suite that needs them declares it with
 * `describeWith(['python'])` (helpers/peers.ts): skipped, named, where pip cannot reach its index;
 * failing under CI, where every peer we claim to work with is tested.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './fixtures.js';

/** The venv's interpreter. */
export const PYTHON = join(ROOT, '.peers', 'python', 'bin', 'python');

/** Where the Python fixtures live. */
export const PYTHON_FIXTURES = join(ROOT, 'fixtures', 'python');

/** The interpreter, or an error that says how to install it. */
export function python(): string {
  if (!existsSync(PYTHON)) {
    throw new Error(`${PYTHON} is missing: run bash scripts/install-peers.sh (.ci/run does)`);
  }
  return PYTHON;
}

/** A YAML server entry running a Python fixture with the venv's interpreter. */
export function pythonEntry(name: string, script: string, args: readonly string[] = []): string {
  return [
    `  ${name}:`,
    `    command: ${JSON.stringify(python())}`,
    `    args: ${JSON.stringify([join(PYTHON_FIXTURES, script), ...args])}`,
  ].join('\n');
}
