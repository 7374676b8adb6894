/**
 * Requests from a downstream to its client (Q1–Q3): the words both sides of the gateway share.
 *
 * A downstream asks its client for input (elicitation, sampling, roots) in one of two ways: a
 * 2025 server pushes a JSON-RPC request while its call runs, a 2026-07-28 server answers the
 * call `input_required` and expects a retry. Either way the question belongs to the upstream
 * client whose call caused it (the {@link Caller}), and reaches it as an input round of that
 * call. These types carry no behaviour; `downstream/` routes, `upstream/` runs the rounds.
 */

/** One request a downstream sends to its client, as the host will receive it. */
export interface ClientAsk {
  /** `elicitation/create`, `sampling/createMessage` or `roots/list`. */
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** The client capabilities a host declared, as far as the gateway reads them. */
export interface HostCapabilities {
  readonly elicitation?: { readonly form?: object; readonly url?: object };
  readonly sampling?: object;
  readonly roots?: object;
  /** X5: the extensions it declared (the gateway reads `io.modelcontextprotocol/tasks`). */
  readonly extensions?: Readonly<Record<string, object>>;
}

/** The upstream client behind one call: who answers what the call makes its server ask (Q1). */
export interface Caller {
  /**
   * One upstream client: calls with the same key come from it (a 2025 session, a stdio
   * connection; a 2026-07-28 HTTP request is its own client).
   */
  readonly key: object;
  /** What its host declared; undefined: nothing (the CLI, an unknown host). */
  readonly capabilities: HostCapabilities | undefined;
  /**
   * Asks the host, as an input round of the call (Q3). Resolves with the host's answer to this
   * one request; rejects when the round cannot be run (no answer in time, the call ended).
   */
  ask(request: ClientAsk): Promise<Record<string, unknown>>;
  /**
   * X6: a 2025 host, for which the Tasks extension is not defined: a 2026 server's task made of
   * its call is run to its end by the gateway (downstream/task-driver.ts).
   */
  readonly runsTasks?: boolean;
}

/** A 2026-07-28 downstream's `input_required` answer to a call, to relay to the host (Q3). */
export interface InputRound {
  readonly kind: 'input_required';
  /** The downstream's requests, by its own keys, verbatim. */
  readonly inputRequests: Record<string, unknown>;
  /** The downstream's opaque state, echoed back on the retry. */
  readonly requestState?: string;
  readonly server: string;
  readonly tool: string;
}

/** The retry of a relayed round: the host's answers and the downstream's own state (Q3). */
export interface InputReply {
  readonly inputResponses: Record<string, unknown>;
  readonly requestState?: string;
}

/** Narrows a call's outcome to an {@link InputRound}. */
export function isInputRound(value: unknown): value is InputRound {
  return (value as { kind?: unknown } | null)?.kind === 'input_required';
}

/**
 * Whether a host with `capabilities` can answer `ask` (Q2): URL elicitation needs
 * `elicitation.url`; a form needs `elicitation.form`, or an empty `elicitation` (the 2025
 * spelling of form only).
 */
export function hostCanAnswer(capabilities: HostCapabilities | undefined, ask: ClientAsk): boolean {
  switch (ask.method) {
    case 'elicitation/create': {
      const elicitation = capabilities?.elicitation;
      if (elicitation === undefined) return false;
      if (ask.params['mode'] === 'url') return elicitation.url !== undefined;
      return elicitation.form !== undefined || elicitation.url === undefined;
    }
    case 'sampling/createMessage':
      return capabilities?.sampling !== undefined;
    case 'roots/list':
      return capabilities?.roots !== undefined;
    default:
      return false;
  }
}
