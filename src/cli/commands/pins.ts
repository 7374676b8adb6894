/**
 * `mcp-normalizer pins` and `pins approve <server> [name]` (K3, K4): the definitions that differ
 * from their pins, with the diff, read from the state folder (the gateway's remembered catalogs,
 * no server is started); an approval pins them as they are now, and a running gateway picks it up
 * (within two seconds) without a restart.
 */
import type { Config, ServerConfig } from '../../config/types.js';
import { approve, comparePins, reviewDigest, type DefinitionChange, type PinSet } from '../../core/pins.js';
import { commandLine } from '../../config/command-line.js';
import { parseBoundedJson, STATE_FILE_BOUNDS } from '../../core/bounded-json.js';
import {
  catalogOf,
  memoryPaths,
  pinsFile,
  pinsOf,
  readCatalogFile,
  readPinsFile,
  sha256,
  writePinsFile,
  type CatalogFile,
} from '../../app/state/memory-files.js';
import { sharedNames } from '../../app/state/shared-memory.js';
import { createRedisStore } from '../../app/state/redis.js';
import { KEYS, type SharedStore } from '../../app/state/store.js';
import pino from 'pino';
import type { CliIO } from '../common.js';
import { CliError, EXIT, loadConfigOrFail, parseCommandArgs, resolveConfigPath } from '../common.js';

/** `pins --help`. */
export const HELP = `Usage: mcp-normalizer pins [--json] [--config FILE]
       mcp-normalizer pins approve <server> [name] --digest D [--config FILE]

Every tool and prompt definition the model reads is pinned by its SHA-256 when the gateway
first sees it. \`pins\` lists the definitions that differ from their pins now (and, under
\`pinning: hold\`, the new tools of a pinned server), with what changed and the command that approves
exactly that: \`pins approve\` pins them as they were shown (one by its downstream name, or every
change of the server), named by the review digest \`pins\` printed; if the server changed since, it
approves nothing and says so. Without --digest it shows what it would approve, and the command. A
running gateway picks an approval up within two seconds. With \`store:\` the store is read first and
an approval goes there first, where every replica takes it; without the store, nothing is approved.

Options:
  -c, --config FILE   config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --json          the changes as JSON
      --digest D      (approve) the review digest \`pins\` printed for what you approve
  -h, --help          show this help

Exit codes: 0 done, 1 nothing approved (not reviewed, or changed since), 2 usage error, 3 invalid config,
4 the store could not be reached.`;

/** The store client's own log lines are not this command's output. */
const quiet = pino({ level: 'silent' });

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  digest: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Issue 48: the store the replicas share, when the config names one (its files come first). */
type Shared = { get(name: string): Promise<string | undefined> } | undefined;

/** What is remembered of one server, and its changes. */
interface ServerState {
  readonly paths: ReturnType<typeof memoryPaths>;
  readonly catalog: CatalogFile | undefined;
  readonly pins: PinSet | undefined;
  /** What the catalog lists (when there are pins to compare it with). */
  readonly listing?: { readonly tools: readonly unknown[]; readonly prompts: readonly unknown[] };
  readonly changes: readonly DefinitionChange[];
  /** Why the store could not be read (this folder's files were used). */
  readonly unread?: string;
}

/** What is remembered of `server` (in the shared store, else this folder), and its changes. */
async function stateOf(config: Config, server: ServerConfig, shared: Shared): Promise<ServerState> {
  const paths = memoryPaths(config.stateDir, server, config.file);
  const names = sharedNames(config, server);
  let unread: string | undefined;
  const fromStore = async (name: string): Promise<unknown> => {
    const json = await shared?.get(KEYS.state(name)).catch((error: unknown) => {
      unread = error instanceof Error ? error.message : String(error);
      return undefined;
    });
    return parseBoundedJson(json, STATE_FILE_BOUNDS);
  };
  const catalog = catalogOf(await fromStore(names.catalog)) ?? readCatalogFile(paths.catalog);
  const pins =
    pinsOf(await fromStore(names.pins)) ?? readPinsFile(paths.pins) ?? readPinsFile(paths.pinsByEntry);
  const read = unread === undefined ? {} : { unread };
  if (catalog === undefined || pins === undefined) return { paths, catalog, pins, changes: [], ...read };
  const listing = { tools: catalog.tools, prompts: catalog.features.prompts };
  // `off` shows nothing to approve; `warn` pins a new tool at once, `hold` waits for it.
  const mode = config.pinning === 'off' ? 'hold' : config.pinning;
  return {
    paths,
    catalog,
    pins,
    listing,
    changes: comparePins(server.name, pins, listing, mode, sha256).changes,
    ...read,
  };
}

/** Issue 48: the store named by the config could not be read; what was shown instead. */
function unreadNote(store: SharedStore, why: string): string {
  return `note: the store at ${store.where} could not be read (${why}): this folder's catalogs and pins are shown, which other replicas may not share`;
}

