/**
 * The one holder of both catalogs (T10, U5, P1): the tool catalog and the prompt/resource index,
 * built from the pool's last known good lists in config order, rebuilt when a server's lists
 * change (coalesced per turn of the event loop: a downstream may announce a burst), compared
 * with what was served, and announced on the list-change bus only when the exposed lists differ.
 *
 * Nothing waits for the whole pool to start (issue: one server that never finished starting
 * emptied the catalog for two minutes): each server's tools are served as soon as it is ready,
 * and a host that listed early is told when more arrive. A call to a name no tool has yet, while
 * a server that could hold it is still in its first attempt, waits for that server (bounded):
 * {@link Catalogs.settle}.
 */
import { searchedMode } from '../core/options.js';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import {
  buildCatalog,
  diffCatalogs,
  type Catalog,
  type CatalogOptions,
  type CatalogProblem,
} from '../core/catalog.js';
import {
  buildFeatureIndex,
  diffFeatureIndexes,
  type FeatureIndex,
  type FeatureProblem,
} from '../core/feature-index.js';
import { composeName } from '../core/naming.js';
import type { Pool } from '../downstream/pool.js';
import { raceTimeout } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';
import type { ServerSource } from './servers.js';
import { ENVELOPE_OUTPUT_SCHEMAS, typedEnvelopeSchema } from '../upstream/envelope-schema.js';
import type { CatalogMemory } from './state/memory.js';
import type { DefinitionChange } from '../core/pins.js';

/** Where changes are announced (the upstream's list-change bus). */
export interface ListChanges {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
}

/** What {@link createCatalogs} needs. */
export interface CatalogsDeps {
  readonly config: Config;
  readonly servers: ServerSource;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly changes: ListChanges;
  /** The longest a call waits for a server still in its first attempt. */
  readonly startupWaitMs: number;
  /** P1: how long after the start a list waits for servers still starting. */
  readonly listWaitMs: number;
  /** P1: when the gateway started (ms since the epoch). @default the time of {@link Catalogs.begin} */
  readonly startedAt?: number;
  /** K1–K4: what is remembered of each server, and its pins; absent: nothing is remembered. */
  readonly memory?: CatalogMemory;
}

/** Both catalogs of a proxy. */
export interface Catalogs {
  /** The tool catalog now. */
  tools(): Catalog;
  /** The prompt and resource index now. */
  features(): FeatureIndex;
  /** Rebuilds both now (start, reload), announcing what changed. */
  rebuild(): void;
  /**
   * Resolves once no server that could serve `name` (its prefix starts it, or it has none) is in
   * its first attempt, and the catalogs include what those servers listed; at most the startup
   * wait. `undefined`: any server. Undefined when none is starting (the usual case); a rebuild
   * that is due is then done at once, so the caller reads the catalogs as they are.
   */
  settle(name?: string): Promise<void> | undefined;
  /**
   * P1: for a list: resolves once no server is in its first attempt, but at most until
   * `listWaitMs` after the start (`startedAt`, else {@link Catalogs.begin}); undefined when there
   * is nothing to wait for.
   */
  settleLists(): Promise<void> | undefined;
  /**
   * K2: resolves once `server` ended its first attempt (at most the startup wait), for a call to
   * one of its remembered tools; undefined when it is not starting.
   */
  settleServer(server: string): Promise<void> | undefined;
  /** K4: the change behind exposed tool name `name`, when it is withheld (`pinning: hold`). */
  held(name: string): DefinitionChange | undefined;
  /**
   * The pool is starting now: the list wait counts from here. `loading`: what the shared store
   * remembers is being read (issue 48); a list waits for it first.
   */
  begin(loading?: Promise<void>): void;
  /** Stops rebuilding (shutdown). */
  stop(): void;
}

/** T1–T7, T14: the catalog settings of `config`. */
function catalogOptionsOf(config: Config): CatalogOptions {
  return {
    ...(config.prefix !== undefined ? { globalPrefix: config.prefix } : {}),
    separator: config.separator,
    nameMaxLength: config.nameMaxLength,
    explicitDestructive: config.explicitDestructive,
    strictArguments: config.strictArguments,
    describeArguments: config.output.describeArguments,
    // I6: a profile in search mode lists the search pair, whose names are then the gateway's.
    reserveSearchPair: Object.values(config.profiles).some((profile) => searchedMode(profile.expose)),
    reserveCodeTool: Object.values(config.profiles).some((profile) => profile.expose === 'code'),
    // T6: the envelope schema only when asked for (it was 69% of each tool's bytes, and hosts
    // compile a validator per advertised schema).
    ...(config.output.advertiseSchema
      ? {
          outputSchema: ENVELOPE_OUTPUT_SCHEMAS[config.output.format] as Record<string, unknown>,
          typedOutputSchema: (toolSchema: Record<string, unknown>) =>
            typedEnvelopeSchema(config.output.format, toolSchema),
        }
      : {}),
  };
}

