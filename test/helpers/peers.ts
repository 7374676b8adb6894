/**
 * The system peers some tests run that npm does not bring (nginx, Chromium, Redis), from Debian. `npm
 * test`'s pretest installs them when it runs as root (CI does); without root it installs nothing
 * and says which are missing. A test file that needs one declares it here: when the peer is
 * missing, its suite is skipped under a title that names the peer and the one command that
 * installs it, and under CI (`CI=true`), where every test must run, it fails with that command.
 */
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';

/** A system peer: where its program is, and the Debian package that brings it. */
export const PEERS = {
  nginx: { paths: ['/usr/sbin/nginx', '/usr/bin/nginx'], package: 'nginx' },
  chromium: { paths: ['/usr/bin/chromium'], package: 'chromium' },
  'redis-server': { paths: ['/usr/bin/redis-server'], package: 'redis-server' },
} as const;

export type Peer = keyof typeof PEERS;

/** The program of `peer`, or undefined when it is not installed. */
export function peerPath(peer: Peer): string | undefined {
  // MCP_NORMALIZER_HIDE_PEERS=nginx,chromium: act as if they were missing (to see the skip).
  if ((process.env['MCP_NORMALIZER_HIDE_PEERS'] ?? '').split(',').includes(peer)) return undefined;
  return PEERS[peer].paths.find((path) => existsSync(path));
}

/** The one command that installs `peers`. */
export function installCommand(peers: readonly Peer[]): string {
  return `apt-get install -y ${peers.map((peer) => PEERS[peer].package).join(' ')}`;
}

/**
 * `describe` for a suite that needs `peers`: as it is when they are installed; skipped with a
 * title naming what is missing and how to install it; under CI, one failing test saying so.
 */
export function describeWith(peers: readonly Peer[]): typeof describe {
  const missing = peers.filter((peer) => peerPath(peer) === undefined);
  if (missing.length === 0) return describe;
  const why = `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing (install, as root: ${installCommand(missing)})`;
  if (process.env['CI'] === 'true')
    return ((title: string) =>
      describe(title, () => {
        it(`needs a system peer: ${why}`, () => {
          throw new Error(`this suite runs a real system peer, and ${why}`);
        });
      })) as unknown as typeof describe;
  return ((title: string, ...rest: unknown[]) =>
    (describe.skip as (...args: unknown[]) => void)(
      `${title} [SKIPPED: ${why}]`,
      ...rest,
    )) as unknown as typeof describe;
}
