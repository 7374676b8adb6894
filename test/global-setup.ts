/**
 * Says which system peers are missing (test/helpers/peers.ts), and makes one scratch folder per test run. Every temp folder a test makes (`mkdtemp(tmpdir())`) and
 * every child process it starts (they inherit `TMPDIR`) lands in it, and it is removed when the
 * run ends: a run leaves nothing behind in the system's temp folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installCommand, PEERS, peerPath, type Peer } from './helpers/peers.js';

export default function setup(): () => void {
  // The suites that need a missing system peer are skipped (a failure under CI): say so first,
  // where it is read, with the one command that installs them.
  const missing = (Object.keys(PEERS) as Peer[]).filter((peer) => peerPath(peer) === undefined);
  if (missing.length > 0)
    process.stderr.write(
      `\n*** ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing: the suites that run ${missing.length > 1 ? 'them' : 'it'} are ${process.env['CI'] === 'true' ? 'FAILED' : 'SKIPPED'}. Install: ${installCommand(missing)} ***\n\n`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-test-'));
  // The test workers are started after this, with this environment.
  process.env['TMPDIR'] = dir;
  return () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