/** Builds the holder; it rebuilds on the pool's events from now on. */
export function createCatalogs(deps: CatalogsDeps): Catalogs {
  const { config, servers, pool, logger, changes, memory } = deps;
  const catalogOptions = catalogOptionsOf(config);
  const featureOptions = {
    ...(config.prefix !== undefined ? { globalPrefix: config.prefix } : {}),
    separator: config.separator,
    nameMaxLength: config.nameMaxLength,
  };
  let tools = buildCatalog([], catalogOptions);
  let features = buildFeatureIndex([], featureOptions);
  let stopped = false;
  /** Issue 48: the read of what the shared store remembers, while it runs. */
  let shared: Promise<void> | undefined;
  /** K4: the exposed names of withheld tools, and their changes. */
  let held = new Map<string, DefinitionChange>();
  let begunAt: number | undefined;
  const dirty = new Set<'tools' | 'features'>();
  let scheduled: NodeJS.Immediate | undefined;

  /**
   * L1: the lists built while the first connection round is under way are the start's own news
   * (the banner sums them up: 15 JSON lines came before it): debug until the round is over and the
   * list was built once after it, info for every change after that.
   */
  const quiet = new Set<'tools' | 'prompts' | 'resources'>(['tools', 'prompts', 'resources']);
  function startLevel(list: 'tools' | 'prompts' | 'resources'): 'debug' | 'info' {
    if (!quiet.has(list)) return 'info';
    if (pool.starting().length === 0) quiet.delete(list);
    return 'debug';
  }

  function rebuildTools(): void {
    // Config order (E2), whatever order a reload started the servers in.
    const snapshots = new Map(pool.snapshot().map((snapshot) => [snapshot.name, snapshot]));
    const inputs = servers.list().flatMap((server) => {
      const snapshot = snapshots.get(server.name);
      if (snapshot === undefined) return [];
      // K2, K4: the live listing, else the remembered one; a withheld definition left out.
      const tools = memory === undefined ? snapshot.tools : memory.listing(server, snapshot).tools;
      return [
        {
          server: server.name,
          prefix: server.prefix,
          expose: server.expose,
          tools,
          include: server.tools.include,
          exclude: server.tools.exclude,
          rename: server.tools.rename,
          overrides: server.tools.overrides,
          stripPrefix: server.tools.stripPrefix,
        },
      ];
    });
    held = heldNames();
    const next = buildCatalog(inputs, { ...catalogOptions, previous: tools });
    const diff = diffCatalogs(tools, next);
    logNew(tools.problems, next.problems);
    tools = next;
    if (diff.added.length + diff.removed.length + diff.changed.length === 0) return;
    logger[startLevel('tools')]({ ...diff, tools: next.tools.length }, 'tool catalog changed');
    changes.toolsChanged(); // T10
  }

  function rebuildFeatures(): void {
    const inputs = pool.snapshot().map((snapshot) => {
      const server = servers.get(snapshot.name);
      return {
        server: snapshot.name,
        prefix: server?.prefix ?? snapshot.name,
        // K2, K4: as for tools.
        ...(memory === undefined || server === undefined
          ? snapshot.features
          : memory.listing(server, snapshot).features),
      };
    });
    const next = buildFeatureIndex(inputs, featureOptions);
    const diff = diffFeatureIndexes(features, next);
    logNew(features.problems, next.problems);
    features = next;
    if (diff.prompts) {
      logger[startLevel('prompts')]({ prompts: next.prompts.length }, 'prompt list changed');
      changes.promptsChanged();
    }
    if (diff.resources) {
      logger[startLevel('resources')](
        { resources: next.resources.length, resourceTemplates: next.resourceTemplates.length },
        'resource list changed',
      );
      changes.resourcesChanged();
    }
  }

  /**
   * Logs the problems of `after` that `before` did not have (T4: a withheld collision is an
   * error in the log; `check` fails on it).
   */
  function logNew(
    before: readonly { readonly message: string }[],
    after: readonly (CatalogProblem | FeatureProblem)[],
  ): void {
    const seen = new Set(before.map((problem) => problem.message));
    for (const problem of after) {
      if (seen.has(problem.message)) continue;
      const where =
        'kind' in problem
          ? { server: problem.server, kind: problem.kind }
          : { server: problem.server, tool: problem.tool };
      logger[problem.severity === 'error' ? 'error' : 'warn'](where, problem.message);
    }
  }

  /** Runs what is scheduled now. */
  function flush(): void {
    if (scheduled !== undefined) clearImmediate(scheduled);
    scheduled = undefined;
    if (stopped) return;
    const what = [...dirty];
    dirty.clear();
    if (what.includes('tools')) rebuildTools();
    if (what.includes('features')) rebuildFeatures();
  }

  function schedule(what: 'tools' | 'features'): void {
    if (stopped) return;
    dirty.add(what);
    scheduled ??= setImmediate(flush);
  }

  // K2: before the rebuild its listing schedules, a server's state tells whether it is live.
  pool.on('stateChanged', (server, state) => memory?.stateChanged(server, state));
  pool.on('toolsChanged', () => schedule('tools'));
  pool.on('featuresChanged', () => schedule('features'));

  /**
   * Resolves once every server of `starting` ended its first attempt, or after `ms`, whichever is
   * first, with the catalogs rebuilt; undefined when there is nothing to wait for.
   */
  function waitFor(starting: readonly string[], ms: number): Promise<void> | undefined {
    if (starting.length === 0 || ms <= 0) {
      // A server that became ready a moment ago: its rebuild is due this turn; do it now.
      if (dirty.size > 0) flush();
      return undefined;
    }
    const attempts = Promise.all(starting.map((server) => pool.firstAttempt(server)));
    return raceTimeout(attempts, ms, systemTimers).then(() => flush());
  }

  /** K4: the exposed names the withheld tools would have (their server's prefix, its rename). */
  function heldNames(): Map<string, DefinitionChange> {
    const names = new Map<string, DefinitionChange>();
    if (config.pinning !== 'hold') return names;
    for (const change of memory?.changes() ?? []) {
      if (change.kind !== 'tool') continue;
      const server = servers.get(change.server);
      const tool = server?.tools.rename[change.name] ?? change.name;
      const name = composeName({
        globalPrefix: config.prefix,
        serverPrefix: server?.prefix ?? change.server,
        separator: config.separator,
        tool,
      });
      names.set(name, change);
    }
    return names;
  }

  /** T1: the prefix every name of `server` starts with ("" for an unprefixed server). */
  function prefixOf(name: string): string {
    const server = servers.get(name);
    return composeName({
      globalPrefix: config.prefix,
      serverPrefix: server?.prefix ?? name,
      separator: config.separator,
      tool: '',
    });
  }

  return {
    tools: () => tools,
    features: () => features,
    rebuild() {
      dirty.add('tools');
      dirty.add('features');
      flush();
    },
    settle(name) {
      const starting = pool
        .starting()
        .filter(
          (server) => name === undefined || prefixOf(server) === '' || name.startsWith(prefixOf(server)),
        );
      return waitFor(starting, deps.startupWaitMs);
    },
    settleLists() {
      if (begunAt === undefined) return undefined;
      // Issue 48: what another replica remembered is read first (bounded by the store's timeout).
      if (shared !== undefined) return shared.then(() => this.settleLists());
      // K2: a server remembered is listed from memory: a list waits only for the others.
      const unknown = pool.starting().filter((name) => {
        const server = servers.get(name);
        return memory === undefined || server === undefined || !memory.remembers(server);
      });
      return waitFor(unknown, begunAt + deps.listWaitMs - Date.now());
    },
    settleServer(server) {
      return waitFor(pool.starting().includes(server) ? [server] : [], deps.startupWaitMs);
    },
    held: (name) => held.get(name),
    begin(loading) {
      begunAt ??= deps.startedAt ?? Date.now();
      if (loading !== undefined) {
        shared = loading;
        void loading.finally(() => (shared = undefined));
      }
      // K2: the remembered catalogs are served from the start, before any server is up.
      if (memory !== undefined) this.rebuild();
    },
    stop() {
      stopped = true;
      if (scheduled !== undefined) clearImmediate(scheduled);
    },
  };
}
