/**
 * The peers some tests run that npm does not bring: nginx, Chromium and Redis (from Debian, or
 * anywhere on the PATH), and the Python MCP SDK and FastMCP (`.peers/python`, from pip). `npm
 * test`'s pretest installs them when it can (the Debian ones as root, as CI runs); otherwise it
 * installs nothing and says which are missing. A test file that needs one declares it here: when
 * the peer is missing, its suite is skipped under a title that names the peer and the command
 * that installs it, and under CI (`CI=true`), where every test must run, it fails with that command.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from 'vitest';
import { ROOT } from './fixtures.js';

/** A peer: where its program is looked for, and what installs it. */
export const PEERS = {
  nginx: { program: 'nginx', paths: ['/usr/sbin/nginx', '/usr/bin/nginx'], package: 'nginx' },
  chromium: { program: 'chromium', paths: ['/usr/bin/chromium'], package: 'chromium' },
  'redis-server': { program: 'redis-server', paths: ['/usr/bin/redis-server'], package: 'redis-server' },
  python: {
    program: undefined,
    paths: [join(ROOT, '.peers', 'python', 'bin', 'python')],
    package: undefined,
  },
} as const;

export type Peer = keyof typeof PEERS;

/** The program of `peer`, or undefined when it is not installed (its known paths, then the PATH). */
export function peerPath(peer: Peer): string | undefined {
  // MCP_NORMALIZER_HIDE_PEERS=nginx,chromium: act as if they were missing (to see the skip).
  if ((process.env['MCP_NORMALIZER_HIDE_PEERS'] ?? '').split(',').includes(peer)) return undefined;
  const { program, paths } = PEERS[peer];
  const onPath =
    program === undefined
      ? []
      : (process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, program));
  return [...paths, ...onPath].find((path) => path !== program && existsSync(path));
}

/** The one command that installs `peers`. */
export function installCommand(peers: readonly Peer[]): string {
  const debian = peers.flatMap((peer) => (PEERS[peer].package === undefined ? [] : [PEERS[peer].package]));
  return [
    ...(debian.length > 0 ? [`apt-get install -y ${debian.join(' ')} (as root)`] : []),
    ...(peers.includes('python') ? ['bash scripts/install-peers.sh (needs pip to reach its index)'] : []),
  ].join('; ');
}

/**
 * `describe` for a suite that needs `peers`: as it is when they are installed; skipped with a
 * title naming what is missing and how to install it; under CI, one failing test saying so.
 */
export function describeWith(peers: readonly Peer[]): typeof describe {
  const missing = peers.filter((peer) => peerPath(peer) === undefined);
  if (missing.length === 0) return describe;
  const why = `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing (install: ${installCommand(missing)})`;
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
