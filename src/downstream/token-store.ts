/**
 * The token store (D2): the logins of `auth: oauth` servers, one JSON file that only its owner
 * may read (mode 0600, in a folder of mode 0700), keyed by server and principal. `login` writes
 * it, the gateway reads it (a login made while the gateway runs is used at its next attempt) and
 * writes refreshed tokens back. Every write replaces the file whole (a temporary file renamed
 * over it), so a reader never sees half of one. Nothing here logs a token.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseBoundedJson, STATE_FILE_BOUNDS } from '../core/bounded-json.js';
import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';

/** One principal's login to one server. */
export interface StoredLogin {
  /** The server's URL when the login was made: a login for another URL is not used. */
  readonly url: string;
  readonly tokens?: StoredOAuthTokens;
  /** When `tokens` were saved (ms since the epoch): with `expires_in`, when they expire. */
  readonly savedAt?: number;
  /** The client registered dynamically for this login, and the redirect URL it was registered with. */
  readonly client?: StoredOAuthClientInformation;
  readonly redirectUrl?: string;
  /** D2 step-up: the wider scope a server asked for (403 insufficient_scope), for the next login. */
  readonly stepUpScope?: string;
  /** D2: where the login's tokens came from (its discovery), so they can be refreshed before they expire. */
  readonly discovery?: OAuthDiscoveryState;
  /** D7: the private key the login's DPoP-bound tokens are bound to (dpop-keys.ts); never logged. */
  readonly dpopKey?: unknown;
}

interface StoreFile {
  readonly version: 1;
  readonly logins: Record<string, Record<string, StoredLogin>>;
}

/**
 * Issue 48: where a token store's changes go besides its file, when replicas share a store
 * (app/logins/shared-logins.ts). The file stays each replica's copy; the mirror keeps the copies alike.
 */
export interface LoginMirror {
  /** `principal`'s login to `server` changed in this file (undefined: it was removed). */
  saved(server: string, principal: string, login: StoredLogin | undefined): void;
  /**
   * D2 across replicas: runs `refresh` unless another replica is refreshing this login, in which
   * case it waits for that one's tokens (taken into this file) instead: one refresh at a time.
   */
  oneRefresh(server: string, principal: string, refresh: () => Promise<void>): Promise<void>;
}

/** The principal of the command line and of a gateway without callers' identities. */
export const LOCAL_PRINCIPAL = 'local';

/** The logins in one file. */
export class TokenStore {
  readonly path: string;
  #cached: { mtimeMs: number; size: number; file: StoreFile } | undefined;
  /** Issue 48: the store replicas share, when there is one. */
  mirror: LoginMirror | undefined;

  constructor(path: string) {
    this.path = path;
  }

  /** `principal`'s login to `server` at `url`, if one was made. */
  read(server: string, url: string, principal = LOCAL_PRINCIPAL): StoredLogin | undefined {
    const login = this.#file().logins[server]?.[principal];
    return login?.url === url ? login : undefined;
  }

  /** Merges `update` into `principal`'s login to `server` at `url` (a login for another URL is replaced). */
  write(server: string, url: string, update: Partial<StoredLogin>, principal = LOCAL_PRINCIPAL): void {
    const file = this.#file();
    const before = this.read(server, url, principal);
    const logins = {
      ...file.logins,
      [server]: { ...file.logins[server], [principal]: { ...before, ...update, url } },
    };
    this.#save({ version: 1, logins });
    this.mirror?.saved(server, principal, logins[server]?.[principal]);
  }

  /** Issue 48: every principal's login to `server` in this file, whatever its URL. */
  logins(server: string): Readonly<Record<string, StoredLogin>> {
    return this.#file().logins[server] ?? {};
  }

  /** Issue 48: takes another replica's login (undefined: its removal) into this file, not mirrored back. */
  adopt(server: string, principal: string, login: StoredLogin | undefined): void {
    const file = this.#file();
    const { [principal]: _before, ...rest } = file.logins[server] ?? {};
    const mine = login === undefined ? rest : { ...rest, [principal]: login };
    const logins = { ...file.logins, [server]: mine };
    if (Object.keys(mine).length === 0) delete logins[server];
    this.#save({ version: 1, logins });
  }

  /** Forgets `principal`'s login to `server` (any URL); whether there was one. */
  remove(server: string, principal = LOCAL_PRINCIPAL): boolean {
    const file = this.#file();
    const mine = file.logins[server];
    if (mine?.[principal] === undefined) return false;
    const { [principal]: _gone, ...rest } = mine;
    const logins = { ...file.logins };
    if (Object.keys(rest).length === 0) delete logins[server];
    else logins[server] = rest;
    this.#save({ version: 1, logins });
    this.mirror?.saved(server, principal, undefined);
    return true;
  }

  #file(): StoreFile {
    let stat;
    try {
      stat = lstatSync(this.path);
    } catch {
      return { version: 1, logins: {} };
    }
    // Issue 55: tokens are read from the file itself, never through a symbolic link in its place.
    if (stat.isSymbolicLink())
      throw new Error(
        `The token store ${this.path} is a symbolic link, which is never followed: remove it and log in again`,
      );
    const cached = this.#cached;
    if (cached !== undefined && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size)
      return cached.file;
    let file: StoreFile;
    try {
      const parsed = parseBoundedJson(readFileSync(this.path, 'utf8'), STATE_FILE_BOUNDS) as
        Partial<StoreFile> | undefined;
      if (parsed === undefined) throw new Error('not JSON, or larger or deeper than a state file may be');
      if (parsed.version !== 1 || typeof parsed.logins !== 'object' || parsed.logins === null)
        throw new Error('not a token store of version 1');
      file = parsed as StoreFile;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(`The token store ${this.path} cannot be read (${why}): remove it and log in again`, {
        cause: error,
      });
    }
    this.#cached = { mtimeMs: stat.mtimeMs, size: stat.size, file };
    return file;
  }

  #save(file: StoreFile): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    // A name nobody can guess, created only if it does not exist (O_EXCL): a file or symlink
    // planted at the temporary's path is never written through.
    const temporary = `${this.path}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`;
    let created = false;
    try {
      writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      created = true;
      renameSync(temporary, this.path);
    } catch (error) {
      if (created) rmSync(temporary, { force: true });
      throw error;
    }
    this.#cached = undefined;
  }
}

/** One store per file in a process: the gateway's transports and its commands share it. */
const stores = new Map<string, TokenStore>();

export function tokenStore(path: string): TokenStore {
  let store = stores.get(path);
  if (store === undefined) {
    store = new TokenStore(path);
    stores.set(path, store);
  }
  return store;
}
