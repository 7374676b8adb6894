/**
 * `mcp-normalizer serve`: the aggregated server over stdio (default) or Streamable HTTP (U1, U4).
 * Over stdio, stdout carries JSON-RPC only: everything this command says goes to stderr.
 */
import type { StdioFront } from '../../app/stdio-front.js';
import { startEarly } from '../../app/head-start.js';
import { loadInTurns, turn } from '../../app/stdio-front.js';
import type { CliIO } from '../common.js';
import {
  checkProfile,
  CliError,
  EXIT,
  cliLogger,
  loadConfigOrFail,
  scrubbedIO,
  parseCommandArgs,
  parseLogLevel,
  resolveConfigPath,
} from '../common.js';

/** `serve --help`. */
export const HELP = `Usage: mcp-normalizer serve [--config FILE] [--http] [--host HOST] [--port PORT] [--watch] [--metrics-port PORT] [--status-port PORT] [--profile NAME]

Serve every configured downstream server's tools as one MCP server.

Options:
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --http            serve Streamable HTTP at /mcp instead of stdio
      --host HOST       HTTP interface to bind (default: http.host, 127.0.0.1)
      --port PORT       HTTP port, 0 for any free one (default: http.port, 3333)
      --watch           re-read the config when the file changes (SIGHUP re-reads it too)
      --metrics-port PORT  also serve Prometheus metrics at http://127.0.0.1:PORT/metrics
                        (with --http they are at /metrics on the MCP port as well)
      --profile NAME    over stdio, serve only profile NAME's tools (profiles: in the config;
                        over HTTP every profile is at /mcp/NAME)
      --status-port PORT   also serve the status page at http://127.0.0.1:PORT/status
                        (with --http it is at / and /status on the MCP port as well)
      --log-level LEVEL trace | debug | info | warn | error | silent (default: log_level)
  -h, --help            show this help

Stops cleanly on SIGINT, SIGTERM, or (stdio) when stdin closes.`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  http: { type: 'boolean' },
  host: { type: 'string' },
  port: { type: 'string' },
  'metrics-port': { type: 'string' },
  'status-port': { type: 'string' },
  profile: { type: 'string' },
  watch: { type: 'boolean' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** P1: the larger parts of what `serve` loads after its head start (app/stdio-front.ts `loadInTurns`). */
const REST_STEPS: readonly (() => Promise<unknown>)[] = [
  () => import('../../app/catalogs.js'),
  () => import('../../app/calls.js'),
  () => import('../../app/proxy.js'),
];

/** What {@link loadRest} is raced against: the host left with nothing to answer (stdio front). */
const HOST_LEFT = Symbol('host left');

/** The rest of `serve`: over stdio, in steps while the front has not seen the opening, then in one go. */
async function loadRest(front: StdioFront | undefined) {
  if (front !== undefined) await loadInTurns(REST_STEPS, front);
  return Promise.all([
    import('../../app/proxy.js'),
    import('../../app/shutdown.js'),
    import('../../log/trace.js'),
    import('../reload.js'),
    import('../report.js'),
    import('../remember-later.js'),
  ]);
}

/**
 * Runs `serve`; resolves only if startup fails, or when a stdio host left before the gateway had
 * loaded, with nothing to answer (a running server exits through the shutdown).
 */
export async function run(args: readonly string[], io: CliIO, front?: StdioFront): Promise<number> {
  const { values } = parseCommandArgs('serve', args, OPTIONS);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  const port = parsePort(values['port']);
  const metricsPort = parsePort(values['metrics-port'], '--metrics-port');
  const statusPort = parsePort(values['status-port'], '--status-port');
  const file = resolveConfigPath(values['config'] as string | undefined, process.env, process.cwd());
  const config = await loadConfigOrFail(file, io);
  const logLevel = parseLogLevel(values['log-level'] as string | undefined, config.logLevel);
  const profile = values['profile'] as string | undefined;
  checkProfile(config, profile);
  // P1, the head start: the first stdio servers (one per spare core) spawn now, and load while
  // the rest of the gateway does (this module imports only the config's loader; the rest is
  // imported below).
  // P5: a host that leaves while the gateway loads, having asked nothing the front did not answer
  // (a `mcp list` that opens, pings and closes), ends it there: no pool, no server is started.
  const headStart = startEarly(front?.hostHasLeft === true ? [] : config.servers);
  const left = front?.hostLeft.then((): typeof HOST_LEFT => HOST_LEFT);
  // P1: over stdio, the pool with the SDK's client, the calls with its server and the proxy load
  // in steps while the front has not seen the opening, then the rest in one go.
  const loading = loadRest(front);
  let loaded;
  try {
    loaded = await (left !== undefined ? Promise.race([loading, left]) : loading);
    // Node 22 loads without turning the event loop: an end of input may wait for the next turn.
    if (left !== undefined && loaded !== HOST_LEFT && (await Promise.race([left, turn()])) === HOST_LEFT)
      loaded = HOST_LEFT;
  } catch (error) {
    headStart.release();
    throw error;
  }
  if (loaded === HOST_LEFT) {
    headStart.release();
    loading.catch(() => undefined);
    cliLogger(config, logLevel).info(
      'the host left while the gateway loaded, with nothing to answer: stopping',
    );
    return EXIT.ok;
  }
  const [
    { createProxy },
    { installShutdown },
    { startTracingFromEnv },
    { installReload },
    { formatToolTable },
    { rememberLater },
  ] = loaded;
  // L2: the banner's server errors and tool descriptions come from downstreams.
  const out = scrubbedIO(io, config);
  const logger = cliLogger(config, logLevel);
  // O2: traces only when the OTEL_* variables ask for them (the SDK reads them itself).
  const stopTracing = await startTracingFromEnv(process.env, values['http'] !== true, (message) =>
    logger.warn(message),
  );
  const proxy = createProxy(config, {
    logger,
    ...(profile !== undefined ? { profile } : {}),
    // P1: the list wait counts from the process's start, not from here.
    startedAt: performance.timeOrigin,
    headStart,
  });
  let stopping = false;
  const stop = async (graceMs: number): Promise<void> => {
    stopping = true;
    await proxy.stop({ graceMs });
    await stopTracing();
  };
  // E1, P1: over stdio the host's opening message is read before anything else starts (a host
  // like Claude Code gives up on the 2026 protocol when discover is not answered in ~2.6 s).
  // The front (cli/main.ts) may have answered that message already, while this module loaded.
  const stdio =
    values['http'] !== true ? await proxy.serveStdio(front !== undefined ? { front } : {}) : undefined;
  if (front?.answeredAtMs !== undefined)
    logger.debug({ atMs: Math.round(front.answeredAtMs) }, 'opening answered while loading (stdio front)');
  // Cold start: the pool connects now (taking over the head start's children), in parallel with
  // our own endpoint coming up. Every transport is built within start(): a child not taken by now
  // belongs to no server the pool runs.
  const started = proxy.start();
  headStart.release();
  // O1, O4: the side listeners on 127.0.0.1; one that cannot listen stops everything.
  const aside = async (
    port: number | undefined,
    what: string,
    serving: string,
    listen: (port: number) => Promise<{ url: string }>,
  ): Promise<void> => {
    if (port === undefined) return;
    try {
      const { url } = await listen(port);
      logger.info({ url }, serving);
    } catch (error) {
      await proxy.stop({ graceMs: 0 });
      const message = error instanceof Error ? error.message : String(error);
      throw new CliError(`Cannot listen on 127.0.0.1:${port} for ${what}: ${message}`, EXIT.runtime);
    }
  };
  await aside(metricsPort, 'metrics', 'serving Prometheus metrics', (p) => proxy.listenMetrics(p));
  await aside(statusPort, 'the status page', 'serving the status page', (p) => proxy.listenStatus(p));

  if (stdio !== undefined) {
    // K2, issue 55: a host that leaves before a slow server listed: remember it in the background.
    void stdio.ended.then(() => rememberLater(proxy, file, logger));
    installShutdown({
      stop,
      forceKill: () => proxy.killAll(),
      logger,
      inputEnded: stdio.ended,
    });
    installReload({ proxy, file, logger, watchFile: values['watch'] === true });
    logger.info({ file }, 'serving MCP on stdio');
    // Over stdio nothing waits for the servers (P1): the log says when the first round is over
    // (not when a shutdown ended it: every server would then count as not ready).
    void started.then(() => {
      if (stopping) return;
      const servers = proxy.servers();
      logger.info(
        {
          ready: servers.filter((server) => server.state === 'ready').length,
          servers: servers.length,
          tools: proxy.catalog().tools.length,
        },
        'first connection round over',
      );
    });
    return new Promise<number>(() => undefined);
  }

  const host = values['host'] as string | undefined;
  let http;
  try {
    http = await proxy.listenHttp({
      ...(host !== undefined ? { host } : {}),
      ...(port !== undefined ? { port } : {}),
    });
  } catch (error) {
    await proxy.stop({ graceMs: 0 });
    const message = error instanceof Error ? error.message : String(error);
    throw new CliError(
      `Cannot listen on ${host ?? config.http.host}:${port ?? config.http.port}: ${message}`,
      EXIT.runtime,
    );
  }
  installShutdown({ stop, forceKill: () => proxy.killAll(), logger });
  installReload({ proxy, file, logger, watchFile: values['watch'] === true });
  await started;
  const catalog = proxy.catalog();
  const servers = proxy.servers();
  const ready = servers.filter((server) => server.state === 'ready').length;
  out.err(
    [
      `mcp-normalizer serving ${catalog.tools.length} tools from ${ready}/${servers.length} servers`,
      `  MCP endpoint (Streamable HTTP): ${http.url}`,
      `  health:                         ${http.healthUrl}`,
      `  status page:                    ${http.healthUrl.replace(/\/healthz$/, '/status')}`,
      ...(config.http.token !== undefined && config.http.token !== ''
        ? ['  send the header:                Authorization: Bearer <http.token>']
        : []),
      '',
      formatToolTable(catalog.tools),
      '',
    ].join('\n'),
  );
  return new Promise<number>(() => undefined);
}

function parsePort(value: string | boolean | undefined, flag = '--port'): number | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new CliError(`serve: ${flag} must be a number from 0 to 65535, got "${value}"`, EXIT.usage);
  }
  return port;
}
