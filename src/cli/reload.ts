/**
 * O3: `SIGHUP` and `serve --watch` re-read the config. An invalid file changes nothing and logs
 * every problem with its file:line:column; a valid one is applied by {@link Proxy.reload}
 * (servers added, changed or removed; the rest untouched) and what cannot change live (the
 * listen address, the token, output settings, ...) is logged as needing a restart. Reloads run
 * one at a time; one asked for during another runs after it, once.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import type { Proxy } from '../app/proxy.js';
import { formatProblem, loadConfig } from '../config/load.js';

/** How long file events settle before a `--watch` reload (editors write in several steps). */
const SETTLE_MS = 200;

/** Installs the reload triggers; returns the function that removes them. */
export function installReload(options: {
  readonly proxy: Proxy;
  readonly file: string;
  readonly logger: Logger;
  readonly watchFile: boolean;
}): () => void {
  const { proxy, file, logger } = options;
  let running: Promise<void> | undefined;
  let again = false;

  async function reloadOnce(why: string): Promise<void> {
    const { config, errors } = await loadConfig(file, process.env);
    if (config === undefined || errors.length > 0) {
      for (const error of errors) logger.error({ why }, `config not reloaded: ${formatProblem(error)}`);
      logger.error({ why, file, problems: errors.length }, 'config not reloaded: the running one stays');
      return;
    }
    const { restartNeeded } = await proxy.reload(config);
    if (restartNeeded.length > 0) {
      logger.warn({ why, keys: restartNeeded }, 'config reloaded; these settings need a restart to apply');
    } else logger.info({ why }, 'config reloaded');
  }

  function reload(why: string): void {
    if (running !== undefined) {
      again = true;
      return;
    }
    running = reloadOnce(why)
      .catch((error: unknown) => logger.error({ err: error, why }, 'config reload failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          reload(why);
        }
      });
  }

  const onHangUp = (): void => reload('SIGHUP');
  process.on('SIGHUP', onHangUp);
  let watcher: FSWatcher | undefined;
  let settle: NodeJS.Timeout | undefined;
  if (options.watchFile) {
    watcher = watch(file, () => {
      clearTimeout(settle);
      settle = setTimeout(() => reload('--watch'), SETTLE_MS);
    });
    watcher.on('error', (error) => logger.warn({ err: error, file }, 'cannot watch the config file'));
  }
  return () => {
    process.off('SIGHUP', onHangUp);
    clearTimeout(settle);
    watcher?.close();
  };
}
