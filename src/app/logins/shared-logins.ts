/**
 * Issue 48: the downstream logins of every principal (D2, D3), shared by replicas through the
 * store. Each replica keeps its token file as its copy; every change written there (a login, a
 * refresh, a logout) is also put in the store and announced, and the other replicas take it
 * into their files. A replica starting takes what the store holds that is newer than its file,
 * and gives the store what it has that the store lacks (a login made before the store was set
 * is not lost). A refresh runs on one replica at a time: the others wait for its tokens.
 */
import type { Logger } from 'pino';
import type { OAuthLoginConfig, ServerConfig } from '../../config/types.js';
import {
  tokenStore,
  type LoginMirror,
  type StoredLogin,
  type TokenStore,
} from '../../downstream/token-store.js';
import { CHANNELS, KEYS, type SharedStore } from '../state/store.js';
import { parseBoundedJson, RECORD_BOUNDS } from '../../core/bounded-json.js';

/** How long a refresh may hold its lock, and how long the others wait for it. */
const REFRESH_LOCK_MS = 15_000;
const REFRESH_WAIT_MS = 10_000;
const REFRESH_POLL_MS = 250;

/** Options of {@link shareLogins}. */
export interface SharedLoginsOptions {
  readonly store: SharedStore;
  readonly logger: Logger;
  /** This process among the replicas (a random id). */
  readonly self: string;
  /** `principal` has a login to `server` it had not: its copy must pick it up (pool.ts `renewLogin`). */
  readonly loggedIn?: (server: string, principal: string) => void;
}

/** The logins shared with the other replicas. */
export interface SharedLogins {
  /** Mirrors the token files of `servers`' `auth: oauth` and brings them in line with the store. */
  attach(servers: readonly ServerConfig[]): Promise<void>;
  /** Resolves once every change written so far has reached the store (the CLI waits for it). */
  flush(): Promise<void>;
  /**
   * Why the store could not be reached, if the last thing tried there failed (the CLI says so): a
   * login written there since clears it; a logout that found nothing to remove leaves it.
   */
  unreached(): string | undefined;
}

/** The `auth: oauth` settings of `server`, if it logs in so. */
function oauthOf(server: ServerConfig): OAuthLoginConfig | undefined {
  const transport = server.transport;
  return transport.type !== 'stdio' && transport.auth?.type === 'oauth' ? transport.auth : undefined;
}

function parse(json: string | undefined): StoredLogin | undefined {
  const login = parseBoundedJson(json, RECORD_BOUNDS) as StoredLogin | undefined;
  return typeof login === 'object' && login !== null && typeof login.url === 'string' ? login : undefined;
}

/** Whether `theirs` is a later login than `mine` (by when its tokens were saved). */
function newer(theirs: StoredLogin, mine: StoredLogin | undefined): boolean {
  return mine === undefined || (theirs.savedAt ?? 0) > (mine.savedAt ?? 0);
}

