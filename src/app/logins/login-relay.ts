/**
 * Issue 48: a caller's login (D3, D4) in progress lives in the replica whose call asked for it
 * (its PKCE verifier, its `state`, the browser it is bound to, the call waiting for it). Behind a
 * load balancer, the browser's legs (`/oauth/login`, `/oauth/signin`, `/oauth/callback`) may land
 * on any replica. Every key a leg carries (the link's `flow`, a sign-in's or the downstream's
 * `state`) is claimed in the store for the replica that made it; a replica that gets a leg whose
 * key another replica claimed hands the leg (its URL and cookie) to that replica over the store
 * and answers the browser with that replica's answer. The owner checks it exactly as if the
 * browser had come to it. A login whose replica is gone ends there: its call went with it.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { PAGE } from '../../downstream/oauth-login.js';
import { LOGIN_START_PATH, type BrowserAnswer } from './login-binding.js';
import { CHANNELS, KEYS, type SharedStore } from '../state/store.js';
import { parseBoundedJson, RECORD_BOUNDS } from '../../core/bounded-json.js';

/** How long a relayed leg may take on its owner (a sign-in's code exchange included). */
const ANSWER_MS = 20_000;

/** Answers a browser's leg in this replica. */
export type LocalAnswer = (
  path: string,
  url: URL,
  cookie: string | undefined,
) => Promise<BrowserAnswer | undefined>;

/** The legs of logins in progress, across replicas. */
export interface LoginRelay {
  /** `key` (a flow id or a `state`) belongs to this replica for `ttlMs`. */
  claim(key: string, ttlMs: number): Promise<void>;
  /** The owner's answer to a leg another replica owns; undefined to answer it here. */
  forward(path: string, url: URL, cookie: string | undefined): Promise<BrowserAnswer | undefined>;
  /** Answers the legs other replicas hand to this one with `local`. */
  serve(local: LocalAnswer): void;
}

interface Leg {
  readonly id: string;
  readonly from: string;
  readonly path: string;
  readonly url: string;
  readonly cookie?: string;
}

/** The key a leg carries: the link's flow id, else its `state`. */
function keyOf(path: string, url: URL): string | undefined {
  const key = url.searchParams.get(path === LOGIN_START_PATH ? 'flow' : 'state');
  return key === null || key === '' ? undefined : key;
}

/** @example const relay = createLoginRelay({ store, self, logger }); */
export function createLoginRelay(options: {
  readonly store: SharedStore;
  readonly self: string;
  readonly logger: Logger;
}): LoginRelay {
  const { store, self, logger } = options;
  const waiting = new Map<string, (answer: BrowserAnswer) => void>();
  let answers: Promise<void> | undefined;

  const page = (status: number, text: string): BrowserAnswer => ({ status, page: PAGE(text) });

  function answered(message: string): void {
    // Another replica's answer, checked before it is served to a browser (not one of ours: none).
    const heard = parseBoundedJson(message, RECORD_BOUNDS) as {
      id?: unknown;
      answer?: Partial<BrowserAnswer>;
    };
    const answer = heard?.answer;
    if (typeof heard?.id !== 'string' || typeof answer !== 'object' || answer === null) return;
    if (typeof answer.status !== 'number' || (answer.page !== undefined && typeof answer.page !== 'string'))
      return;
    waiting.get(heard.id)?.(answer as BrowserAnswer);
  }

  return {
    async claim(key, ttlMs) {
      try {
        await store.put(KEYS.loginOwner(key), self, { ttlMs });
      } catch (error) {
        logger.warn(
          { store: store.where, error: error instanceof Error ? error.message : String(error) },
          'store unreachable: this login completes only if the browser comes back to this replica',
        );
      }
    },
    async forward(path, url, cookie) {
      const key = keyOf(path, url);
      if (key === undefined) return undefined;
      const owner = await store.get(KEYS.loginOwner(key)).catch(() => undefined);
      if (owner === undefined || owner === self) return undefined;
      const leg: Leg = {
        id: randomUUID(),
        from: self,
        path,
        url: url.href,
        ...(cookie !== undefined ? { cookie } : {}),
      };
      const answer = new Promise<BrowserAnswer>((resolve) => waiting.set(leg.id, resolve));
      try {
        await (answers ??= store.subscribe(CHANNELS.loginAnswers(self), answered));
        if ((await store.publish(CHANNELS.loginLegs(owner), JSON.stringify(leg))) === 0)
          return page(
            502,
            'This login was started on a replica of the gateway that is no longer running. Run your call again to start a new login.',
          );
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ANSWER_MS, undefined)));
        const got = await Promise.race([answer, late]).finally(() => clearTimeout(timer));
        logger.info({ path, owner }, 'login leg answered by the replica that owns it');
        return got ?? page(504, 'The replica of the gateway that owns this login did not answer in time.');
      } catch (error) {
        answers = undefined;
        logger.warn(
          { store: store.where, error: error instanceof Error ? error.message : String(error) },
          'store unreachable: a login leg for another replica cannot reach it',
        );
        return page(
          503,
          'The gateway’s shared store is unreachable, and this login belongs to another replica.',
        );
      } finally {
        waiting.delete(leg.id);
      }
    },
    serve(local) {
      const heard = (message: string): void => {
        const leg = parseBoundedJson(message, RECORD_BOUNDS) as Partial<Leg> | undefined;
        if (
          typeof leg !== 'object' ||
          leg === null ||
          typeof leg.id !== 'string' ||
          typeof leg.from !== 'string' ||
          typeof leg.path !== 'string' ||
          typeof leg.url !== 'string' ||
          !URL.canParse(leg.url) ||
          (leg.cookie !== undefined && typeof leg.cookie !== 'string')
        )
          return;
        const { id, from } = leg;
        void local(leg.path, new URL(leg.url), leg.cookie)
          .then((answer) => answer ?? page(404, 'Not found.'))
          .catch(() => page(500, 'The login could not go on.'))
          .then((answer) => store.publish(CHANNELS.loginAnswers(from), JSON.stringify({ id, answer })))
          .catch(() => undefined);
      };
      store
        .subscribe(CHANNELS.loginLegs(self), heard)
        .catch((error: unknown) =>
          logger.warn(
            { store: store.where, error: error instanceof Error ? error.message : String(error) },
            'store unreachable: logins started here complete only if their browser comes back here',
          ),
        );
    },
  };
}
