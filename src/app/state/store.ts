/**
 * The store the replicas share (issue 48), as a port of primitives (issue 57): what is kept under
 * which key is {@link KEYS}', and nothing else makes a key. Two backends: Redis (redis.ts), what
 * replicas share, and one in this process (local.ts: one replica, the unit tests).
 *
 * What it holds: the rate-limit counts (I7), the remembered catalogs and pins (K1–K4), a
 * principal's file links (F7), callers' downstream logins and their refresh locks (D2, D3), the
 * owner of a login in progress and its browser legs (D4), the status page's sign-ins (O4), and
 * the tasks relayed (X5). A call that needs the store while it is unreachable fails with an
 * error that names it; nothing else waits for it.
 */

/** The store the replicas share: primitives only. */
export interface SharedStore {
  /** Where it is, without its password (for errors and the health report). */
  readonly where: string;
  /** The value kept under `key`, if any and not expired. */
  get(key: string): Promise<string | undefined>;
  /**
   * Keeps `value` under `key` (for `ttlMs`; with `onlyIfAbsent`, only when nothing is kept).
   * Whether it was kept.
   */
  put(key: string, value: string, options?: { ttlMs?: number; onlyIfAbsent?: boolean }): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Adds `by` to the count under `key`, which expires at `expireAt` (epoch ms); the count after it. */
  increment(key: string, by: number, expireAt: number): Promise<number>;
  /** One field of the map kept under `key` (`undefined` removes it). */
  setField(key: string, field: string, value: string | undefined): Promise<void>;
  /** The whole map kept under `key` (empty when none). */
  fields(key: string): Promise<Record<string, string>>;
  /** A message to the replicas listening on `channel`; how many received it. */
  publish(channel: string, message: string): Promise<number>;
  /** Listens on `channel` from now on. */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** Whether it answers now; else the last error and since when (epoch ms) it is down. */
  health(): { readonly ok: boolean; readonly error?: string; readonly since?: number };
  close(): Promise<void>;
}

/** What every key and channel starts with in the store (a backend adds it). */
export const KEY_PREFIX = 'mcp-normalizer:';

/**
 * Every key and channel the replicas share, exactly as earlier versions wrote them after
 * {@link KEY_PREFIX}, so that replicas of two versions share one store during a rolling upgrade
 * (renaming one is a separate, announced change).
 */
export const KEYS = {
  /** I7: one caller's count of one rule in one window. */
  rateLimit: (key: string) => `rl:${key}`,
  /** K1–K4: a remembered state file (`catalogs/<file>`, `pins/<file>`). */
  state: (name: string) => `state:${name}`,
  /** F7: a file link's file. */
  file: (id: string) => `file:${id}`,
  /** X5: a relayed task's record, under the gateway's id. */
  task: (id: string) => `claim:task:${id}`,
  /** D4: which replica a login in progress (its state) belongs to. */
  loginOwner: (key: string) => `claim:login:${key}`,
  /** O4: a status page sign-in (the digest of its cookie): its principal. */
  statusSession: (digest: string) => `claim:status-session:${digest}`,
  /** D2: one replica refreshes one principal's login to one server at a time. */
  refreshLock: (server: string, principal: string) => `claim:refresh:${server}\u0000${principal}`,
  /** D2, D3: every principal's login to `server`, one field each. */
  logins: (server: string) => `logins:${server}`,
} as const;

/** The channels the replicas talk on. */
export const CHANNELS = {
  /** D2, D3: a login changed (written, refreshed, removed). */
  logins: 'logins',
  /** D4: a browser leg for the replica that started its login. */
  loginLegs: (replica: string) => `login-legs:${replica}`,
  /** D4: that replica's answer to a leg, for the replica it landed on. */
  loginAnswers: (replica: string) => `login-answers:${replica}`,
} as const;

/** `url` without its user and password. */
export function storeWhere(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return 'the store';
  }
}