/** K4: the command that approves exactly `changes` (of one server; one tool when `tool` is named). */
function approveLine(changes: readonly DefinitionChange[], tool?: string): string {
  const server = changes[0]!.server;
  const args = ['pins', 'approve', server, ...(tool !== undefined ? [tool] : [])];
  return `  approve: ${commandLine([...args, '--digest', reviewDigest(changes, sha256)])}`;
}

function format(change: DefinitionChange): string {
  const head = `${change.server}  ${change.kind} ${change.name}  ${change.change}`;
  return [head, ...change.diff.map((line) => `    ${line}`)].join('\n');
}

/** Runs `pins`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs('pins', args, OPTIONS, true);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  const file = resolveConfigPath(values['config'] as string | undefined, process.env, process.cwd());
  const config = await loadConfigOrFail(file, io);
  const servers = config.servers.filter((server) => server.enabled);
  const store = config.store === undefined ? undefined : createRedisStore(config.store.url, quiet);
  try {
    return await command(config, servers, positionals, values, io, store);
  } finally {
    await store?.close();
  }
}

async function command(
  config: Config,
  servers: readonly ServerConfig[],
  positionals: readonly string[],
  values: Record<string, unknown>,
  io: CliIO,
  store: SharedStore | undefined,
): Promise<number> {
  const [verb, name, tool, ...extra] = positionals;
  if (verb === undefined) {
    const states = await Promise.all(servers.map((server) => stateOf(config, server, store)));
    const changes = states.flatMap((state) => state.changes);
    if (values['json'] === true) io.out(JSON.stringify(changes, null, 2));
    else if (changes.length === 0) io.out('No definition differs from its pin.');
    else
      io.out(
        states
          .filter((state) => state.changes.length > 0)
          .map((state) => `${state.changes.map(format).join('\n')}\n${approveLine(state.changes)}`)
          .join('\n'),
      );
    servers.forEach((server, i) => {
      if (states[i]?.catalog === undefined)
        io.err(`note: nothing is remembered of "${server.name}" yet (the gateway has not listed it)`);
    });
    if (config.pinning === 'off') io.err('note: pinning is off in this config: changes are not acted on');
    const unread = states.find((state) => state.unread !== undefined)?.unread;
    if (store !== undefined && unread !== undefined) io.err(unreadNote(store, unread));
    return EXIT.ok;
  }
  if (verb !== 'approve' || name === undefined || extra.length > 0)
    throw new CliError('pins: expected `pins` or `pins approve <server> [name]`', EXIT.usage);
  const server = servers.find((candidate) => candidate.name === name);
  if (server === undefined)
    throw new CliError(
      `pins approve: no enabled server "${name}"; servers: ${servers.map((s) => s.name).join(', ')}`,
      EXIT.usage,
    );
  const state = await stateOf(config, server, store);
  // Issue 48: the replicas take an approval from the store; one made without it reaches none.
  if (store !== undefined && state.unread !== undefined) {
    io.err(
      `Nothing approved: the store at ${store.where} could not be read (${state.unread}); every replica takes approvals from it. Run this again once it is reachable.`,
    );
    return EXIT.runtime;
  }
  if (state.pins === undefined || state.listing === undefined) {
    io.err(`Nothing to approve: "${name}" has no pins yet (they are made when the gateway first lists it).`);
    return EXIT.ok;
  }
  const shown = state.changes.filter((change) => tool === undefined || change.name === tool);
  const digest = values['digest'] as string | undefined;
  if (shown.length > 0 && digest === undefined) {
    // K4: nothing is approved that was not reviewed: this is the review.
    io.out(`${shown.map(format).join('\n')}\n${approveLine(shown, tool)}`);
    io.err(`Nothing approved yet: review the changes above, then run the command under them.`);
    return EXIT.problems;
  }
  if (shown.length > 0 && digest !== reviewDigest(shown, sha256)) {
    io.err(
      `Nothing approved: what "${name}" serves changed since digest ${String(digest)} was shown (it is ${reviewDigest(shown, sha256)} now); review it again: ${commandLine(['pins'])}`,
    );
    return EXIT.problems;
  }
  const { pins, approved } = approve(state.pins, shown, state.listing, sha256, tool);
  if (approved.length === 0) {
    io.err(
      tool === undefined
        ? `Nothing to approve: every definition of "${name}" matches its pin.`
        : `Nothing to approve: "${tool}" of "${name}" matches its pin (or is not listed).`,
    );
    return EXIT.ok;
  }
  // Issue 48: every replica takes the approval from the store, so it goes there first: when it
  // cannot, nothing is approved anywhere (this folder's pins would be undone by the store's).
  const shared = JSON.stringify(pinsFile(server.name, pins));
  const put = await store?.put(KEYS.state(sharedNames(config, server).pins), shared).then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (store !== undefined && put !== undefined) {
    io.err(
      `Nothing approved: the store at ${store.where} did not take the approval (${put}); every replica takes approvals from it. Run this again once it is reachable.`,
    );
    return EXIT.runtime;
  }
  await writePinsFile(state.paths.pins, server.name, pins);
  for (const change of approved)
    io.err(`Approved: ${change.server} ${change.kind} ${change.name} (${change.change})`);
  return EXIT.ok;
}
