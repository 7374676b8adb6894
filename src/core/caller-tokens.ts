/**
 * D8: the token each caller last presented to the gateway, by principal, for the downstream
 * servers behind `auth: token_exchange`: a principal's copy of such a server exchanges it at the
 * server's authorization server for a token of its own (RFC 8693). Kept in memory only, until it
 * expires; never logged, never sent anywhere but as the exchange's `subject_token` (the token is
 * never passed through to a downstream: I2).
 */

/** One caller's token and when it stops being good (seconds since the epoch; none: no limit known). */
interface Held {
  readonly token: string;
  readonly expiresAt: number | undefined;
}

/** At most this many principals' tokens are held; the one seen longest ago goes first. */
const MAX_HELD = 10_000;

/**
 * @example
 * const tokens = new CallerTokens();
 * tokens.remember('https://idp.example#alice', token, exp);
 * tokens.current('https://idp.example#alice', nowMs); // the token, until exp
 */
export class CallerTokens {
  readonly #held = new Map<string, Held>();

  /** `principal` presented `token` now. */
  remember(principal: string, token: string, expiresAt: number | undefined): void {
    const before = this.#held.get(principal);
    if (before?.token === token) return;
    this.#held.delete(principal);
    this.#held.set(principal, { token, expiresAt });
    if (this.#held.size > MAX_HELD) this.#held.delete(this.#held.keys().next().value as string);
  }

  /** `principal`'s token at `nowMs`, if it has one that has not expired. */
  current(principal: string, nowMs: number): string | undefined {
    const held = this.#held.get(principal);
    if (held === undefined) return undefined;
    if (held.expiresAt !== undefined && held.expiresAt * 1000 <= nowMs) {
      this.#held.delete(principal);
      return undefined;
    }
    return held.token;
  }
}