const why = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** @example const logins = shareLogins({ store, logger, self }); await logins.attach(config.servers); */
export function shareLogins(options: SharedLoginsOptions): SharedLogins {
  const { store, logger, self } = options;
  /** Server name → the token file its logins are kept in. */
  const files = new Map<string, TokenStore>();
  const writes = new Set<Promise<void>>();
  let listening: Promise<void> | undefined;
  let unreached: string | undefined;

  const warn = (error: unknown, what: string): void => {
    unreached = why(error);
    logger.warn({ store: store.where, error: unreached }, what);
  };

  /** Takes the store's login of `principal` to `server` when it is newer than this file's. */
  async function pull(server: string, principal: string): Promise<boolean> {
    const file = files.get(server);
    if (file === undefined) return false;
    const theirs = parse((await store.fields(KEYS.logins(server)))[principal]);
    const mine = file.logins(server)[principal];
    if (theirs === undefined || !newer(theirs, mine)) return false;
    file.adopt(server, principal, theirs);
    if (mine?.tokens === undefined && theirs.tokens !== undefined) options.loggedIn?.(server, principal);
    return true;
  }

  const mirror: LoginMirror = {
    saved(name, principal, login) {
      const write = store
        .setField(KEYS.logins(name), principal, login === undefined ? undefined : JSON.stringify(login))
        .then(() =>
          store.publish(
            CHANNELS.logins,
            JSON.stringify({ server: name, principal, from: self, removed: login === undefined }),
          ),
        )
        .then(
          () => {
            // It reached the store after all (a login written once the store was back).
            unreached = undefined;
          },
          (error: unknown) => warn(error, `a login to ${name} not shared: the other replicas keep theirs`),
        );
      writes.add(write);
      void write.finally(() => writes.delete(write));
    },
    async oneRefresh(name, principal, refresh) {
      const lock = KEYS.refreshLock(name, principal);
      let mine: boolean;
      try {
        mine = await store.put(lock, self, { ttlMs: REFRESH_LOCK_MS, onlyIfAbsent: true });
      } catch (error) {
        warn(error, 'store unreachable: this replica refreshes the login alone');
        return refresh();
      }
      if (mine) {
        try {
          await pull(name, principal).catch(() => false);
          await refresh();
        } finally {
          await store.delete(lock).catch(() => undefined);
        }
        return;
      }
      // Another replica refreshes: its tokens reach the store, and this file, when it is done.
      const before = files.get(name)?.logins(name)[principal]?.savedAt ?? 0;
      for (const end = Date.now() + REFRESH_WAIT_MS; Date.now() < end;) {
        await new Promise((resolve) => setTimeout(resolve, REFRESH_POLL_MS));
        if (await pull(name, principal).catch(() => false)) return;
        if ((files.get(name)?.logins(name)[principal]?.savedAt ?? 0) > before) return;
      }
    },
  };

  function heard(message: string): void {
    const change = parseBoundedJson(message, RECORD_BOUNDS) as
      { server?: unknown; principal?: unknown; from?: unknown; removed?: unknown } | undefined;
    if (typeof change !== 'object' || change === null) return;
    const { server, principal } = change;
    if (change.from === self || typeof server !== 'string' || typeof principal !== 'string') return;
    const file = files.get(server);
    if (file === undefined) return;
    if (change.removed === true) {
      if (file.logins(server)[principal] !== undefined) file.adopt(server, principal, undefined);
      return;
    }
    void pull(server, principal).catch((error: unknown) => warn(error, 'a shared login could not be read'));
  }

  /** Brings `server`'s logins in this file and in the store in line, each way the newer one. */
  async function align(server: string, file: TokenStore): Promise<void> {
    const stored = await store.fields(KEYS.logins(server));
    const mine = file.logins(server);
    for (const [principal, json] of Object.entries(stored)) {
      const theirs = parse(json);
      if (theirs === undefined || !newer(theirs, mine[principal])) continue;
      file.adopt(server, principal, theirs);
      if (mine[principal]?.tokens === undefined && theirs.tokens !== undefined)
        options.loggedIn?.(server, principal);
    }
    for (const [principal, login] of Object.entries(mine)) {
      const theirs = parse(stored[principal]);
      if (theirs === undefined || newer(login, theirs))
        await store.setField(KEYS.logins(server), principal, JSON.stringify(login));
    }
  }

  return {
    async attach(servers) {
      const oauth = servers.flatMap((server) => {
        const auth = oauthOf(server);
        return auth === undefined ? [] : [{ name: server.name, file: tokenStore(auth.tokenStore) }];
      });
      if (oauth.length === 0) return;
      for (const { name, file } of oauth) {
        files.set(name, file);
        file.mirror = mirror;
      }
      try {
        if (options.loggedIn !== undefined) await (listening ??= store.subscribe(CHANNELS.logins, heard));
        await Promise.all(oauth.map(({ name, file }) => align(name, file)));
      } catch (error) {
        listening = undefined;
        warn(error, 'store unreachable: downstream logins from this replica only');
      }
    },
    async flush() {
      await Promise.all([...writes]);
    },
    unreached: () => unreached,
  };
}
