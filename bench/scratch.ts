/**
 * Imported first by every bench entry point: the run's temp folders (generated configs, nginx
 * prefixes) go under one scratch folder (`TMPDIR`, which `os.tmpdir()` and the targets started
 * with our environment read), removed when the run exits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-bench-run-'));
process.env['TMPDIR'] = dir;
process.on('exit', () => {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  } catch {
    // A child still writing into it: left for the system's temp cleaning, never an exit error.
  }
});
