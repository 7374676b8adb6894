/**
 * What the gateway remembers of each server (CONTRACT K1–K4): its last good listing (tools,
 * prompts, resources, templates) and its pinned definitions, kept in the state folder under a key
 * of what identifies the server in the config (a changed entry starts afresh).
 *
 * - K2: a server that has not listed in this process yet (it is starting, or stuck), or whose
 *   lists are withheld (down past `withhold_after_ms`), is served from memory; its live listing
 *   replaces the remembered one as soon as it has one, and is saved when it differs.
 * - K3, K4: every listing served is compared with the pins (`core/pins.ts`); a changed definition
 *   is logged once at warn with `definition_changed` and a diff, counted and shown; under
 *   `pinning: hold` it is withheld until `mcp-normalizer pins approve`, which the running gateway
 *   picks up from the pins file within two seconds.
 *
 * Files: `<state>/catalogs/<key>.json` and `<state>/pins/<key>.json`, written atomically
 * (`state-files.ts`); a secret of the config never reaches them (L2): both hold, and the pins
 * are compared in, the scrubbed form of a definition.
 */
import { commandLine } from '../../config/command-line.js';
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { Config, ServerConfig } from '../../config/types.js';
import { canonicalJson } from '../../core/json.js';
import { comparePins, type DefinitionChange, type PinSet } from '../../core/pins.js';
import { scrubDeep, type Scrubber } from '../../core/secrets.js';
import { EMPTY_FEATURES, type FeatureLists } from '../../downstream/listing.js';
import type { ServerSnapshot } from '../../downstream/snapshot.js';
import { writeStateFile } from './state-files.js';
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
} from './memory-files.js';

/** One server's listing as the catalogs are built from it. */
export interface ServerListing {
  readonly tools: readonly unknown[];
  readonly features: FeatureLists;
  /** K2: read from the state folder (the server has no live listing in this process now). */
  readonly remembered: boolean;
}

/** What {@link createMemory} needs. */
export interface MemoryOptions {
  readonly config: Pick<Config, 'stateDir' | 'pinning'> & Partial<Pick<Config, 'file'>>;
  readonly logger: Logger;
  readonly scrub: Scrubber | undefined;
  /** K4: the pins changed on disk (an approval): the catalogs are rebuilt. */
  readonly pinsChanged: () => void;
  /**
   * Issue 48: every state file written is also handed here (`catalogs/<key>.json` or
   * `pins/<key>.json`, and its JSON), for the store the replicas share. @default nowhere
   */
  readonly saved?: (name: string, json: string) => void;
}

/** The gateway's memory of its servers. */
export interface CatalogMemory {
  /** K2, K3: the listing to serve for `server` now (its live one, else the remembered one), pins applied. */
  listing(server: ServerConfig, snapshot: ServerSnapshot): ServerListing;
  /** K2: whether a catalog of `server` is remembered (a list need not wait for it). */
  remembers(server: ServerConfig): boolean;
  /**
   * K2: `server`'s state changed: once ready it has a live listing in this process; a new
   * connection (a reload replaced it) has none until it is ready.
   */
  stateChanged(server: string, state: ServerSnapshot['state']): void;
  /** K3: the definitions that differ from their pins now, every server. */
  changes(): readonly DefinitionChange[];
  /**
   * Issue 48: what another replica remembered of `server` (from the shared store): its catalog
   * when this process remembers none, its pins when they differ from this process's. True when
   * something was taken.
   */
  adopt(server: ServerConfig, catalog: unknown, pins: unknown): boolean;
  /** Stops the pins watch; resolves once every write is done. */
  close(): Promise<void>;
}

/** How often the pins files of servers with pending changes are looked at (an approval). */
const PINS_POLL_MS = 2000;

/** One server's memory in this process. */
interface Entry {
  readonly paths: ReturnType<typeof memoryPaths>;
  /** The remembered catalog (undefined: none), read once. */
  remembered: CatalogFile | undefined;
  /** The digest of the listing last saved or read. */
  saved: string | undefined;
  pins: PinSet | undefined;
  pinsMtime: number;
  /** The pin check of the listing last served: its digest, and the changes found. */
  checked?: { readonly digest: string; readonly changes: readonly DefinitionChange[] };
}

