/**
 * One scratch folder per test run. Every temp folder a test makes (`mkdtemp(tmpdir())`) and
 * every child process it starts (they inherit `TMPDIR`) lands in it, and it is removed when the
 * run ends: a run leaves nothing behind in the system's temp folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-test-'));
  // The test workers are started after this, with this environment.
  process.env['TMPDIR'] = dir;
  return () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
