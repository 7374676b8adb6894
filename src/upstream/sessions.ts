/**
 * The 2025 sessions of the HTTP endpoint (U1, U7): one SDK transport and one upstream `Server` per
 * session, sharing the catalog and the pool. A session with no request open for `idleMs` is
 * closed (a client that vanishes without a DELETE would otherwise keep it for the process's
 * lifetime), and at most `max` are open: a new one closes the longest idle, or is refused (503)
 * when every session has a request open.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Logger } from 'pino';
import type { UpstreamServer } from './backend.js';
import { sendJsonRpcError } from './http-probes.js';

/** The idle sweep runs at most this often, and at least twice per idle period. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

/** One session: its transport, its requests open now, and when the last one ended. */
interface Session {
  readonly transport: NodeStreamableHTTPServerTransport;
  /** I5: the principal that opened it; another one presenting its id is told it does not exist. */
  readonly owner: string | undefined;
  open: number;
  lastActive: number;
}

/** Options of {@link LegacySessions}. */
export interface SessionOptions {
  readonly upstream: UpstreamServer;
  /** Idle time after which a session is closed; `0`: never. */
  readonly idleMs: number;
  /** Most sessions open at once. */
  readonly max: number;
  /** A new session's id (`<replica_id>.<uuid>` for session-aware load balancing). */
  readonly newId: () => string;
  readonly logger: Logger;
}

/** The 2025 sessions of one HTTP endpoint. */
export class LegacySessions {
  readonly #sessions = new Map<string, Session>();
  readonly #options: SessionOptions;
  readonly #sweeper: NodeJS.Timeout | undefined;

  constructor(options: SessionOptions) {
    this.#options = options;
    const { idleMs } = options;
    this.#sweeper =
      idleMs > 0
        ? setInterval(
            () => this.#sweep(),
            Math.max(1, Math.min(MAX_SWEEP_INTERVAL_MS, Math.ceil(idleMs / 2))),
          )
        : undefined;
    // The sweep never keeps the process alive on its own.
    this.#sweeper?.unref();
  }

  /** Sessions open now. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * The transport of session `id`, its response `res` counted as open until it ends; undefined
   * for an unknown (or closed) session, or one another principal opened (I5).
   */
  transportFor(
    id: string,
    res: ServerResponse,
    owner: string | undefined,
  ): NodeStreamableHTTPServerTransport | undefined {
    const session = this.#sessions.get(id);
    if (session === undefined || session.owner !== owner) return undefined;
    this.#track(session, res);
    return session.transport;
  }

  /** Opens a session for the `initialize` request `body`, and answers it. */
  async open(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    owner: string | undefined,
  ): Promise<void> {
    const { logger, max } = this.#options;
    if (!this.#makeRoom()) {
      logger.warn({ maxSessions: max }, 'refused a new HTTP session: every session has a request open');
      res.setHeader('Retry-After', '5');
      return sendJsonRpcError(
        res,
        503,
        -32000,
        `Service Unavailable: ${max} sessions are open and busy (http.max_sessions); retry later`,
      );
    }
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: this.#options.newId,
      onsessioninitialized: (id) => {
        const session: Session = { transport, owner, open: 0, lastActive: Date.now() };
        this.#sessions.set(id, session);
        this.#track(session, res);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.#sessions.delete(transport.sessionId);
    };
    await this.#options.upstream.connect(transport);
    await transport.handleRequest(req, res, body);
    // A refused initialize (406, 415, ...) opened no session that a client could ever close:
    // without this its Server and transport would stay connected for the process's lifetime.
    if (transport.sessionId === undefined) await transport.close();
  }

  /** Closes every session and stops the sweep. */
  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(open.map(({ transport }) => transport.close()));
  }

  /** Counts `res` as open on `session` until it ends or its socket closes. */
  #track(session: Session, res: ServerResponse): void {
    session.open++;
    res.once('close', () => {
      session.open--;
      session.lastActive = Date.now();
    });
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#options.idleMs;
    for (const [id, session] of this.#sessions) {
      if (session.open > 0 || session.lastActive > cutoff) continue;
      this.#drop(id, session, 'closing idle HTTP session', { idleMs: Date.now() - session.lastActive });
    }
  }

  /**
   * Room for one more session: at the cap, the session idle the longest is closed (as its idle
   * sweep would close it later). False when every session has a request open.
   */
  #makeRoom(): boolean {
    if (this.#sessions.size < this.#options.max) return true;
    let oldest: [string, Session] | undefined;
    for (const entry of this.#sessions) {
      if (entry[1].open === 0 && (oldest === undefined || entry[1].lastActive < oldest[1].lastActive))
        oldest = entry;
    }
    if (oldest === undefined) return false;
    this.#drop(oldest[0], oldest[1], 'closing the longest idle HTTP session for a new one', {
      maxSessions: this.#options.max,
    });
    return true;
  }

  #drop(id: string, session: Session, why: string, detail: Record<string, unknown>): void {
    this.#sessions.delete(id);
    this.#options.logger.info({ session: id, ...detail }, why);
    session.transport.close().catch((error: unknown) => {
      this.#options.logger.debug({ err: error, session: id }, 'a closed HTTP session did not close cleanly');
    });
  }
}