/** @example const memory = createMemory({ config, logger, pinsChanged: () => catalogs.rebuild() }); */
export function createMemory(options: MemoryOptions): CatalogMemory {
  const { config, logger } = options;
  const entries = new Map<string, Entry>();
  const pathsOf = new WeakMap<ServerConfig, Entry['paths']>();
  const told = new Set<string>();
  const writes = new Set<Promise<void>>();
  const digests = new WeakMap<object, string>();
  /** K2: the servers with a live listing in this process. */
  const up = new Set<string>();
  let poll: NodeJS.Timeout | undefined;

  const entryOf = (server: ServerConfig): Entry => {
    let entry = entries.get(server.name);
    // A config entry's key is a digest of it: worked out once per entry (a reload makes new ones).
    let paths = pathsOf.get(server);
    if (paths === undefined) pathsOf.set(server, (paths = memoryPaths(config.stateDir, server, config.file)));
    if (entry === undefined || entry.paths.catalog !== paths.catalog) {
      const remembered = readCatalogFile(paths.catalog);
      // Issue 55: the pins follow the server across a changed entry (this process's, or the
      // state folder's pins of before); the change is logged.
      const pins = entry?.pins ?? readPinsFile(paths.pins) ?? readPinsFile(paths.pinsByEntry);
      if (remembered === undefined && pins !== undefined)
        logger.info(
          { server: server.name },
          'no catalog is remembered for this config entry (it changed, or is new): the server’s pins are kept and its listing compared with them',
        );
      entry = {
        paths,
        remembered,
        saved: remembered === undefined ? undefined : digestOf(remembered.tools, remembered.features),
        pins,
        pinsMtime: mtimeOf(paths.pins),
      };
      entries.set(server.name, entry);
    }
    return entry;
  };

  /** The digest of a listing (cached by the arrays' identity: a new listing is a new array). */
  function digestOf(tools: readonly unknown[], features: FeatureLists): string {
    const known = digests.get(tools);
    if (known !== undefined && digests.get(features) === known) return known;
    const digest = sha256(canonicalJson({ tools, features }));
    digests.set(tools, digest);
    digests.set(features, digest);
    return digest;
  }

  function write(what: string, run: () => Promise<void>): void {
    const pending = run()
      .catch((error: unknown) => logger.warn({ err: error, file: what }, 'state file not written'))
      .finally(() => writes.delete(pending));
    writes.add(pending);
  }

  /** K2: a live listing that differs from the one remembered is saved (scrubbed, L2). */
  function remember(server: string, entry: Entry, tools: readonly unknown[], features: FeatureLists) {
    const digest = digestOf(tools, features);
    if (digest === entry.saved) return;
    entry.saved = digest;
    const file: CatalogFile = {
      version: 1,
      server,
      savedAt: new Date().toISOString(),
      tools,
      features,
    };
    entry.remembered = file;
    const kept = options.scrub === undefined ? file : scrubDeep(file, options.scrub);
    write(entry.paths.catalog, () => writeStateFile(entry.paths.catalog, kept));
    options.saved?.(`catalogs/${basename(entry.paths.catalog)}`, JSON.stringify(kept));
  }

  /**
   * K2: a first attempt that failed, of a server nothing is remembered of, is remembered as
   * listing nothing, so that the next start's lists do not wait for it again: in this folder only
   * (the store keeps what another replica listed, and that replaces it, {@link CatalogFile}).
   */
  function rememberFailure(server: string, entry: Entry): void {
    const file: CatalogFile = {
      version: 1,
      server,
      savedAt: new Date().toISOString(),
      tools: [],
      features: EMPTY_FEATURES,
      firstAttemptFailed: true,
    };
    entry.remembered = file;
    // A live listing is saved over it, even one of nothing.
    entry.saved = undefined;
    write(entry.paths.catalog, () => writeStateFile(entry.paths.catalog, file));
  }

  /** K3, K4: the listing compared with the pins; the changed ones withheld under `hold`. */
  function pinned(server: ServerConfig, entry: Entry, listing: ServerListing): ServerListing {
    if (config.pinning === 'off') return listing;
    // Pins are made from what the server itself listed (trust on first use), never from memory.
    if (entry.pins === undefined && listing.remembered) return listing;
    // Issue 55: a remembered listing is served only where a pin vouches for it (a hand-edited
    // catalog file waits for the live listing, whatever the mode); nothing is pinned from memory.
    const mode = listing.remembered ? 'hold' : config.pinning;
    const digest = `${digestOf(listing.tools, listing.features)}:${entry.pinsMtime}:${mode}`;
    if (entry.checked?.digest !== digest) {
      // Issue 55: pinned and compared in the scrubbed form, as the catalog is saved: a secret in
      // a definition is kept nowhere, and the pins, the catalog and `pins approve` agree on it.
      const definitions = { tools: listing.tools, prompts: listing.features.prompts };
      const check = comparePins(
        server.name,
        entry.pins,
        options.scrub === undefined ? definitions : scrubDeep(definitions, options.scrub),
        mode,
        sha256,
      );
      if (check.pinned && !listing.remembered) {
        entry.pins = check.pins;
        write(entry.paths.pins, () => writePinsFile(entry.paths.pins, server.name, check.pins));
        options.saved?.(
          `pins/${basename(entry.paths.pins)}`,
          JSON.stringify(pinsFile(server.name, check.pins)),
        );
      }
      entry.checked = { digest, changes: check.changes };
      for (const change of check.changes) tell(change);
      watchPins();
    }
    const changes = entry.checked.changes;
    if (mode !== 'hold' || changes.length === 0) return listing;
    const held = (kind: DefinitionChange['kind']): Set<string> =>
      new Set(changes.filter((change) => change.kind === kind).map((change) => change.name));
    const tools = held('tool');
    const prompts = held('prompt');
    const named = (names: Set<string>) => (definition: unknown) =>
      !names.has(String((definition as { name?: unknown } | null)?.name));
    return {
      ...listing,
      tools: listing.tools.filter(named(tools)),
      features: { ...listing.features, prompts: listing.features.prompts.filter(named(prompts)) },
    };
  }

  /** K3: a change is logged once per process (per definition and digest). */
  function tell(change: DefinitionChange): void {
    const key = `${change.server}\n${change.kind}\n${change.name}\n${change.sha256}`;
    if (told.has(key)) return;
    told.add(key);
    logger.warn(
      {
        server: change.server,
        [change.kind]: change.name,
        change: change.change,
        held: config.pinning === 'hold',
        diff: change.diff,
      },
      `definition_changed: the ${change.kind} "${change.name}" of "${change.server}" differs from its pin${config.pinning === 'hold' ? ' and is withheld' : ''}: review it, then run ${commandLine(['pins', 'approve', change.server, change.name])}`,
    );
  }

  /** K4: while a change is pending, an approval on disk is looked for every two seconds. */
  function watchPins(): void {
    const pending = [...entries.values()].some((entry) => (entry.checked?.changes.length ?? 0) > 0);
    if (!pending) {
      if (poll !== undefined) clearInterval(poll);
      poll = undefined;
      return;
    }
    poll ??= setInterval(() => {
      let changed = false;
      for (const entry of entries.values()) {
        if ((entry.checked?.changes.length ?? 0) === 0) continue;
        const mtime = mtimeOf(entry.paths.pins);
        if (mtime === entry.pinsMtime) continue;
        entry.pinsMtime = mtime;
        entry.pins = readPinsFile(entry.paths.pins);
        changed = true;
      }
      if (changed) options.pinsChanged();
    }, PINS_POLL_MS).unref();
  }

  return {
    listing(server, snapshot) {
      const entry = entryOf(server);
      const live = up.has(server.name) && !snapshot.toolsWithheld;
      if (live) remember(server.name, entry, snapshot.tools, snapshot.features);
      const { remembered } = entry;
      if (live) return pinned(server, entry, { ...snapshot, remembered: false });
      // Nothing known of it yet (not up, nothing remembered): nothing to pin or compare.
      if (remembered === undefined)
        return { tools: snapshot.tools, features: snapshot.features, remembered: false };
      return pinned(server, entry, {
        tools: remembered.tools,
        features: remembered.features,
        remembered: true,
      });
    },
    remembers: (server) => entryOf(server).remembered !== undefined,
    stateChanged(server, state) {
      if (state === 'ready') up.add(server);
      else if (state === 'connecting') up.delete(server);
      const entry = entries.get(server);
      if (state === 'down' && !up.has(server) && entry !== undefined && entry.remembered === undefined)
        rememberFailure(server, entry);
    },
    changes: () => [...entries.values()].flatMap((entry) => entry.checked?.changes ?? []),
    adopt(server, catalog, pins) {
      const entry = entryOf(server);
      const shared = catalogOf(catalog);
      let taken = false;
      // Issue 48, K2: a stand-in for a failed first attempt is no memory of the server: a replica
      // whose server fails at once, before the store has been read, still lists what it holds.
      const none = entry.remembered === undefined || entry.remembered.firstAttemptFailed === true;
      if (none && shared !== undefined && shared.firstAttemptFailed !== true) {
        entry.remembered = shared;
        entry.saved = digestOf(shared.tools, shared.features);
        taken = true;
      }
      const sharedPins = pinsOf(pins);
      if (sharedPins !== undefined && canonicalJson(sharedPins) !== canonicalJson(entry.pins ?? null)) {
        entry.pins = sharedPins;
        entry.checked = undefined;
        taken = true;
      }
      return taken;
    },
    async close() {
      if (poll !== undefined) clearInterval(poll);
      while (writes.size > 0) await Promise.allSettled([...writes]);
    },
  };
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}
